import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, zeroAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { cliSanctionsList, cliSanctionsRelease } from "../../../cli/sanctions.js";
import { logger } from "../../../core/log.js";
import type { PaymentRow } from "../../../modules/payments/index.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, stepUntil } from "../../helpers/chain.js";
import { paymentKit } from "../../helpers/payment-kit.js";
import { sanctionsRows, sendNativeThroughContract } from "../../helpers/sanctions.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Native coin whose sender screening cannot identify (docs/sanctions.md, "Unidentified native senders"): the payer
// sends the coin through a contract (Multicall3's aggregate3Value forwards it with an internal call), so no
// transaction in the block is addressed to the deposit address. Under SANCTIONS_FAIL_MODE=closed the payment stays
// `paid`, unswept, waits with a backoff (modules/sanctions/waits.ts: 30 s after the first try, doubling up to 15
// minutes), is listed by `sanctions list`, and settles once the operator releases it; under `open` it settles with a
// warning. Detection and settlement are driven pass by pass (no background processors); the app clock is moved to
// pass a wait.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 137;
const WAIT_LOG = "payment senders not identified; payments wait for the operator (SANCTIONS_FAIL_MODE=closed; `sanctions list`)";
const OPEN_LOG = "sanctions screening unidentified; settling anyway (SANCTIONS_FAIL_MODE=open)";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const db = () => svc.deps.db;
// `USDT0` is 137's stablecoin (chains/registry.ts); every payment here is in the native coin (token: zero address).
const { shop, create, row } = paymentKit(() => svc, CHAIN, "USDT0");
const rows = () => sanctionsRows(db());
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const settle = () => settleChain(svc.deps, chain());

async function settlementsOf(id: string): Promise<{ status: string }[]> {
  const { rows: s } = await db().pool.query(`SELECT status FROM settlements WHERE $1 = ANY(payment_ids) ORDER BY created_at`, [id]);
  return s;
}
async function outboxEvents(id: string): Promise<string[]> {
  const { rows: d } = await db().pool.query(`SELECT event FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, event`, [id]);
  return d.map((r) => r.event);
}

/** A native-coin payment paid in full through a contract and detected (`paid`), with the reason screening will give. */
async function paidThroughContract(name: string) {
  const m = await shop(name);
  const to = payout();
  const id = await create(m, { merchant: to, amount: "10", gasless: true, token: zeroAddress });
  const p = await row(id);
  const wallet = p.recipient_address as Address;
  const due = BigInt(p.due_units);
  const receipt = await sendNativeThroughContract(chain(), wallet, due, await h().newPayer());
  expect(await h().pub.getBalance({ address: wallet })).toBe(due);
  await stepUntil(
    "paid",
    () => detector().run(svc.deps),
    async () => (await row(id)).status === "paid",
  );
  expect((await row(id)).received_units).toBe(due.toString());
  // The balance grew in the block of the forwarding transaction, by exactly the amount, with no transaction to the
  // address: modules/sanctions/native-senders.ts names the block and the wei.
  const reason = `sender not identified: block ${receipt.blockNumber}: ${due} wei arrived without a transaction to the address (a contract's internal transfer)`;
  return { m, id, to, wallet, due, reason };
}

/** 0.10 USD processing fee in MATIC at the local oracle's 0.5 USD (test/modules/payments/create.test.ts): 0.2 MATIC. */
const PROCESSING_FEE_WEI = 2n * 10n ** 17n;

/**
 * What the payout address of a gasless native payment receives, from its fee columns: the amount less the 0.2 MATIC
 * processing fee and the gas fee estimated at creation (the platform fee is waived by the promotion, no agent).
 */
function payoutOf(p: PaymentRow): bigint {
  expect(p).toMatchObject({
    gasless: true,
    platform_fee_units: "0",
    agent_fee_units: "0",
    processing_fee_units: PROCESSING_FEE_WEI.toString(),
  });
  return BigInt(p.due_units) - PROCESSING_FEE_WEI - BigInt(p.gas_fee_units);
}

/** The calls of a spied logger method as (fields, message). */
const logCalls = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.map((c) => [c[0] as Record<string, any>, c[1] as string] as const);

