import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { format } from "node:util";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { createApiKey, SESSION_COOKIE } from "../../../modules/merchants/index.js";
import { redirectHash } from "../../../modules/payments/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import {
  checkResponse,
  describeRequest,
  diffSnapshots,
  errorMessage,
  formatFailures,
  snapshotQuery,
  type Failure,
  type FuzzRequest,
  type FuzzResponse,
  type Snapshot,
} from "./fuzz-check.js";
import { graphqlRoutes } from "./fuzz-graphql.js";
import { maybeRoutes, oddRoutes, restRoutes, type RouteGen } from "./fuzz-routes.js";
import type { FuzzContext } from "./fuzz-specs.js";

// Property-based fuzzing of every route (issue 10), ~4,400 requests: every curated hostile value of every field,
// query parameter and path id once (built from the route's body and query rules), plus random fast-check
// combinations: malformed JSON, wrong types, NUL bytes, lone surrogates, deep and huge bodies, hostile query strings,
// forged cursors and ids, odd content types, methods and keys, mostly with a valid key so they reach validation.
// One request in three carries an Idempotency-Key (fresh, shared by every route, or invalid: docs/payments.md "Idempotency
// keys"). Every response: no 5xx (nor a GraphQL internal error), no stack trace or SQL in the body, nothing built to
// be refused accepted, and no row written by a refused request (the app schema is hashed after every batch; the
// "maybe valid" requests run one at a time). The kept idempotency responses are exempt from that (a refused request's
// final 4xx is kept by design) and checked on their own at the end: every claim settled, every kept body sealed.
// Failures are collected, grouped by root cause and printed, then fail.
//
// FUZZ_SEED=<n> draws other random requests (the seed is printed); FUZZ_SCALE=<x> multiplies the random counts.

const SEED = Number(process.env.FUZZ_SEED ?? 20_240_611);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
/** Requests in flight at once (2 cores; the service runs in this process). */
const CONCURRENCY = 8;
const CHAIN_ID = 777177;

let svc: TestService;
let ctx: FuzzContext;
let origin: string;
const serverErrors = new Map<string, number>();

beforeAll(async () => {
  // The service logs every unexpected error with console.error: kept (deduplicated) for the report, not printed.
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    const text = format(...args);
    const key = text.split("\n").slice(0, 2).join(" | ").slice(0, 300);
    serverErrors.set(key, (serverErrors.get(key) ?? 0) + 1);
  });
  svc = await startTestService({ processors: false });
  origin = svc.url.replace(/\/api$/, "");
  ctx = await setUp(svc);
}, 180_000);
afterAll(async () => {
  await svc?.stop();
  vi.restoreAllMocks();
});

