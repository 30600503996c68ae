import type { AppDeps } from "../../core/deps.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { computeWalletAddress, gasTankSalt } from "../../chains/deposit-address.js";
import { withTransaction } from "../../db/client.js";
import { registerAddress } from "../addresses/index.js";

/** Payout of every Gas Tank deposit wallet: the service treasury. */
export function treasuryAddress(deps: AppDeps): `0x${string}` {
  const t = deps.config.TREASURY_ADDRESS ?? deps.config.FEE_RECIPIENT;
  if (!t) throw new Error("TREASURY_ADDRESS is not set");
  return t as `0x${string}`;
}

/** The merchant's Gas Tank deposit address on a chain (recorded so deposits can be matched in SQL). */
export async function ensureGasTankAddress(deps: AppDeps, chain: ActiveChain, merchantId: string): Promise<string> {
  const salt = gasTankSalt(merchantId);
  const address = computeWalletAddress({
    factory: chain.factory!,
    implementation: chain.implementation,
    salt,
    payout: treasuryAddress(deps),
  });
  // Registered for the indexer in the same transaction, before the address is returned.
  await withTransaction(deps.db, async (client) => {
    await client.query(
      `INSERT INTO gas_tank_addresses (chain_id, address, merchant_id, salt) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
      [chain.chainId, address.toLowerCase(), merchantId, salt],
    );
    await registerAddress(client, { chainId: chain.chainId, address, kind: "gas_tank", ownerId: merchantId, merchantId });
  });
  return address;
}
