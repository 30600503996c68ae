import { randomUUID } from "node:crypto";
import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gasBurnerTokenAbi, gasBurnerTokenBytecode } from "../../../abis/GasBurnerToken.js";
import { sweepGasCap } from "../../../chains/gas-caps.js";
import { txSender } from "../../../chains/tx-sender.js";
import { settlerAccount } from "../../../modules/settlement/index.js";
import { sweepVaultChain } from "../../../modules/vault/index.js";
import { vaultScreening } from "../../../flows/vault-screening.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// A business enables its own token in its Vault, a token whose `transfer` burns gas, and
// deposits it to a user's address; the sweeper paid that gas on every sweep (15.7 M gas each, seen). A token outside
// the registry is now swept only at the merchant's cost (its Gas Tank is charged the sweep's gas cap, refused when it
// cannot pay), never above the cap, and a sweep refused at the cap is not retried by itself.

vi.setConfig({ testTimeout: 180_000 });
const CHAIN = 777177;
const WAIT = { timeout: 90_000 };
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { VAULT_CONFIRMATIONS: "2" } });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const settler = () => settlerAccount(svc.deps).address;
const cap = () => sweepGasCap(1, svc.deps.config.SWEEP_GAS_CAP_PER_WALLET);
const tank = async (merchantId: string) =>
  BigInt(
    (
      await svc.deps.db.pool.query(`SELECT COALESCE(sum(amount_micros), 0)::text AS b FROM ledger_entries WHERE merchant_id = $1`, [
        merchantId,
      ])
    ).rows[0].b,
  );
const fundTank = (merchantId: string, micros: bigint) =>
  svc.deps.db.pool.query(`INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', $2, $3)`, [
    merchantId,
    micros.toString(),
    `test-credit:${randomUUID()}`,
  ]);
const depositOf = async (merchantId: string) =>
  (
    await svc.deps.db.pool.query(
      `SELECT id, status, last_error, attempts, next_attempt_at, sweep_id FROM vault_deposits WHERE merchant_id = $1 ORDER BY created_at`,
      [merchantId],
    )
  ).rows[0];
const worst: { burn: bigint; gas: bigint }[] = [];