/** A merchant with payments, a session, webhooks of both kinds and a vault with one token and one user. */
async function setUp(s: TestService): Promise<FuzzContext> {
  const ok = async (res: Promise<{ status: number; body: any; headers: Headers }>, what: string) => {
    const r = await res;
    if (r.status >= 300) throw new Error(`setup: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  const email = `fuzz-${Date.now()}@example.com`;
  const password = "correct horse battery staple";
  const main = await s.newMerchant({ email, password });
  const other = await s.newMerchant();
  const bareKey = (await createApiKey(s.deps.db, main.id)).key;
  const freshKeys = await Promise.all(Array.from({ length: 6 }, async () => (await createApiKey(s.deps.db, main.id)).key));
  const chain = s.deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  const usdt = chain.tokens.find((t) => t.symbol === "USDT")!.address;
  const usdc = chain.tokens.find((t) => t.symbol === "USDC")!.address;
  const wallet = privateKeyToAccount(generatePrivateKey()).address;

  const pay = async (apiKey: string, orderId: string) => {
    const r = await ok(
      s.http("POST", "/payments", { apiKey, body: { merchant: wallet, chainId: String(CHAIN_ID), token: usdt, amount: "12.5", orderId } }),
      "payment",
    );
    return (r.body.url as string).split("/pay/")[1]!;
  };
  const payments = [await pay(main.apiKey, "fuzz-order"), await pay(main.apiKey, "fuzz-order-2")];
  const otherPayment = await pay(other.apiKey, "other-order");
  const { rows } = await s.deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [payments[0]]);
  const verifyHash = redirectHash(s.deps.config.HASH_SECRET, rows[0]);

  await ok(s.http("PUT", "/v1/webhooks", { apiKey: main.apiKey, body: { url: "https://127.0.0.1/hook" } }), "webhook");
  const vault = await ok(
    s.http("POST", "/vault/v1/config", {
      apiKey: main.apiKey,
      body: {
        businessName: "Fuzz Business",
        walletAddress: wallet,
        enabledTokens: [{ chainId: CHAIN_ID, token: usdt, tokenSymbol: "USDT" }],
      },
    }),
    "vault",
  );
  await ok(
    s.http("PUT", "/vault/v1/config/webhooks", {
      apiKey: main.apiKey,
      body: { url: "https://127.0.0.1/vault-hook", events: ["deposit.*"] },
    }),
    "vault webhook",
  );
  const userId = "fuzz-user";
  await ok(
    s.http("POST", "/vault/v1/users", { apiKey: main.apiKey, body: { externalUserId: userId, chainId: CHAIN_ID, tokenAddress: usdt } }),
    "vault user",
  );
  const login = await ok(s.http("POST", "/auth/login", { body: { email, password } }), "login");
  const sessionToken = /cp_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")?.[1];
  if (!sessionToken) throw new Error("setup: no session cookie");
  // Reads that create something on first use (the Gas Tank's deposit addresses; the event feed positions the events
  // the setup wrote) happen now, before any snapshot.
  for (const k of [main.apiKey, bareKey, other.apiKey]) {
    await s.http("GET", "/balance", { apiKey: k });
    await s.http("GET", "/promo-status", { apiKey: k });
    await ok(s.http("GET", "/v1/events", { apiKey: k }), "event feed");
  }
  return {
    key: main.apiKey,
    bareKey,
    otherKey: other.apiKey,
    freshKeys,
    sessionCookie: `${SESSION_COOKIE}=${sessionToken}`,
    sessionName: SESSION_COOKIE,
    sessionToken,
    email,
    payments,
    otherPayment,
    verifyHash,
    publicId: vault.body.data.publicId,
    usdt,
    usdc,
    wallet,
    userId,
    chainId: CHAIN_ID,
  };
}

/** One request over real HTTP; a dropped connection is an outcome of its own (status 0). */
async function send(req: FuzzRequest): Promise<FuzzResponse> {
  const t0 = performance.now();
  try {
    const res = await fetch(origin + req.path, {
      method: req.method,
      // A fresh connection each: a socket the server closed after an early answer (413, 431) is never reused.
      headers: { ...req.headers, connection: "close" },
      // Bytes, so fetch adds no content-type of its own when a generator left it out.
      body: req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body,
      redirect: "manual",
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, text, contentType: res.headers.get("content-type") ?? "", ms: performance.now() - t0 };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: 0,
      text: `fetch failed: ${(e as Error).message} ${cause?.code ?? ""} ${cause?.message ?? ""}`,
      contentType: "",
      ms: performance.now() - t0,
    };
  }
}

/** A request that was refused: an error status, or a GraphQL mutation that returned no data. */
function refused(req: FuzzRequest, res: FuzzResponse): boolean {
  if (res.status >= 400 || res.status === 0) return true;
  if (!req.route.includes("graphql")) return false;
  try {
    const data = JSON.parse(res.text).data;
    return !data || Object.values(data).every((v) => v == null);
  } catch {
    return true;
  }
}

/** Each route's curated requests, then its random ones (seeded per route, so one route's change moves no other). */
function generate(gens: RouteGen[], phase: RouteGen["phase"]): FuzzRequest[] {
  return gens
    .map((g, i) => ({ g, i }))
    .filter(({ g }) => g.phase === phase)
    .flatMap(({ g, i }) => {
      const runs = Math.round(g.count * SCALE);
      return [...(g.fixed ?? []), ...(runs > 0 ? fc.sample(g.arb, { seed: SEED + i * 7919, numRuns: runs }) : [])];
    });
}

/**
 * Idempotency-Key values: a fresh key (the request is claimed, and its final answer kept), one key shared by every
 * route (another endpoint or body: 409), and invalid ones (400 once the API key is valid): empty, too long, not ASCII.
 */
const idempotencyKeyFor = (phase: string, i: number) =>
  [`fuzz-${SEED}-${phase}-${i}`, "fuzz-shared-key", "", "k".repeat(256), "é", "k".repeat(255)][Math.floor(i / 3) % 6]!;

/** One request in three, whatever its method, with an Idempotency-Key (only API-key POSTs honour it). */
const withIdempotencyKeys = (reqs: FuzzRequest[], phase: string): FuzzRequest[] =>
  reqs.map((req, i) => {
    if (i % 3 !== 1) return req;
    const key = idempotencyKeyFor(phase, i);
    const note = `${req.note}; Idempotency-Key ${JSON.stringify(key.slice(0, 24))}`;
    return { ...req, headers: { ...req.headers, "idempotency-key": key }, note };
  });

const total = (stats: Map<string, Map<number, number>>) =>
  [...stats.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0);

it("every route: no 5xx, no stack trace or SQL, nothing invalid accepted, no row written by a refused request", async () => {
  const gens = [...restRoutes(ctx), ...oddRoutes(ctx), ...graphqlRoutes(ctx), ...maybeRoutes(ctx)];
  const rejectPhase = withIdempotencyKeys(generate(gens, "reject"), "reject");
  const maybePhase = withIdempotencyKeys(generate(gens, "maybe"), "maybe");
  console.log(
    `[api-fuzz] seed ${SEED} (set FUZZ_SEED to change it), ${rejectPhase.length} requests built to be refused or read-only, ` +
      `${maybePhase.length} hostile but maybe valid, over ${new Set(gens.map((g) => g.route)).size} routes`,
  );

  const failures: Failure[] = [];
  const notes = new Map<string, number>();
  const stats = new Map<string, Map<number, number>>();
  const record = (req: FuzzRequest, res: FuzzResponse, phase: string) => {
    const label = `${phase} ${req.route}`;
    const s = stats.get(label) ?? new Map<number, number>();
    s.set(res.status, (s.get(res.status) ?? 0) + 1);
    stats.set(label, s);
    if (res.status === 0) failures.push({ kind: "connection failed", req, res, detail: res.text });
    else failures.push(...checkResponse(req, res, notes));
  };
  const snapshot = await snapshotQuery(svc.deps.db.pool, svc.deps.config.APP_SCHEMA);
  const t0 = Date.now();

  // Phase 1: batches of CONCURRENCY requests, the schema hashed after each batch. The clock moves a minute
  // on each batch, so the per-minute rate limits (counted on the service's clock) let requests reach validation.
  let before: Snapshot = await snapshot();
  for (let i = 0; i < rejectPhase.length; i += CONCURRENCY) {
    svc.clock.advance(61_000);
    const batch = rejectPhase.slice(i, i + CONCURRENCY);
    const responses = await Promise.all(batch.map(send));
    batch.forEach((req, j) => record(req, responses[j]!, "[1]"));
    const after = await snapshot();
    const changed = diffSnapshots(before, after);
    if (changed.length) {
      // A request built to be refused that was accepted wrote it (and is reported as such); otherwise every
      // refused request of the batch is a suspect.
      const accepted = batch.filter((req, k) => req.mustReject && !refused(req, responses[k]!));
      const suspects = batch.filter((req, k) => refused(req, responses[k]!) || req.method !== "GET");
      if (!accepted.length)
        for (const req of suspects.length ? suspects : batch)
          failures.push({
            kind: "write by a refused request (one of a batch)",
            req,
            res: responses[batch.indexOf(req)],
            detail: `changed: ${changed.join(", ")}`,
          });
    }
    before = after;
  }
  const t1 = Date.now();

  // Phase 2: one request at a time, so a write is attributed to exactly one request: allowed only if accepted.
  for (const req of maybePhase) {
    svc.clock.advance(61_000);
    const res = await send(req);
    record(req, res, "[2]");
    const after = await snapshot();
    const changed = diffSnapshots(before, after);
    if (changed.length && refused(req, res))
      failures.push({
        kind: "write by a refused request",
        req,
        res,
        detail: `${res.status} ${errorMessage(res.text)}; changed: ${changed.join(", ")}`,
      });
    before = after;
  }
  const t2 = Date.now();

  // Idempotency keys: every claim ended kept or forgotten (none left `processing`: no 5xx, no request that never
  // settled), keys were used (some responses kept), and every kept body is sealed with SECRET_KEY.
  const { rows: keyRows } = await svc.deps.db.pool.query<{ state: string; sealed: boolean; n: number }>(
    `SELECT state, coalesce(response_body LIKE 'enc:v1:%', false) AS sealed, count(*)::int AS n FROM idempotency_keys GROUP BY 1, 2`,
  );
  const keyCount = (state: string, sealed?: boolean) =>
    keyRows.filter((r) => r.state === state && (sealed === undefined || r.sealed === sealed)).reduce((n, r) => n + r.n, 0);
  const keyProblems = [
    ...(keyCount("processing") ? [`${keyCount("processing")} idempotency key(s) left processing`] : []),
    ...(keyCount("done", false) ? [`${keyCount("done", false)} kept response(s) not sealed`] : []),
    ...(keyCount("done") === 0 ? ["no response kept for an Idempotency-Key: the header was never honoured"] : []),
  ];

  const lines: string[] = [
    `[api-fuzz] seed ${SEED}: ${rejectPhase.length + maybePhase.length} requests in ${((t2 - t0) / 1000).toFixed(1)} s ` +
      `(phase 1 ${((t1 - t0) / 1000).toFixed(1)} s, phase 2 ${((t2 - t1) / 1000).toFixed(1)} s)`,
    "statuses by phase ([1] refused or read-only, [2] hostile but maybe valid) and route:",
    ...[...stats]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(
        ([route, s]) =>
          `  ${route.padEnd(52)} ${[...s]
            .sort((a, b) => a[0] - b[0])
            .map(([st, n]) => `${st}×${n}`)
            .join(" ")}`,
      ),
  ];
  if (notes.size)
    lines.push("", "reported, not failed: JavaScript values in error messages", ...[...notes].map(([k, n]) => `  ${k} ×${n}`));
  if (serverErrors.size) lines.push("", "errors the service logged (console.error):", ...[...serverErrors].map(([k, n]) => `  ×${n} ${k}`));
  if (failures.length) lines.push("", formatFailures(failures));
  lines.push("", `idempotency keys: ${keyCount("done")} responses kept${keyProblems.length ? `; ${keyProblems.join("; ")}` : ""}`);
  const report = lines.join("\n");
  const file = path.join(tmpdir(), `api-fuzz-${SEED}.txt`);
  writeFileSync(
    file,
    `${report}\n\nall failing requests:\n${failures.map((f) => `${f.kind} ${f.res?.status ?? ""}: ${describeRequest(f.req)}`).join("\n")}\n`,
  );
  // The per-route table only when something failed (or FUZZ_VERBOSE is set): a green run stays quiet.
  if (failures.length || keyProblems.length || process.env.FUZZ_VERBOSE) console.log(`${report}\n\n[api-fuzz] full report: ${file}`);
  else console.log(`[api-fuzz] ${total(stats)} requests, no failing check (report: ${file})`);
  expect(failures.length, `${failures.length} failing checks: see the grouped report above (seed ${SEED})`).toBe(0);
  expect(keyProblems).toEqual([]);
}, 300_000);
