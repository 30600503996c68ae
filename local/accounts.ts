import { privateKeyToAccount } from "viem/accounts";

// Anvil's well-known dev keys (mnemonic "test test ... junk"). Local chains only.
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
] as const;

/**
 * Roles on a local chain: deployer/owner, settler (may trigger sweeps), fee recipient/treasury, payers, and the
 * bridge solver (fills bridge orders and, as the bridge's messenger, relays unlocks and cancels). The last key is
 * the benchmarks' loader (bench/lib/load.ts).
 */
export const LOCAL_ROLES = {
  deployer: privateKeyToAccount(ANVIL_KEYS[0]),
  settler: privateKeyToAccount(ANVIL_KEYS[1]),
  treasury: privateKeyToAccount(ANVIL_KEYS[2]),
  payers: ANVIL_KEYS.slice(3, 8).map((k) => privateKeyToAccount(k)),
  bridgeSolver: privateKeyToAccount(ANVIL_KEYS[8]),
};

/**
 * The keys and addresses of these roles as the service's configuration (local/stack.ts): the settler signs sweeps;
 * token fees and Gas Tank fees arrive at the treasury, which also pays agents' withdrawals, so the wallet that pays
 * agents always holds what they earned.
 */
export function localRoleEnv(): Record<string, string> {
  return {
    SETTLER_PRIVATE_KEY: ANVIL_KEYS[1],
    FEE_RECIPIENT: LOCAL_ROLES.treasury.address,
    TREASURY_ADDRESS: LOCAL_ROLES.treasury.address,
    AGENT_PAYOUT_PRIVATE_KEY: ANVIL_KEYS[2],
  };
}
