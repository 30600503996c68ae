import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { cliSanctionsList, cliSanctionsRelease } from "../../../cli/sanctions.js";
import { creditConfirmedDeposits, gasTankBalance } from "../../../modules/gas-tank/index.js";
import { reserve } from "../../../modules/settlement/index.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, stepUntil, waitIndexed } from "../../helpers/chain.js";
import { paymentKit, type Shop } from "../../helpers/payment-kit.js";
import { flagOnOracle, sanctionsRows } from "../../helpers/sanctions.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// A Gas Tank payment held after its settlement was reserved (docs/sanctions.md, "When, and what happens": a
// `deploying_wallet` payment is screened again just before its sweep is signed): the reservation debited the Gas Tank
// fee; its sender is flagged on the local oracle before the sweep is signed, so `deploying_wallet -> sanctioned`, the
// fee refunded to the micro in the same transaction, nothing signed or swept. Released, it is reserved (and debited)
// again and settles. SANCTIONS_CACHE_TTL_MS=0: the oracle's "clear" from the reservation is not reused before signing.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;
const AMOUNT = 2_000_000n; // 2 USDT
const TANK = 250_000n; // 0.25 USDT in the Gas Tank

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false, env: { GAS_TANK_CONFIRMATIONS: "1", SANCTIONS_CACHE_TTL_MS: "0" } });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const pool = () => svc.deps.db.pool;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const { shop, create, row } = paymentKit(() => svc, CHAIN);
const rows = () => sanctionsRows(svc.deps.db);
const settle = () => settleChain(svc.deps, chain());
const indexedPast = (block: bigint) => waitIndexed(svc.deps.db, CHAIN, block);

