import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gasBurnerTokenAbi, gasBurnerTokenBytecode } from "../../abis/GasBurnerToken.js";
import { sweepGasCap } from "../../chains/gas-caps.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { startTestService, type TestService } from "../helpers/service.js";

// A business enables its own token in its Vault, a token whose `transfer` burns 8 M gas, and deposits it to a
// user's address: the sweeper would pay that gas on every sweep. The sweep's gas cap (chains/gas-caps.ts) refuses
// to sign it: the deposit fails with the reason, the settler spends no gas, and retries (after the backoff) stay
// estimates, never transactions.

vi.setConfig({ testTimeout: 180_000 });
const CHAIN = 777177;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { VAULT_CONFIRMATIONS: "2" } });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;

describe("a Vault token whose transfer burns gas", () => {
  it("is never swept above the cap: the deposit fails with the reason, the settler spends nothing", async () => {
    const h = chainHelpers(chain());
    const owner = await h.newPayer();
    const w = h.walletOf(owner);
    const deployed = await h.wait(await w.deployContract({ abi: gasBurnerTokenAbi, bytecode: gasBurnerTokenBytecode, args: [8_000_000n] }));
    const burner = getAddress(deployed.contractAddress!) as Address;

    const m = await svc.newMerchant({ name: "Burner Vault" });
    const created = await svc.http("POST", "/vault/v1/config", {
      apiKey: m.apiKey,
      body: {
        businessName: "Burner Vault",
        walletAddress: privateKeyToAccount(generatePrivateKey()).address,
        enabledTokens: [{ chainId: CHAIN, token: burner, tokenSymbol: "BURN" }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = await svc.http("POST", "/vault/v1/users", {
      apiKey: m.apiKey,
      body: { externalUserId: "mallory", chainId: CHAIN, tokenAddress: burner },
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const address = user.body.data.depositAddress as Address;

    const settler = privateKeyToAccount(svc.deps.env.SETTLER_PRIVATE_KEY as `0x${string}`).address;
    const nonceBefore = await h.pub.getTransactionCount({ address: settler });
    await h.wait(
      await w.writeContract({ address: burner, abi: gasBurnerTokenAbi, functionName: "mint", args: [owner.address, 10n ** 18n] }),
    );
    // The deposit itself (the attacker's own transfer) burns the 8 M: that is the attacker's gas, not ours.
    await h.wait(
      await w.writeContract({
        address: burner,
        abi: gasBurnerTokenAbi,
        functionName: "transfer",
        args: [address, 10n ** 18n],
        gas: 10_000_000n,
      }),
    );

    const failed = await waitFor(
      async () => {
        const { rows } = await svc.deps.db.pool.query(`SELECT status, last_error, attempts FROM vault_deposits WHERE merchant_id = $1`, [
          m.id,
        ]);
        return rows[0]?.status === "failed" ? rows[0] : undefined;
      },
      { timeout: 120_000, what: "the burner deposit to fail" },
    );
    const cap = sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET);
    expect(failed.last_error).toContain(`exceeds this operation's cap of ${cap}`);
    const { rows: sweeps } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM vault_sweeps`);
    expect(sweeps[0].n).toBe(0);
    const spent = (await h.pub.getTransactionCount({ address: settler })) - nonceBefore;
    console.log(
      `hostile vault token (burns 8,000,000 gas a transfer): settler transactions 0 of ${failed.attempts} attempt(s), gas spent 0; cap per sweep ${cap}`,
    );
    expect(spent).toBe(0);
  });
});
