import { randomUUID } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { requestLimitsBatcher } from "../../../api/middleware/ip-limits.js";
import { takeAndPeekFor, takeAndPeekManyFor } from "../../../api/middleware/rate-limit.js";
import type { Take } from "../../../api/middleware/rate-limit-store.js";
import { sqlState } from "../../../db/statement-failures.js";
import { KEY_LOOKUP_BATCH, keyHashOf, keyLookupSql } from "../../../modules/merchants/index.js";
import { createPayment, insertBatcher, PROMO_FREE_TRANSACTIONS, promoCounts } from "../../../modules/payments/index.js";
import { newIp } from "../../helpers/clocked-api.js";
import { newPaymentRow } from "../../helpers/payment-rows.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Group commit of POST /payments (issue 12): concurrent creations share one statement for their limits and keys
// (api/middleware/ip-limits.ts) and one for their inserts (modules/payments/insert-batch.ts). Each must still get
// exactly what it got alone: its own payment and registered address, its own promotion slot, its own token of the
// merchant's budget, its own failure. Batching itself is tested by calling the batchers directly in one turn.
let svc: TestService;
let pool: pg.Pool;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  pool = svc.deps.db.pool;
});
afterAll(() => svc?.stop());

const usdt = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
const body = (over: Record<string, unknown> = {}) => ({
  merchant: privateKeyToAccount(generatePrivateKey()).address,
  chainId: "777177",
  token: usdt().address,
  amount: "12.5",
  orderId: `order-${randomUUID()}`,
  ...over,
});
/** A creation from an address of its own (the address's budget never interferes). */
const post = (apiKey: string, b: unknown = body()) =>
  svc.http("POST", "/payments", { body: b, apiKey, headers: { "x-forwarded-for": newIp() } });
const idOf = (res: { body: any }) => (res.body.url as string).split("/pay/")[1]!;

async function stored(ids: string[]) {
  const { rows } = await pool.query(
    `SELECT p.id, p.merchant_id, lower(p.recipient_address) AS recipient, p.promo_applied, p.underpayment_tolerance_units::text AS tolerance,
            p.idempotency_key, w.address AS watched, w.owner_id, w.kind
       FROM payments p LEFT JOIN watched_addresses w ON w.chain_id = p.chain_id AND w.address = lower(p.recipient_address)
      WHERE p.id = ANY($1::uuid[])`,
    [ids],
  );
  return rows as {
    id: string;
    merchant_id: string;
    recipient: string;
    promo_applied: boolean;
    tolerance: string;
    idempotency_key: string | null;
    watched: string | null;
    owner_id: string;
    kind: string;
  }[];
}

/** Counters of both batchers, to compare before and after. */
const counters = () => ({ insert: insertBatcher(svc.deps.db).stats(), limits: requestLimitsBatcher(svc.deps).stats() });
/** No batch failed since `before`: every creation went as planned. */
function noFallbacks(before: ReturnType<typeof counters>) {
  const now = counters();
  expect(now.insert.fallbacks - before.insert.fallbacks, "insert fallbacks").toBe(0);
  expect(now.limits.fallbacks - before.limits.fallbacks, "limits fallbacks").toBe(0);
}

/** The pid of the backend of `client`. */
const pidOf = async (client: pg.PoolClient) => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;

