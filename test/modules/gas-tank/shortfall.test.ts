import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createWalletClient, http as viemHttp, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { walletFactoryAbi } from "../../../abis/WalletFactory.js";
import { viemChain } from "../../../chains/clients.js";
import { creditConfirmedDeposits, gasTankBalance } from "../../../modules/gas-tank/index.js";
import { settlerAccount } from "../../../modules/settlement/index.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitIndexed, stepUntil } from "../../helpers/chain.js";
import { asDeployer } from "../../helpers/deployer-lock.js";
import { paymentKit, type Shop } from "../../helpers/payment-kit.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The Gas Tank when it runs short, and when a sweep it paid for reverts, on the real stack. Detection and
// settlement are driven pass by pass (no background processors), so every state in between can be looked at.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;
/** The settlement fee of a Gas Tank payment on the test chain: 0.10 USD processing, no gas fee, platform fee waived. */
const FEE = 100_000n;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false, env: { GAS_TANK_CONFIRMATIONS: "1" } });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const pool = () => svc.deps.db.pool;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const { shop, create, row } = paymentKit(() => svc, CHAIN);

async function statuses(ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await row(id)).status));
}
const indexedPast = (block: bigint) => waitIndexed(svc.deps.db, CHAIN, block);
const until = stepUntil;
const settle = () => settleChain(svc.deps, chain());

/** Sends `micros` USDT to the merchant's Gas Tank address and credits it (two credit passes: counted once). */
async function topUp(m: Shop, micros: bigint) {
  const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(bal.status, JSON.stringify(bal.body)).toBe(200);
  const address = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN).address as Address;
  const before = await gasTankBalance(pool(), m.id);
  await indexedPast((await h().pay("USDT", address, micros)).blockNumber);
  await until(
    "Gas Tank credited",
    () => creditConfirmedDeposits(svc.deps),
    async () => (await gasTankBalance(pool(), m.id)) === before + micros,
  );
  await creditConfirmedDeposits(svc.deps);
  expect(await gasTankBalance(pool(), m.id)).toBe(before + micros);
}
/** The merchant's ledger, oldest first, and the lowest its running balance has ever been. */
async function ledger(m: Shop) {
  const { rows } = await pool().query(
    `SELECT kind, amount_micros, payment_id, sum(amount_micros) OVER (ORDER BY id) AS running FROM ledger_entries WHERE merchant_id = $1 ORDER BY id`,
    [m.id],
  );
  return {
    entries: rows.map((r) => [r.kind, r.amount_micros, r.payment_id]),
    lowest: rows.reduce((a, r) => (BigInt(r.running) < a ? BigInt(r.running) : a), 0n),
  };
}

async function setSettler(allowed: boolean) {
  const owner = createWalletClient({ chain: viemChain(chain()), transport: viemHttp(chain().rpcUrl), account: LOCAL_ROLES.deployer });
  await asDeployer(svc.deps.db, async () => {
    const hash = await owner.writeContract({
      address: chain().factory!,
      abi: walletFactoryAbi,
      functionName: "setSettler",
      args: [settlerAccount(svc.deps).address, allowed],
    });
    await h().wait(hash);
  });
}