/** A merchant whose Vault accepts a fresh GasBurnerToken (`burn` gas a transfer); one user's deposit of it, confirmed. */
async function burnerDeposit(burn: bigint, name: string) {
  const h = chainHelpers(chain());
  const owner = await h.newPayer();
  const w = h.walletOf(owner);
  const deployed = await h.wait(await w.deployContract({ abi: gasBurnerTokenAbi, bytecode: gasBurnerTokenBytecode, args: [burn] }));
  const burner = getAddress(deployed.contractAddress!) as Address;
  const m = await svc.newMerchant({ name });
  const created = await svc.http("POST", "/vault/v1/config", {
    apiKey: m.apiKey,
    body: {
      businessName: name,
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
  await h.wait(await w.writeContract({ address: burner, abi: gasBurnerTokenAbi, functionName: "mint", args: [owner.address, 10n ** 18n] }));
  return {
    h,
    m,
    // The deposit itself (the attacker's own transfer) burns the gas too: that is the attacker's gas, not ours.
    deposit: async () =>
      h.wait(
        await w.writeContract({
          address: burner,
          abi: gasBurnerTokenAbi,
          functionName: "transfer",
          args: [address, 10n ** 18n],
          gas: burn + 1_000_000n,
        }),
      ),
  };
}

describe("a Vault token outside the registry whose transfer burns gas", () => {
  // Without a fee the sweep makes one transfer (15 M: above the cap); with one, two (30 M: no block takes it, the
  // estimate reverts). Either way: no gas spent, a clear reason, and no retry.
  it.each([
    { fee: "no fee", feeBps: 0, reason: `sweep refused: it would cost more gas than a sweep may (gas estimate` },
    { fee: "a 25 bps fee", feeBps: 25, reason: "sweep cannot execute" },
  ])("burning 15 M gas, $fee: refused with the reason, no settler gas, not retried", async ({ feeBps, reason }) => {
    const { h, m, deposit } = await burnerDeposit(15_000_000n, `Burner Vault ${feeBps}`);
    await svc.deps.db.pool.query(`UPDATE vault_configs SET fee_bps = $2 WHERE merchant_id = $1`, [m.id, feeBps]);
    await fundTank(m.id, 50_000_000n); // the tank can pay: the token is what refuses it
    const nonceBefore = await h.pub.getTransactionCount({ address: settler() });
    await deposit();

    const failed = await waitFor(
      async () => {
        const d = await depositOf(m.id);
        return d?.status === "failed" ? d : undefined;
      },
      { ...WAIT, what: "the burner deposit to fail", state: () => depositOf(m.id) },
    );
    expect(failed.last_error).toContain(reason);
    if (feeBps === 0) expect(failed.last_error).toContain(`exceeds this operation's cap of ${cap()}`);
    expect(failed.last_error).toContain("not retried until another deposit of it");
    expect(failed.next_attempt_at).toBeNull();

    // Hours later, pass after pass: no retry (no new attempt, no transaction), nothing charged.
    svc.clock.advance(2 * 60 * 60_000);
    const sender = txSender({ db: svc.deps.db, chain: chain(), client: h.pub, account: settlerAccount(svc.deps) });
    for (let i = 0; i < 3; i++) await sweepVaultChain(svc.deps, chain(), sender, vaultScreening);
    const after = await depositOf(m.id);
    expect(after).toMatchObject({ status: "failed", attempts: 1, sweep_id: null });
    const { rows: sweeps } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM vault_sweeps WHERE $1 = ANY(deposit_ids)`, [
      failed.id,
    ]);
    expect(sweeps[0].n).toBe(0);
    expect(await h.pub.getTransactionCount({ address: settler() })).toBe(nonceBefore);
    expect(await tank(m.id)).toBe(50_000_000n);
    worst.push({ burn: 15_000_000n, gas: 0n });
  });

  it("within the cap: swept only once the merchant's Gas Tank pays its gas, and never above the cap", async () => {
    const { h, m, deposit } = await burnerDeposit(60_000n, "Small Burner Vault");
    const nonceBefore = await h.pub.getTransactionCount({ address: settler() });
    await deposit();

    // An empty tank: refused before anything is estimated or signed.
    const short = await waitFor(
      async () => {
        const d = await depositOf(m.id);
        return d?.status === "failed" ? d : undefined;
      },
      { ...WAIT, what: "the deposit to be refused for the empty tank", state: () => depositOf(m.id) },
    );
    expect(short.last_error).toContain("Gas Tank balance insufficient");
    expect(await h.pub.getTransactionCount({ address: settler() })).toBe(nonceBefore);

    // Funded, and the backoff over: swept, the tank charged the gas of the sweep's whole cap.
    await fundTank(m.id, 50_000_000n);
    svc.clock.advance(60_000);
    const done = await waitFor(
      async () => {
        const d = await depositOf(m.id);
        return d?.status === "completed" ? d : undefined;
      },
      { ...WAIT, what: "the funded deposit to be swept", state: () => depositOf(m.id) },
    );
    const { rows } = await svc.deps.db.pool.query(`SELECT tx_hash FROM vault_sweeps WHERE id = $1`, [done.sweep_id]);
    const receipt = await h.pub.getTransactionReceipt({ hash: rows[0].tx_hash });
    const tx = await h.pub.getTransaction({ hash: rows[0].tx_hash });
    expect(tx.gas).toBeLessThanOrEqual(cap());
    expect(receipt.gasUsed).toBeLessThanOrEqual(cap());
    const { rows: fees } = await svc.deps.db.pool.query(
      `SELECT kind, amount_micros, reference FROM ledger_entries WHERE merchant_id = $1 AND kind <> 'adjustment'`,
      [m.id],
    );
    expect(fees).toHaveLength(1);
    expect(fees[0]).toMatchObject({ kind: "vault_sweep_fee", reference: `vault-sweep-fee:${done.sweep_id}` });
    const charged = -BigInt(fees[0].amount_micros);
    expect(charged).toBeGreaterThan(0n);
    expect(await tank(m.id)).toBe(50_000_000n - charged);
    worst.push({ burn: 60_000n, gas: receipt.gasUsed });

    const top = worst.reduce((a, b) => (b.gas > a.gas ? b : a));
    console.log(
      `hostile vault tokens: ${worst.map((w) => `burn ${w.burn} -> settler gas ${w.gas}`).join("; ")}; ` +
        `worst gas per sweep ${top.gas} (signed limit ${tx.gas}, cap ${cap()}), charged to the merchant's Gas Tank: ${charged} micros`,
    );
  });
});