describe("a native-coin payment whose sender cannot be identified (sent through a contract)", () => {
  // First in the file: the next test moves the app clock 930 s ahead (its waits: 30 + 60 + 120 + 240 + 480 s).
  it("under open it settles with a warning at both gates (reserve, before signing), and nothing waits any more", async () => {
    const { id, to, wallet, reason } = await paidThroughContract("native via contract, open");
    // Closed (the default) first: it waits.
    expect(svc.deps.config.SANCTIONS_FAIL_MODE).toBe("closed");
    await settle();
    expect((await row(id)).status).toBe("paid");
    expect(await rows().wait(id)).toMatchObject({ kind: "unidentified", reason, attempts: 1 });

    const warn = vi.spyOn(logger("sanctions"), "warn");
    let warnings: (readonly [Record<string, any>, string])[] = [];
    svc.deps.config.SANCTIONS_FAIL_MODE = "open";
    try {
      // Under open the backoff is not applied: the next pass takes it although its retry time is 30 s away.
      await stepUntil("completed", settle, async () => (await row(id)).status === "completed");
      warnings = logCalls(warn);
    } finally {
      svc.deps.config.SANCTIONS_FAIL_MODE = "closed";
      warn.mockRestore();
    }
    const anyway = warnings.filter(([o, msg]) => msg === OPEN_LOG && o.paymentId === id);
    // Screened at `paid` (reserve.ts) and again just before the sweep was signed (send.ts): two warnings, same reason.
    expect(anyway).toEqual([
      [{ chainId: CHAIN, paymentId: id, reason }, OPEN_LOG],
      [{ chainId: CHAIN, paymentId: id, reason }, OPEN_LOG],
    ]);
    expect(await rows().wait(id)).toBeUndefined();
    expect(await rows().holds("payment_id", id)).toEqual([]);
    expect((await cliSanctionsList(db(), { all: true })).some((x) => x.paymentId === id)).toBe(false);

    const done = (await row(id)) as PaymentRow;
    const net = payoutOf(done);
    expect(BigInt(done.settled_units!)).toBe(net);
    expect(await h().pub.getBalance({ address: to })).toBe(net);
    expect(await h().pub.getBalance({ address: wallet })).toBe(0n);
    expect((await settlementsOf(id)).map((s) => s.status)).toEqual(["mined"]);
    expect(await outboxEvents(id)).toEqual(["payment.completed"]);
  });

  it("under closed it stays paid and unswept, is listed with its reason, backs off 30 s doubling to 15 min, and settles once released", async () => {
    const warn = vi.spyOn(logger("sanctions"), "warn");
    try {
      const { m, id, to, wallet, due, reason } = await paidThroughContract("native via contract, closed");
      /** The screenings that left this payment waiting (one warning each). */
      const screenedWaiting = () => logCalls(warn).filter(([o, msg]) => msg === WAIT_LOG && o.paymentIds?.includes(id)).length;

      await settle();
      expect((await row(id)).status).toBe("paid");
      const first = (await rows().wait(id))!;
      expect(first).toMatchObject({ kind: "unidentified", reason, attempts: 1 });
      expect(first.lastAt).toBe(first.firstAt);
      expect(first.retryAt - first.lastAt).toBe(30_000);
      expect(screenedWaiting()).toBe(1);
      expect(await rows().holds("payment_id", id)).toEqual([]);

      // The operator sees it: a wait (no hold), and why.
      const listed = (await cliSanctionsList(db())).filter((x) => x.paymentId === id);
      expect(listed).toEqual([
        {
          kind: "screening",
          subject: "payment",
          paymentId: id,
          recoveryId: null,
          depositId: null,
          chainId: CHAIN,
          status: "waiting",
          waitKind: "unidentified",
          reason,
          subjectStatus: "paid",
          depositAddress: getAddress(wallet),
          token: zeroAddress,
          amountUnits: due.toString(),
          merchantId: m.id,
          attempts: 1,
          since: first.firstAt,
          lastTriedAt: first.lastAt,
          retryAt: first.retryAt,
        },
      ]);

      // A second pass before its retry time does not screen it again: it is left out of the batch until then. The app
      // clock is stopped from here (however long the passes take) until the first pass after the release: only
      // `advance` moves it.
      svc.clock.freeze();
      await settle();
      expect(await rows().wait(id)).toEqual(first);
      expect(screenedWaiting()).toBe(1);
      expect((await row(id)).status).toBe("paid");
      expect(await settlementsOf(id)).toEqual([]);
      expect(await h().pub.getBalance({ address: wallet })).toBe(due);
      expect(await h().pub.getBalance({ address: to })).toBe(0n);

      // Each retry time passed, screened again: the wait doubles (60 s, 120 s, 240 s, 480 s), then stops at 15 minutes
      // (30 s * 2^5 = 960 s is more).
      let prev = first;
      for (const delay of [60_000, 120_000, 240_000, 480_000, 900_000]) {
        svc.clock.advance(prev.retryAt - prev.lastAt);
        await settle();
        const next = (await rows().wait(id))!;
        expect(next).toMatchObject({ kind: "unidentified", reason, attempts: prev.attempts + 1, firstAt: first.firstAt });
        expect(next.lastAt).toBeGreaterThan(prev.lastAt);
        expect(next.retryAt - next.lastAt).toBe(delay);
        expect((await row(id)).status).toBe("paid");
        prev = next;
      }
      expect(prev.attempts).toBe(6);
      expect(screenedWaiting()).toBe(6);
      expect(await settlementsOf(id)).toEqual([]);
      expect(await h().pub.getBalance({ address: wallet })).toBe(due);
      expect(await outboxEvents(id)).toEqual([]);

      // The operator accepts the unidentified sender (no hold to release: the release records one, zero address,
      // source `unidentified`), in the transaction that deletes the wait; the next pass reserves it although its retry
      // time is 15 minutes away (the clock still stopped), and it is never left waiting again.
      const decision = { reason: "reviewed on the explorer: forwarded by the customer's smart wallet", operator: "compliance-officer" };
      const released = await cliSanctionsRelease(db(), { paymentId: id }, decision, svc.clock.now);
      expect(released).toMatchObject({
        action: "release",
        paymentId: id,
        recoveryId: null,
        depositId: null,
        status: "paid",
        actor: "compliance-officer",
        reason: decision.reason,
      });
      expect(await rows().wait(id)).toBeUndefined();
      expect(await rows().holds("payment_id", id)).toEqual([
        { subject: "payment", address: zeroAddress, source: "unidentified", from_status: "paid", status: "released" },
      ]);
      expect(await rows().actions("payment_id", id)).toEqual([
        { action: "release", actor: "compliance-officer", reason: decision.reason, subject_from: "paid", subject_to: "paid" },
      ]);
      expect((await cliSanctionsList(db())).some((x) => x.paymentId === id)).toBe(false);
      expect((await cliSanctionsList(db(), { all: true })).filter((x) => x.paymentId === id)).toEqual([
        expect.objectContaining({ kind: "hold", status: "released", sanctionedAddress: zeroAddress, source: "unidentified" }),
      ]);
      await expect(cliSanctionsRelease(db(), { paymentId: id }, decision, svc.clock.now)).rejects.toThrow(
        "Payment is not held by sanctions screening",
      );

      await settle();
      expect((await row(id)).status).toBe("deploying_wallet");
      expect(await rows().wait(id)).toBeUndefined();
      svc.clock.resume();
      await stepUntil("completed", settle, async () => (await row(id)).status === "completed");
      expect(screenedWaiting()).toBe(6);
      expect(await rows().wait(id)).toBeUndefined();
      const done = (await row(id)) as PaymentRow;
      const net = payoutOf(done);
      expect(BigInt(done.settled_units!)).toBe(net);
      expect(await h().pub.getBalance({ address: to })).toBe(net);
      expect(await h().pub.getBalance({ address: wallet })).toBe(0n);
      expect((await settlementsOf(id)).map((s) => s.status)).toEqual(["mined"]);
      const { rows: moves } = await db().pool.query(`SELECT from_status, to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [
        id,
      ]);
      expect(moves.slice(-3)).toEqual([
        { from_status: "pending", to_status: "paid" },
        { from_status: "paid", to_status: "deploying_wallet" },
        { from_status: "deploying_wallet", to_status: "completed" },
      ]);
      expect(await outboxEvents(id)).toEqual(["payment.completed"]);
    } finally {
      svc.clock.resume();
      warn.mockRestore();
    }
  });
});