/** Sends `micros` USDT to the merchant's Gas Tank address and credits it (two credit passes: counted once). */
async function topUp(m: Shop, micros: bigint) {
  const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(bal.status, JSON.stringify(bal.body)).toBe(200);
  const address = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN).address as Address;
  await indexedPast((await h().pay("USDT", address, micros)).blockNumber);
  await stepUntil(
    "Gas Tank credited",
    () => creditConfirmedDeposits(svc.deps),
    async () => (await gasTankBalance(pool(), m.id)) === micros,
  );
  await creditConfirmedDeposits(svc.deps);
  expect(await gasTankBalance(pool(), m.id)).toBe(micros);
}
async function ledger(m: Shop) {
  const { rows: l } = await pool().query(
    `SELECT kind, amount_micros, payment_id, reference FROM ledger_entries WHERE merchant_id = $1 ORDER BY id`,
    [m.id],
  );
  return l.map((r) => [r.kind, r.amount_micros, r.payment_id, r.reference]);
}
async function tankShown(m: Shop): Promise<string> {
  const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(bal.status, JSON.stringify(bal.body)).toBe(200);
  return bal.body.balance;
}
async function settlementsOf(id: string): Promise<string[]> {
  const { rows: s } = await pool().query(`SELECT status FROM settlements WHERE $1 = ANY(payment_ids) ORDER BY created_at`, [id]);
  return s.map((r) => r.status);
}
async function outbox(id: string) {
  const { rows: d } = await pool().query(`SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, event`, [
    id,
  ]);
  return d as { event: string; payload: Record<string, any> }[];
}
async function moves(id: string) {
  const { rows: e } = await pool().query(`SELECT from_status, to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
  return e;
}

describe("a Gas Tank payment whose sender is flagged after its settlement was reserved", () => {
  it("deploying_wallet -> sanctioned: the Gas Tank fee is refunded to the micro, nothing is swept; released, it is debited again and settles", async () => {
    const m = await shop("gas tank, flagged before signing");
    await topUp(m, TANK);
    expect(await tankShown(m)).toBe("0.250000");
    const to = payout();
    const id = await create(m, { merchant: to, amount: "2" });
    const p = await row(id);
    expect(p.gasless).toBe(false);
    expect(p.payer_covers_fee).toBe(false);
    // 0.10 USD processing fee, no gas fee on the test chain, platform fee waived by the promotion (as FEE in
    // test/modules/gas-tank/shortfall.test.ts).
    const fee = BigInt(p.gas_tank_fee_micros);
    expect(fee).toBe(100_000n);
    expect(BigInt(p.due_units)).toBe(AMOUNT);
    const wallet = p.recipient_address as Address;
    const payer = await h().newPayer();
    await indexedPast((await h().pay("USDT", wallet, AMOUNT, payer)).blockNumber);
    await stepUntil(
      "paid",
      () => detector().run(svc.deps),
      async () => (await row(id)).status === "paid",
    );

    // Reserved (screened clean: the payer is not flagged yet), the fee debited; the sweep is not signed yet.
    await reserve(svc.deps, chain());
    expect((await row(id)).status).toBe("deploying_wallet");
    expect(await ledger(m)).toEqual([
      ["gas_tank_deposit", TANK.toString(), null, expect.stringMatching(/^deposit:/)],
      ["settlement_fee", (-fee).toString(), id, `fee:${id}`],
    ]);
    expect(await gasTankBalance(pool(), m.id)).toBe(TANK - fee);
    expect(await settlementsOf(id)).toEqual([]);

    // The oracle's owner flags the payer; the next pass screens the payment again just before signing.
    await flagOnOracle(svc.deps.db, chain(), payer.address);
    await settle();
    expect((await row(id)).status).toBe("sanctioned");
    expect((await moves(id)).slice(-2)).toEqual([
      { from_status: "paid", to_status: "deploying_wallet" },
      { from_status: "deploying_wallet", to_status: "sanctioned" },
    ]);
    expect(await rows().holds("payment_id", id)).toEqual([
      {
        subject: "payment",
        address: payer.address.toLowerCase(),
        source: `oracle:${chain().sanctionsOracle!.toLowerCase()}`,
        from_status: "deploying_wallet",
        status: "held",
      },
    ]);
    // Debit, then its refund: the same micros, the refund's reference paired with the fee's.
    const refunded = [
      ["gas_tank_deposit", TANK.toString(), null, expect.stringMatching(/^deposit:/)],
      ["settlement_fee", (-fee).toString(), id, `fee:${id}`],
      ["settlement_refund", fee.toString(), id, `refund:${id}`],
    ];
    expect(await ledger(m)).toEqual(refunded);
    expect(await gasTankBalance(pool(), m.id)).toBe(TANK);
    expect(await tankShown(m)).toBe("0.250000");
    const sanctioned = (await outbox(id)).filter((d) => d.event === "payment.sanctioned");
    expect(sanctioned).toHaveLength(1);
    expect(sanctioned[0]!.payload).toMatchObject({
      event: "payment.sanctioned",
      paymentId: id,
      status: "sanctioned",
      recipientAddress: wallet,
      sanctionedAddress: getAddress(payer.address),
      source: "oracle",
    });
    expect((await cliSanctionsList(svc.deps.db)).filter((x) => x.paymentId === id)).toEqual([
      expect.objectContaining({
        kind: "hold",
        status: "held",
        subjectStatus: "sanctioned",
        amountUnits: AMOUNT.toString(),
        merchantId: m.id,
      }),
    ]);

    // More passes: no second refund, nothing signed, the funds stay at the deposit address.
    for (let i = 0; i < 3; i++) await settle();
    expect((await row(id)).status).toBe("sanctioned");
    expect(await ledger(m)).toEqual(refunded);
    expect(await settlementsOf(id)).toEqual([]);
    expect(await h().balanceOf("USDT", wallet)).toBe(AMOUNT);
    expect(await h().balanceOf("USDT", to)).toBe(0n);

    // Released (held from deploying_wallet: back to paid), it is reserved again, debited once more, and settles; the
    // released payer is not screened again although the oracle still flags it.
    const released = await cliSanctionsRelease(svc.deps.db, { paymentId: id }, { reason: "reviewed", operator: "ops" }, svc.clock.now);
    expect(released).toMatchObject({ action: "release", paymentId: id, status: "paid" });
    expect(await rows().actions("payment_id", id)).toEqual([
      { action: "release", actor: "ops", reason: "reviewed", subject_from: "sanctioned", subject_to: "paid" },
    ]);
    await stepUntil("completed", settle, async () => (await row(id)).status === "completed");
    expect(await ledger(m)).toEqual([...refunded, ["settlement_fee", (-fee).toString(), id, `fee:${id}:2`]]);
    expect(await gasTankBalance(pool(), m.id)).toBe(TANK - fee);
    // Gas Tank mode: the sweep takes no fee from the payment, the merchant receives every unit.
    expect(await h().balanceOf("USDT", to)).toBe(AMOUNT);
    expect(await h().balanceOf("USDT", wallet)).toBe(0n);
    expect(await settlementsOf(id)).toEqual(["mined"]);
    expect((await outbox(id)).map((d) => d.event)).toEqual(["payment.sanctioned", "payment.completed"]);
  });
});
