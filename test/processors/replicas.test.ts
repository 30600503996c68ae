import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApiServer } from "../../api/server.js";
import { createDeps } from "../../app/deps.js";
import type { AppDeps } from "../../core/deps.js";
import { creditConfirmedDeposits, gasTankBalance } from "../../modules/gas-tank/index.js";
import { detectLostDeposits, detectPayments, expirePayments } from "../../modules/payments/index.js";
import { PAYMENT_EVENTS } from "../../modules/webhooks/index.js";
import { detector } from "../../processors/detector.js";
import { startProcessors, type ProcessorRunner } from "../../processors/runner.js";
import { settleChain } from "../../processors/settler.js";
import { webhookDispatcher } from "../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor, waitIndexed } from "../helpers/chain.js";
import { readResponse } from "../helpers/clocked-api.js";
import { startTestService, type TestService } from "../helpers/service.js";
import { startReceiver, type Receiver } from "../modules/webhooks/helpers/receiver.js";

// Two replicas of the processors against one database, on the real stack: the same settler key and schema,
// separate pools and RPC clients (what two `npm run serve` processes are). Each race is forced: a third
// transaction holds the row both replicas need until both wait on it (pg_blocking_pids), then lets go.
// The money must come out exact: one sweep per wallet, one fee per payment, one event and one delivery each.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;
const WAIT = { timeout: 120_000 };
/** Processing fee on the test chain (0.10 USD; no gas fee there, platform fee waived by the promotion). */
const FEE = 100_000n;

let svc: TestService;
/** The two replicas racing: each with a pool of its own, named in pg_stat_activity. */
let replicas: AppDeps[];
/** An API server on each replica. */
let apis: { url: string; close(): Promise<void> }[];
let receiver: Receiver;
let runner: ProcessorRunner;
const processorErrors: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({ processors: false, env: { GAS_TANK_CONFIRMATIONS: "1" } });
  replicas = ["replica-a", "replica-b"].map((name) => {
    const url = new URL(svc.deps.env.DATABASE_URL!);
    url.searchParams.set("application_name", name);
    return createDeps({ env: { ...svc.deps.env, DATABASE_URL: url.toString() }, now: svc.clock.now });
  });
  apis = await Promise.all(
    replicas.map(async (d) => {
      const api = await startApiServer(d, 0);
      return { url: `http://127.0.0.1:${api.port}/api`, close: () => api.close() };
    }),
  );
  // Only the dispatcher runs by itself (trusting the receiver's certificate); detection and settlement are driven here.
  runner = startProcessors(svc.deps, [webhookDispatcher({ tls: { ca: receiver.ca } })], (m) => void processorErrors.push(m));
});
afterAll(async () => {
  await runner?.stop();
  for (const a of apis ?? []) await a.close();
  for (const d of replicas ?? []) await d.db.close();
  await svc?.stop();
  await receiver?.close();
});

type Shop = { id: string; apiKey: string; secret: string; path: string };
const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const pool = () => svc.deps.db.pool;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const usdt = () => h().token("USDT").address;