/** Waits until a backend waits for a lock held by `pid` (well within the batches' 2 s lock timeout); returns its pid. */
async function blockedBy(pid: number): Promise<number> {
  const until = Date.now() + 1_500;
  for (;;) {
    const { rows } = await pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [pid]);
    if (rows[0]) return rows[0].pid;
    if (Date.now() > until) throw new Error(`no backend waits for ${pid}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("POST /payments: concurrent creations", () => {
  it("50 concurrent creations of 5 merchants all succeed, each with its own address registered for the indexer", async () => {
    const merchants = await Promise.all(Array.from({ length: 5 }, () => svc.newMerchant()));
    const before = counters();
    const res = await Promise.all(Array.from({ length: 50 }, (_, i) => post(merchants[i % 5]!.apiKey)));
    for (const r of res) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const ids = res.map(idOf);
    expect(new Set(ids).size).toBe(50);
    const rows = await stored(ids);
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.recipient)).size).toBe(50);
    for (const r of rows) expect(r).toMatchObject({ watched: r.recipient, owner_id: r.id, kind: "payment" });
    // Each merchant got its own 10.
    for (const m of merchants) expect(rows.filter((r) => r.merchant_id === m.id)).toHaveLength(10);
    noFallbacks(before);
  });

  it(`one promotion slot left and 5 concurrent creations: exactly 1 gets the promotion`, async () => {
    const m = await svc.newMerchant({ type: "direct" });
    const before = counters();
    // All but one of the free slots reserved by open promotion payments, created concurrently too.
    const first = await Promise.all(Array.from({ length: PROMO_FREE_TRANSACTIONS - 1 }, () => post(m.apiKey)));
    for (const r of first) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await stored(first.map(idOf))).every((r) => r.promo_applied)).toBe(true);
    expect(await promoCounts(pool, m.id)).toEqual({ used: 0, reserved: PROMO_FREE_TRANSACTIONS - 1 });

    const last = await Promise.all(Array.from({ length: 5 }, () => post(m.apiKey)));
    for (const r of last) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = await stored(last.map(idOf));
    expect(rows.filter((r) => r.promo_applied)).toHaveLength(1);
    expect(await promoCounts(pool, m.id)).toEqual({ used: 0, reserved: PROMO_FREE_TRANSACTIONS });
    noFallbacks(before);
  });

  it("a merchant with 4 creations left in its minute and 7 concurrent ones: exactly 4 succeed and 3 get 429", async () => {
    svc.clock.freeze();
    try {
      const m = await svc.newMerchant({ type: "member" });
      // 96 of the 100 taken: the bucket's time is 96 refills (600 ms each) ahead.
      await pool.query(`INSERT INTO rate_limit_buckets (key, tat) VALUES ($1, $2)`, [
        `m:${m.id}:payments.create`,
        new Date(svc.clock.now() + 96 * 600),
      ]);
      const before = counters();
      const res = await Promise.all(Array.from({ length: 7 }, () => post(m.apiKey)));
      const ok = res.filter((r) => r.status === 200);
      const limited = res.filter((r) => r.status === 429);
      expect(ok).toHaveLength(4);
      expect(limited).toHaveLength(3);
      for (const r of limited) {
        expect(r.body).toEqual({ error: "Too many requests" });
        expect(r.headers.get("ratelimit")).toMatch(/^limit=100, remaining=0, reset=\d+$/);
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
      // Each success took a token of its own: remaining 3, 2, 1, 0.
      const remaining = ok.map((r) => Number(/remaining=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1])).sort();
      expect(remaining).toEqual([0, 1, 2, 3]);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [m.id]);
      expect(rows[0].n).toBe(4);
      noFallbacks(before);
      // And the budget is spent: one more is refused.
      expect((await post(m.apiKey)).status).toBe(429);
    } finally {
      svc.clock.resume();
    }
  });

  it("a NUL character in orderId, description or redirectUrl is refused before any statement: 400 Invalid form data", async () => {
    const m = await svc.newMerchant();
    for (const over of [{ orderId: "a\u0000b" }, { description: "x\u0000" }, { redirectUrl: "https://example.com/\u0000" }])
      await expect(createPayment(svc.deps, { merchantId: m.id }, body(over)), JSON.stringify(over)).rejects.toMatchObject({
        kind: "invalid",
        message: "Invalid form data",
      });
    // Over HTTP the body's own check answers the same.
    expect(await post(m.apiKey, body({ orderId: "a\u0000b" }))).toMatchObject({ status: 400, body: { error: "Invalid form data" } });
  });
});

describe("the insert batcher, called directly (the calls of one turn are one batch)", () => {
  it("rows of one turn share one statement; a row alone runs the single statement", async () => {
    const m = await svc.newMerchant({ type: "member" });
    const insert = insertBatcher(svc.deps.db);
    const before = insert.stats();
    const rows = Array.from({ length: 10 }, () => newPaymentRow(m.id, {}, false));
    await Promise.all(rows.map((r) => insert(r)));
    const mid = insert.stats();
    expect(mid.batches - before.batches).toBe(1);
    expect(mid.statements - before.statements).toBe(1);
    expect(mid.alone - before.alone).toBe(0);
    const one = newPaymentRow(m.id, {}, false);
    await insert(one);
    expect(insert.stats().alone - mid.alone).toBe(1);
    const got = await stored([...rows, one].map((r) => r.id));
    expect(got).toHaveLength(11);
    for (const r of got) expect(r).toMatchObject({ watched: r.recipient, owner_id: r.id, kind: "payment", promo_applied: false });
    expect(insert.stats().fallbacks - before.fallbacks).toBe(0);
  });

  it("one promotion slot left and 6 rows of the merchant in one batch: the first row alone gets it", async () => {
    const m = await svc.newMerchant({ type: "direct" });
    const insert = insertBatcher(svc.deps.db);
    const before = insert.stats();
    await Promise.all(Array.from({ length: PROMO_FREE_TRANSACTIONS - 1 }, () => insert(newPaymentRow(m.id))));
    const rows = Array.from({ length: 6 }, () => newPaymentRow(m.id));
    await Promise.all(rows.map((r) => insert(r)));
    const got = new Map((await stored(rows.map((r) => r.id))).map((r) => [r.id, r]));
    expect(rows.map((r) => got.get(r.id)!.promo_applied)).toEqual([true, false, false, false, false, false]);
    // The tolerance of the fees that apply (payment-rows.ts: 5 with the promotion, 7 without).
    expect(rows.map((r) => got.get(r.id)!.tolerance)).toEqual(["5", "7", "7", "7", "7", "7"]);
    expect(await promoCounts(pool, m.id)).toEqual({ used: 0, reserved: PROMO_FREE_TRANSACTIONS });
    const after = insert.stats();
    expect(after.batches - before.batches).toBe(2);
    expect(after.fallbacks - before.fallbacks).toBe(0);
  });

  it("a row Postgres refuses among 32 fails alone with its own error, the 31 others are written: at most 11 statements", async () => {
    // A real failure of one row only: a constraint its orderId breaks.
    await pool.query(`ALTER TABLE payments ADD CONSTRAINT create_batch_test_reject CHECK (order_id NOT LIKE 'reject-%')`);
    try {
      const m = await svc.newMerchant({ type: "member" });
      const rows = Array.from({ length: 32 }, (_, i) => newPaymentRow(m.id, i === 13 ? { orderId: `reject-${randomUUID()}` } : {}, false));
      const insert = insertBatcher(svc.deps.db);
      const before = insert.stats();
      const out = await Promise.allSettled(rows.map((r) => insert(r)));
      expect(out.map((r) => r.status)).toEqual(rows.map((_, i) => (i === 13 ? "rejected" : "fulfilled")));
      expect(sqlState((out[13] as PromiseRejectedResult).reason)).toBe("23514");
      const after = insert.stats();
      expect(after.batches - before.batches).toBe(1);
      expect(after.fallbacks - before.fallbacks).toBe(1);
      // Halves, in order: 1 + 2·log2(32) statements, not 1 + 32.
      expect(after.statements + after.alone - before.statements - before.alone).toBeLessThanOrEqual(11);
      const got = await stored(rows.map((r) => r.id));
      expect(got.map((r) => r.id).sort()).toEqual(
        rows
          .filter((_, i) => i !== 13)
          .map((r) => r.id)
          .sort(),
      );
      for (const r of got) expect(r.watched).toBe(r.recipient);
      // A creation alone that cannot be written answers as before batching.
      const res = await post(m.apiKey, body({ orderId: `reject-${randomUUID()}` }));
      expect(res).toMatchObject({ status: 500, body: { error: "Failed to create payment" } });
    } finally {
      await pool.query(`ALTER TABLE payments DROP CONSTRAINT create_batch_test_reject`);
    }
  });

  it("rows under Idempotency-Key uses share the batch; a use that has its payment already is not written again", async () => {
    const m = await svc.newMerchant({ type: "member" });
    const insert = insertBatcher(svc.deps.db);
    const use = () => ({ apiKeyId: randomUUID(), key: `key-${randomUUID()}`, useId: randomUUID() });
    const first = newPaymentRow(m.id, { idempotency: use() }, false);
    expect(await insert(first)).toBe(true);
    // The same use again (a retry after a crash), two new uses and a row without a key, in one batch.
    const rows = [
      newPaymentRow(m.id, { idempotency: first.idempotency }, false),
      newPaymentRow(m.id, { idempotency: use() }, false),
      newPaymentRow(m.id, {}, false),
      newPaymentRow(m.id, { idempotency: use() }, false),
    ];
    const before = insert.stats();
    expect(await Promise.all(rows.map((r) => insert(r)))).toEqual([false, true, true, true]);
    expect(insert.stats().statements - before.statements).toBe(1);
    const got = await stored([first, ...rows].map((r) => r.id));
    expect(got.map((r) => r.id).sort()).toEqual([first, ...rows.slice(1)].map((r) => r.id).sort());
    // Every row written is watched, the one not written is not.
    for (const r of got) expect(r.watched).toBe(r.recipient);
    const { rowCount } = await pool.query(`SELECT 1 FROM watched_addresses WHERE address = lower($1)`, [rows[0]!.recipientAddress]);
    expect(rowCount).toBe(0);
    expect(got.find((r) => r.id === rows[2]!.id)!.idempotency_key).toBeNull();
  });

  it("a batch waiting on a locked merchant fails after the lock timeout (55P03) instead of holding up the process; not run again", async () => {
    const [x, y] = await Promise.all([svc.newMerchant(), svc.newMerchant()]);
    const insert = insertBatcher(svc.deps.db);
    const before = insert.stats();
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      // Blocks the foreign-key check of x's payment (FOR KEY SHARE).
      await holder.query(`SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, [x.id]);
      const out = await Promise.allSettled([insert(newPaymentRow(x.id)), insert(newPaymentRow(y.id))]);
      expect(out.map((r) => (r.status === "rejected" ? sqlState(r.reason) : r.status))).toEqual(["55P03", "55P03"]);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect(insert.stats().fallbacks - before.fallbacks).toBe(0);
    // The lock gone, creations go on.
    await insert(newPaymentRow(y.id));
  });
});