describe("Gas Tank shortfall", () => {
  it("funded for 2 of 3 payments: 2 complete, 1 waits with the exact top-up, the balance never goes below 0", async () => {
    const m = await shop("two of three");
    await topUp(m, 250_000n);
    const ids = [await create(m, { merchant: payout(), amount: "1" }), await create(m, { merchant: payout(), amount: "2" })];
    ids.push(await create(m, { merchant: payout(), amount: "3" }));
    for (const id of ids) expect((await row(id)).gas_tank_fee_micros).toBe(FEE.toString());
    // Paid one after the other: settled in that order (oldest paid first), so the third is the one left short.
    for (const [i, id] of ids.entries()) {
      await indexedPast((await h().pay("USDT", (await row(id)).recipient_address, BigInt(i + 1) * 1_000_000n)).blockNumber);
      await until(
        `payment ${i + 1} paid`,
        () => detector().run(svc.deps),
        async () => (await row(id)).status === "paid",
      );
    }
    await until("two settled", settle, async () => (await statuses(ids)).join() === "completed,completed,awaiting_gas");

    const { rows: waiting } = await pool().query(
      `SELECT payload FROM webhook_deliveries WHERE payment_id = $1 AND event = 'payment.awaiting_gas'`,
      [ids[2]],
    );
    expect(waiting).toHaveLength(1);
    expect(waiting[0].payload).toMatchObject({ estimatedFeeUsdt: "0.1", gasTankBalance: "0.05", requiredTopUp: "0.05" });
    expect(await gasTankBalance(pool(), m.id)).toBe(50_000n);
    const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
    expect(bal.body.balance).toBe("0.050000");
    // More passes with the tank still short change nothing: no second debit, no second event.
    for (let i = 0; i < 3; i++) await settle();
    expect((await ledger(m)).entries).toEqual([
      ["gas_tank_deposit", "250000", null],
      ["settlement_fee", "-100000", ids[0]],
      ["settlement_fee", "-100000", ids[1]],
    ]);

    // The exact top-up is enough.
    await topUp(m, 50_000n);
    await until("third settled", settle, async () => (await row(ids[2]!)).status === "completed");
    const after = await ledger(m);
    expect(after.entries).toEqual([
      ["gas_tank_deposit", "250000", null],
      ["settlement_fee", "-100000", ids[0]],
      ["settlement_fee", "-100000", ids[1]],
      ["gas_tank_deposit", "50000", null],
      ["settlement_fee", "-100000", ids[2]],
    ]);
    expect(after.lowest).toBe(0n);
    expect(await gasTankBalance(pool(), m.id)).toBe(0n);
    const { rows: events } = await pool().query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE payment_id = ANY($1::uuid[]) AND event = 'payment.awaiting_gas'`,
      [ids],
    );
    expect(events[0].n).toBe(1);
  });

  it("a sweep that reverts on-chain fails the payment and gives its fee back to the micro", async () => {
    const m = await shop("reverted");
    await topUp(m, 300_000n);
    const to = payout();
    const id = await create(m, { merchant: to, amount: "1.25" });
    const wallet = (await row(id)).recipient_address as Address;
    await indexedPast((await h().pay("USDT", wallet, 1_250_000n)).blockNumber);
    await until(
      "paid",
      () => detector().run(svc.deps),
      async () => (await row(id)).status === "paid",
    );

    // The sweep is signed and stored, the fee debited, but the process stops before broadcasting it.
    const stop = new Error("stopped before broadcast");
    await expect(
      settleChain(svc.deps, chain(), {
        beforeBroadcast: () => {
          throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect((await row(id)).status).toBe("deploying_wallet");
    expect(await gasTankBalance(pool(), m.id)).toBe(300_000n - FEE);
    const { rows: signed } = await pool().query(`SELECT status, tx_hash FROM settlements WHERE $1 = ANY(payment_ids)`, [id]);
    expect(signed).toEqual([{ status: "signed", tx_hash: expect.stringMatching(/^0x/) }]);

    // Meanwhile the factory stops accepting this settler: the stored bytes, sent on the next pass, revert.
    await setSettler(false);
    try {
      await until("payment failed", settle, async () => (await row(id)).status === "failed");
    } finally {
      await setSettler(true);
    }
    const receipt = await h().pub.getTransactionReceipt({ hash: signed[0].tx_hash });
    expect(receipt.status).toBe("reverted");
    const { rows: s } = await pool().query(`SELECT status, tx_hash FROM settlements WHERE $1 = ANY(payment_ids)`, [id]);
    expect(s).toEqual([{ status: "reverted", tx_hash: signed[0].tx_hash }]);
    expect(await gasTankBalance(pool(), m.id)).toBe(300_000n);
    // Passes after the failure neither refund again nor sweep.
    for (let i = 0; i < 2; i++) await settle();
    const after = await ledger(m);
    expect(after.entries).toEqual([
      ["gas_tank_deposit", "300000", null],
      ["settlement_fee", "-100000", id],
      ["settlement_refund", "100000", id],
    ]);
    expect(after.lowest).toBe(0n);
    const failed = await row(id);
    expect(failed.failure_reason).toBe(`sweep transaction ${signed[0].tx_hash} reverted`);
    const { rows: outbox } = await pool().query(`SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at`, [
      id,
    ]);
    expect(outbox.map((o) => o.event)).toEqual(["payment.failed"]);
    expect(outbox[0].payload).toMatchObject({ status: "failed", reason: failed.failure_reason });
    // The funds stay in the payment's wallet, and the merchant gets nothing swept.
    expect(await h().balanceOf("USDT", wallet)).toBe(1_250_000n);
    expect(await h().balanceOf("USDT", to)).toBe(0n);
  });
});