/** A merchant of the calling test's own, subscribed to every payment event at its own receiver path. */
async function shop(name: string): Promise<Shop> {
  const m = await svc.newMerchant({ name });
  const path = `/hooks/${name}`;
  const url = new URL(receiver.url);
  url.pathname = path;
  const res = await svc.http("PUT", "/v1/webhooks", { apiKey: m.apiKey, body: { url: url.toString(), events: [...PAYMENT_EVENTS] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...m, secret: res.body.data.secret, path };
}

async function create(m: Shop, body: Record<string, unknown>): Promise<string> {
  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: { orderId: `order-${Math.random()}`, chainId: String(CHAIN), token: usdt(), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.url as string).split("/pay/")[1]!;
}
async function row(id: string) {
  return (await pool().query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
}
async function statuses(ids: string[]): Promise<string[]> {
  const { rows } = await pool().query(`SELECT id, status FROM payments WHERE id = ANY($1::uuid[])`, [ids]);
  return ids.map((id) => rows.find((r) => r.id === id)!.status);
}

/** Pays, and returns the block of the transfer. */
async function pay(to: Address, units: bigint): Promise<bigint> {
  return (await h().pay("USDT", to, units)).blockNumber;
}
const indexedPast = (block: bigint) => waitIndexed(svc.deps.db, CHAIN, block);

/** One detection pass in each replica at once (fresh detectors: neither skips a block the other has handled). */
const detectBoth = () => Promise.all(replicas.map((d) => detector().run(d)));
const settleBoth = () => Promise.all(replicas.map((d) => settleChain(d, chain())));
const creditBoth = () => Promise.all(replicas.map((d) => creditConfirmedDeposits(d)));

async function until(ids: string[], status: string, step: () => Promise<unknown>) {
  await waitFor(
    async () => {
      await step();
      return (await statuses(ids)).every((s) => s === status);
    },
    { ...WAIT, interval: 300, what: `${ids.length} payment(s) ${status}` },
  );
}

/**
 * Starts `race` while a transaction of the test holds the lock `lockSql` takes, waits until a session of each
 * replica is blocked on it (directly, or queued behind the other), then commits: the replicas contend at once.
 */
async function whileHeld<T>(lockSql: string, params: unknown[], race: () => Promise<T>): Promise<T> {
  const holder = await pool().connect();
  let result: Promise<T> | undefined;
  try {
    await holder.query("BEGIN");
    await holder.query(lockSql, params);
    const { rows } = await holder.query(`SELECT pg_backend_pid() AS pid`);
    result = race();
    result.catch(() => {}); // awaited below
    let seen: unknown;
    await waitFor(
      async () => {
        const { rows: w } = await pool().query(
          `SELECT pid, application_name AS app, left(query, 80) AS q, pg_blocking_pids(pid) AS b FROM pg_stat_activity
            WHERE datname = current_database() AND state <> 'idle'`,
        );
        seen = w;
        const blocked = new Set<number>([rows[0].pid]);
        for (let grew = true; grew;) {
          grew = false;
          for (const x of w) if (!blocked.has(x.pid) && x.b.some((b: number) => blocked.has(b))) grew = Boolean(blocked.add(x.pid));
        }
        const apps = new Set(w.filter((x) => blocked.has(x.pid)).map((x) => x.app));
        return apps.has("replica-a") && apps.has("replica-b");
      },
      { timeout: 60_000, what: "both replicas waiting on the held lock" },
    ).catch((e) => {
      throw new Error(`${e.message} (holder ${rows[0].pid}): ${JSON.stringify(seen)}`);
    });
  } finally {
    await holder.query("COMMIT");
    holder.release();
  }
  return result;
}

async function fundGasTank(m: Shop, micros: bigint) {
  const bal = await svc.http("GET", "/balance", { apiKey: m.apiKey });
  expect(bal.status, JSON.stringify(bal.body)).toBe(200);
  const dep = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN);
  await indexedPast(await pay(dep.address, micros));
  // Both replicas credit the same confirmed deposit.
  await waitFor(
    async () => {
      await creditBoth();
      return (await gasTankBalance(pool(), m.id)) === micros;
    },
    { ...WAIT, what: "Gas Tank credited" },
  );
  const { rows } = await pool().query(`SELECT amount_micros FROM ledger_entries WHERE merchant_id = $1`, [m.id]);
  expect(rows).toEqual([{ amount_micros: micros.toString() }]);
}

/** Every transition of each payment, oldest first. */
async function history(ids: string[]): Promise<Record<string, string[]>> {
  const { rows } = await pool().query(`SELECT payment_id, to_status FROM payment_events WHERE payment_id = ANY($1::uuid[]) ORDER BY id`, [
    ids,
  ]);
  return Object.fromEntries(ids.map((id) => [id, rows.filter((r) => r.payment_id === id).map((r) => r.to_status)]));
}
/** The outbox rows of each payment, by event name. */
async function outbox(ids: string[]): Promise<Record<string, string[]>> {
  const { rows } = await pool().query(
    `SELECT payment_id, event FROM webhook_deliveries WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, event`,
    [ids],
  );
  return Object.fromEntries(ids.map((id) => [id, rows.filter((r) => r.payment_id === id).map((r) => r.event)]));
}
/** Waits for the webhooks, checks each one's signature, and that each arrived exactly once. */
async function delivered(m: Shop, expected: { paymentId: string; event: string }[]) {
  const mine = () => receiver.received.filter((r) => r.path === m.path);
  await waitFor(async () => mine().length >= expected.length, { ...WAIT, what: `${expected.length} webhooks at ${m.path}` });
  // One more dispatcher pass: a duplicate would be sent now.
  await runner.runOnce("webhook-dispatcher");
  const got = mine().map((r) => {
    expect(r.headers["x-signature"]).toBe(
      createHash("sha256")
        .update(r.rawBody + m.secret)
        .digest("hex"),
    );
    const body = JSON.parse(r.rawBody);
    return { paymentId: body.paymentId, event: body.event };
  });
  const key = (x: { paymentId: string; event: string }) => `${x.paymentId} ${x.event}`;
  expect(got.map(key).sort()).toEqual(expected.map(key).sort());
}
async function sweepsOf(wallet: string) {
  const { sweep } = svc.deps.db.views;
  return svc.deps.db.orm
    .select({ hash: sweep.transactionHash })
    .from(sweep)
    .where(eq(sweep.wallet, wallet.toLowerCase() as Hex));
}

describe("two replicas racing", () => {
  it("settlers: each wallet swept once, each Gas Tank fee debited once, payouts exact, one event and one webhook each", async () => {
    const m = await shop("settlers");
    await fundGasTank(m, 1_000_000n);
    const cases = [
      { to: payout(), units: 2_000_000n, body: { amount: "2" } },
      { to: payout(), units: 3_000_000n, body: { amount: "3" } },
      { to: payout(), units: 4_000_000n, body: { amount: "4", gasless: true } },
      { to: payout(), units: 5_000_000n, body: { amount: "5", gasless: true } },
    ];
    const ids: string[] = [];
    for (const c of cases) ids.push(await create(m, { merchant: c.to, ...c.body }));
    const rows = await Promise.all(ids.map(row));
    expect(rows.map((r) => r.gas_tank_fee_micros)).toEqual([FEE.toString(), FEE.toString(), "0", "0"]);
    let last = 0n;
    for (const [i, c] of cases.entries()) last = await pay(rows[i].recipient_address, c.units);
    await indexedPast(last);
    await until(ids, "paid", detectBoth);

    // Both settlers reach the first Gas Tank payment while the merchant's row is held: they reserve, debit and send at once.
    await whileHeld(`SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE`, [m.id], settleBoth);
    await until(ids, "completed", settleBoth);

    for (const [i, c] of cases.entries()) {
      const { rows: s } = await pool().query(`SELECT status, tx_hash FROM settlements WHERE $1 = ANY(payment_ids)`, [ids[i]]);
      expect(s).toEqual([{ status: "mined", tx_hash: expect.stringMatching(/^0x/) }]);
      expect((await sweepsOf(rows[i].recipient_address)).map((x) => x.hash)).toEqual([s[0].tx_hash]);
      const gasless = c.body.gasless === true;
      expect(await h().balanceOf("USDT", c.to)).toBe(gasless ? c.units - FEE : c.units);
      expect(await h().balanceOf("USDT", rows[i].recipient_address)).toBe(0n);
    }
    const { rows: ledger } = await pool().query(
      `SELECT kind, amount_micros, payment_id FROM ledger_entries WHERE merchant_id = $1 AND kind <> 'gas_tank_deposit' ORDER BY id`,
      [m.id],
    );
    expect(ledger.map((l) => [l.kind, l.amount_micros, l.payment_id]).sort()).toEqual(
      [
        ["settlement_fee", (-FEE).toString(), ids[0]],
        ["settlement_fee", (-FEE).toString(), ids[1]],
      ].sort(),
    );
    expect(await gasTankBalance(pool(), m.id)).toBe(1_000_000n - 2n * FEE);
    const events = await history(ids);
    for (const id of ids) expect(events[id], id).toEqual(["paid", "deploying_wallet", "completed"]);
    const queued = await outbox(ids);
    for (const id of ids) expect(queued[id], id).toEqual(["payment.completed"]);
    await delivered(
      m,
      ids.map((paymentId) => ({ paymentId, event: "payment.completed" })),
    );
    expect(processorErrors).toEqual([]);
  });

  it("detectors: amounts counted once, one transition each, late funds on expired payments taken, no doubled outbox rows", async () => {
    const m = await shop("detectors");
    const full = await create(m, { merchant: payout(), amount: "1", gasless: true });
    const partial = await create(m, { merchant: payout(), amount: "1", gasless: true });
    const expiring = [0, 1].map(() => create(m, { merchant: payout(), amount: "1", gasless: true, expiresAt: svc.clock.now() + 5_000 }));
    const [lateShort, lateFull] = await Promise.all(expiring);
    svc.clock.advance(10_000);
    await expirePayments(svc.deps);
    expect(await statuses([full, partial, lateShort!, lateFull!])).toEqual(["pending", "pending", "expired", "expired"]);

    const ids = [full, partial, lateShort!, lateFull!];
    const units = [1_000_000n, 400_000n, 300_000n, 1_000_000n];
    let last = 0n;
    for (const [i, id] of ids.entries()) last = await pay((await row(id)).recipient_address, units[i]!);
    await indexedPast(last);

    // Both detectors find the four deposits and queue on the payments' rows.
    await whileHeld(`SELECT 1 FROM payments WHERE id = ANY($1::uuid[]) FOR UPDATE`, [ids], detectBoth);
    const after = async () =>
      (await pool().query(`SELECT id, status, received_units FROM payments WHERE id = ANY($1::uuid[])`, [ids])).rows.sort((a, b) =>
        ids.indexOf(a.id) < ids.indexOf(b.id) ? -1 : 1,
      );
    expect(await after()).toEqual([
      { id: full, status: "paid", received_units: "1000000" },
      { id: partial, status: "pending", received_units: "400000" },
      { id: lateShort, status: "pending", received_units: "300000" },
      { id: lateFull, status: "paid", received_units: "1000000" },
    ]);
    const once = await history(ids);
    expect(once).toEqual({
      [full]: ["paid"],
      [partial]: [],
      [lateShort!]: ["expired", "pending"],
      [lateFull!]: ["expired", "paid"],
    });
    // Another race over the same blocks, and a full scan, change nothing.
    const counted = await after();
    await detectBoth();
    await Promise.all(replicas.map((d) => detectPayments(d, chain(), last)));
    expect(await history(ids)).toEqual(once);
    expect(await after()).toEqual(counted);

    // The expired payment paid in full completes and the merchant is told; the one paid short waits for the rest.
    await until([full, lateFull!], "completed", settleBoth);
    const queued = await outbox(ids);
    expect(queued).toEqual({
      [full]: ["payment.completed"],
      [partial]: [],
      [lateShort!]: ["payment.expired"],
      [lateFull!]: ["payment.expired", "payment.completed"],
    });
    await delivered(m, [
      { paymentId: full, event: "payment.completed" },
      { paymentId: lateShort!, event: "payment.expired" },
      { paymentId: lateFull!, event: "payment.expired" },
      { paymentId: lateFull!, event: "payment.completed" },
    ]);
    expect(await h().balanceOf("USDT", (await row(lateFull!)).merchant_address)).toBe(1_000_000n - FEE);
    // What the merchant's API shows of the two that lapsed before their funds came.
    for (const [id, status, received] of [
      [lateShort!, "pending", "0.3"],
      [lateFull!, "completed", "1"],
    ]) {
      const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(id!)).order_id)}`, { apiKey: m.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({ paymentId: id, status, receivedAmount: received });
    }
  });

  it("two withdraw requests at once: one 200, one 409, one sweep of exactly what was received", async () => {
    const m = await shop("withdraws");
    const to = payout();
    const id = await create(m, { merchant: to, amount: "1", gasless: true });
    await indexedPast(await pay((await row(id)).recipient_address, 400_000n));
    await waitFor(
      async () => {
        await detectBoth();
        return (await row(id)).received_units === "400000";
      },
      { ...WAIT, what: "partial payment detected" },
    );

    // One request to each replica's API.
    const withdraw = (api: { url: string }) =>
      fetch(`${api.url}/v1/payments/${id}/withdraw`, { method: "POST", headers: { "x-api-key": m.apiKey } }).then(readResponse);
    const answers = await whileHeld(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [id], () => Promise.all(apis.map(withdraw)));
    const byStatus = answers.sort((a, b) => a.status - b.status);
    expect(byStatus.map((a) => [a.status, a.body])).toEqual([
      [200, { success: true, error: null, data: { paymentId: id, status: "withdraw_request", receivedAmount: "0.4" } }],
      [409, { success: false, error: "Payment has no partial payment to withdraw", data: null }],
    ]);

    await until([id], "withdrawn", settleBoth);
    const { rows: s } = await pool().query(`SELECT status FROM settlements WHERE $1 = ANY(payment_ids)`, [id]);
    expect(s).toEqual([{ status: "mined" }]);
    expect(await h().balanceOf("USDT", to)).toBe(400_000n);
    expect(await history([id])).toEqual({ [id]: ["withdraw_request", "withdrawing", "withdrawn"] });
    await delivered(m, [{ paymentId: id, event: "payment.withdrawn" }]);
  });

  it("a re-scan from the first block and repeated passes of both replicas change no amount, fee, event or delivery", async () => {
    const m = await shop("rescan");
    await fundGasTank(m, 500_000n);
    const done = await create(m, { merchant: payout(), amount: "1.5" });
    const open = await create(m, { merchant: payout(), amount: "1", gasless: true });
    await pay((await row(done)).recipient_address, 1_500_000n);
    await indexedPast(await pay((await row(open)).recipient_address, 250_000n));
    await until([done], "completed", async () => {
      await detectBoth();
      await settleBoth();
    });
    await waitFor(async () => (await row(open)).received_units === "250000", { ...WAIT, what: "partial amount recorded" });

    // The whole schema, not only this test's rows: a re-scan must leave every payment of the file alone.
    const snapshot = async () => ({
      payments: (await pool().query(`SELECT id, status, received_units, overpayment_units, settlement_tx_hash FROM payments ORDER BY id`))
        .rows,
      events: (await pool().query(`SELECT id, payment_id, to_status FROM payment_events ORDER BY id`)).rows,
      ledger: (await pool().query(`SELECT reference, amount_micros FROM ledger_entries ORDER BY id`)).rows,
      outbox: (await pool().query(`SELECT id, event, payment_id, status, attempts FROM webhook_deliveries ORDER BY id`)).rows,
      settlements: (await pool().query(`SELECT id, status, tx_hash FROM settlements ORDER BY id`)).rows,
    });
    // Every webhook so far delivered (a re-queued one would show as pending again, or with more attempts).
    await waitFor(async () => (await pool().query(`SELECT 1 FROM webhook_deliveries WHERE status <> 'success'`)).rowCount === 0, {
      ...WAIT,
      what: "every webhook delivered",
    });
    const before = await snapshot();
    expect(before.payments.find((p) => p.id === done)).toMatchObject({ status: "completed", received_units: "1500000" });
    expect(before.ledger.filter((l) => l.reference.startsWith("fee:"))).not.toEqual([]);

    // Forget where detection got to: the next pass scans every block again (docs/operations.md).
    await pool().query(`DELETE FROM processor_state WHERE key LIKE 'detector:%'`);
    const latest = await h().pub.getBlockNumber();
    await indexedPast(latest);
    for (let i = 0; i < 2; i++) {
      await detectBoth();
      await Promise.all(replicas.map((d) => detectPayments(d, chain(), latest)));
      await Promise.all(replicas.map((d) => detectLostDeposits(d, chain(), { latest, finalized: 0n })));
      await creditBoth();
      await settleBoth();
    }
    await runner.runOnce("webhook-dispatcher");
    expect(await snapshot()).toEqual(before);
  });
});