type Req = { ip: string; key?: string; scope?: "payments.create" };
type Answer = { take: Take; peek?: Take; also: unknown; then?: Take };
type Shop = { id: string; apiKey: string };

/** The single statement of one request (ip-limits.ts limitsAlone), as before batching. */
function alone(r: Req): Promise<Answer> {
  const lookup = r.key !== undefined ? keyLookupSql(r.key) : undefined;
  const then = r.scope && lookup && { scope: r.scope, merchantIdSql: lookup.merchantIdSql };
  return takeAndPeekFor(svc.deps, "requests", "auth-failures", { ip: r.ip }, lookup?.sql, then);
}
/** The batched statement of `reqs` (no batcher: no fallback). */
const together = (reqs: Req[]): Promise<Answer[]> =>
  takeAndPeekManyFor(
    svc.deps,
    "requests",
    "auth-failures",
    KEY_LOOKUP_BATCH,
    reqs.map((r) => ({ who: { ip: r.ip }, lookup: r.key !== undefined ? keyHashOf(r.key) : null, merchantScope: r.scope })),
  );
/** An answer with its merchant as its index in `shops`, to compare runs over different merchants. */
const comparable = (shops: Shop[]) => (a: Answer) => ({
  ...a,
  also: a.also ? shops.findIndex((m) => m.id === (a.also as { id: string }).id) : null,
});
const create = (ip: string, m: Shop): Req => ({ ip, key: m.apiKey, scope: "payments.create" });
const setTat = (key: string, ms: number) =>
  pool.query(`INSERT INTO rate_limit_buckets (key, tat) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET tat = EXCLUDED.tat`, [
    key,
    new Date(ms),
  ]);

describe("the limits batcher and its statement", () => {
  it("requests of one turn share one statement; a request alone runs the single statement", async () => {
    const limits = requestLimitsBatcher(svc.deps);
    const shops = await Promise.all(Array.from({ length: 4 }, () => svc.newMerchant()));
    svc.clock.freeze();
    try {
      const before = limits.stats();
      const out = await Promise.all(shops.map((m) => limits(create(newIp(), m))));
      out.forEach((a, i) => {
        expect(a.take.allowed).toBe(true);
        expect((a.also as { id: string }).id).toBe(shops[i]!.id);
        expect(a.then?.remaining).toBe(99);
      });
      const mid = limits.stats();
      expect(mid.statements - before.statements).toBe(1);
      expect(mid.alone - before.alone).toBe(0);
      expect((await limits(create(newIp(), shops[0]!))).then?.remaining).toBe(98);
      expect(limits.stats().alone - mid.alone).toBe(1);
      expect(limits.stats().fallbacks - before.fallbacks).toBe(0);
    } finally {
      svc.clock.resume();
    }
  });

  it("a bucket another transaction creates after the batch began: the statement fails whole, its requests run alone, answers as the single path", async () => {
    svc.clock.freeze();
    const holder = await pool.connect();
    try {
      const now = svc.clock.now();
      const state = async () => ({
        ips: [newIp(), newIp()],
        shops: await Promise.all([0, 1].map(() => svc.newMerchant({ type: "member" }))),
      });
      const reqs = (s: { ips: string[]; shops: Shop[] }) => s.ips.map((ip, i) => create(ip, s.shops[i]!));
      const heldKey = (s: { ips: string[] }) => `ip:${s.ips[0]}:requests`;
      // Expected: the other transaction's bucket committed first, then each request alone.
      const a = await state();
      await setTat(heldKey(a), now + 100 * 20);
      const expected: Answer[] = [];
      for (const r of reqs(a)) expected.push(await alone(r));
      // Batched: the bucket's insert is still open when the batch inserts the same key; it commits while the batch waits.
      const b = await state();
      await holder.query("BEGIN");
      await holder.query(`INSERT INTO rate_limit_buckets (key, tat) VALUES ($1, $2)`, [heldKey(b), new Date(now + 100 * 20)]);
      const limits = requestLimitsBatcher(svc.deps);
      const before = limits.stats();
      const answers = Promise.all(reqs(b).map((r) => limits(r)));
      await blockedBy(await pidOf(holder));
      await holder.query("COMMIT");
      const got = await answers;
      expect(limits.stats().fallbacks - before.fallbacks).toBe(1);
      expect(limits.stats().alone - before.alone).toBe(2);
      expect(got.map(comparable(b.shops))).toEqual(expected.map(comparable(a.shops)));
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
      svc.clock.resume();
    }
  });

  it("a single take and a batch sharing an address bucket and a merchant bucket do not deadlock; every take counts once", async () => {
    svc.clock.freeze();
    const holder = await pool.connect();
    try {
      const now = svc.clock.now();
      const [y, z] = await Promise.all([svc.newMerchant({ type: "member" }), svc.newMerchant({ type: "member" })]);
      const bucket = (m: Shop) => `m:${m.id}:payments.create`;
      for (const m of [y, z]) await setTat(bucket(m), now);
      const { rows } = await pool.query<{ before: boolean }>(`SELECT $1::text < $2::text AS before`, [bucket(y), bucket(z)]);
      const [early, late] = rows[0]!.before ? [y, z] : [z, y];
      const [a, b] = [newIp(), newIp()];
      // The batch waits for the later merchant bucket after taking the earlier one (and its addresses' buckets).
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM rate_limit_buckets WHERE key = $1 FOR UPDATE`, [bucket(late)]);
      const batch = together([create(a, early), create(b, late)]);
      const batchPid = await blockedBy(await pidOf(holder));
      // Meanwhile another process's single statement takes address a, then the earlier merchant.
      const single = alone(create(a, early));
      await blockedBy(batchPid);
      await holder.query("COMMIT");
      const [s, m] = await Promise.allSettled([single, batch]);
      if (s.status === "rejected") throw s.reason;
      if (m.status === "rejected") throw m.reason;
      // The batch came first on both shared buckets, the single second.
      expect(m.value.map((x) => [x.take.remaining, x.then?.remaining])).toEqual([
        [2999, 99],
        [2999, 99],
      ]);
      expect([s.value.take.remaining, s.value.then?.remaining]).toEqual([2998, 98]);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
      svc.clock.resume();
    }
  });

  /** The same requests against two copies of the same state (fresh merchants and address): one by one, then in one statement. */
  async function compare(
    build: (ip: string, m: Shop[]) => Req[],
    setup: (ip: string, m: Shop[], now: number) => Promise<unknown> = async () => {},
  ) {
    svc.clock.freeze();
    try {
      const answers: ReturnType<ReturnType<typeof comparable>>[][] = [];
      for (const run of [sequentially, together]) {
        const ip = newIp();
        const shops = await Promise.all(Array.from({ length: 3 }, () => svc.newMerchant({ type: "member" })));
        await setup(ip, shops, svc.clock.now());
        answers.push((await run(build(ip, shops))).map(comparable(shops)));
      }
      expect(answers[1]).toEqual(answers[0]);
      return answers[1]!;
    } finally {
      svc.clock.resume();
    }
  }
  async function sequentially(reqs: Req[]): Promise<Answer[]> {
    const out: Answer[] = [];
    for (const r of reqs) out.push(await alone(r));
    return out;
  }

  it("fresh buckets, merchants interleaved", async () => {
    const out = await compare((ip, m) => [0, 1, 0, 0, 1, 2].map((i) => create(ip, m[i]!)));
    expect(out.map((a) => a.then?.remaining)).toEqual([99, 99, 98, 97, 98, 99]);
  });

  it("a merchant with 3 creations left sends 6: the first 3 pass", async () => {
    const out = await compare(
      (ip, m) => Array.from({ length: 6 }, () => create(ip, m[0]!)),
      (_ip, m, now) => setTat(`m:${m[0]!.id}:payments.create`, now + 97 * 600),
    );
    expect(out.map((a) => a.then?.allowed)).toEqual([true, true, true, false, false, false]);
  });

  it("an address with 2 requests left: the others take nothing from their merchants", async () => {
    const out = await compare(
      (ip, m) => [0, 1, 2, 0, 1].map((i) => create(ip, m[i]!)),
      (ip, _m, now) => setTat(`ip:${ip}:requests`, now + 2998 * 20),
    );
    expect(out.map((a) => [a.take.allowed, a.then?.allowed])).toEqual([
      [true, true],
      [true, true],
      [false, undefined],
      [false, undefined],
      [false, undefined],
    ]);
  });

  it("failed keys spent (peek), unknown, absent and scopeless keys", async () => {
    await compare(
      (ip, m) => [{ ip, key: "nope", scope: "payments.create" }, create(ip, m[0]!), { ip }, { ip, key: m[1]!.apiKey }],
      (ip, _m, now) => setTat(`ip:${ip}:auth-failures`, now + 60_000),
    );
  });

  it("a bucket whose time is far ahead (a clock set back) starts afresh; one in the past is full", async () => {
    await compare(
      (ip, m) => [0, 1, 0, 1].map((i) => create(ip, m[i]!)),
      async (_ip, m, now) => {
        await setTat(`m:${m[0]!.id}:payments.create`, now + 10 * 60_000);
        await setTat(`m:${m[1]!.id}:payments.create`, now - 10 * 60_000);
      },
    );
  });
});
