import type pg from "pg";

// What the API fuzz test asserts about each response (no 5xx, no stack trace, no SQL, nothing accepted that was
// built to be refused), the snapshot that shows whether a refused request wrote anything, and the report of
// failures grouped by route, status and message.

/** One generated request. `path` is relative to the service's origin and already encoded. */
export type FuzzRequest = {
  /** The route it aims at, e.g. `POST /api/payments`: failures are grouped by it. */
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What the generator did, e.g. `wrong type: amount`. */
  note: string;
  /** Built to be invalid whatever the key: a 2xx (or GraphQL data for the mutation) is a failure. */
  mustReject: boolean;
};

export type FuzzResponse = { status: number; text: string; contentType: string; ms: number };

export type Failure = { kind: string; req: FuzzRequest; res?: FuzzResponse; detail: string };

const STACK_PATTERNS: [string, RegExp][] = [
  ["stack frame", /\bat (?:async )?[\w$.<>[\] ]*\(?(?:file:\/\/)?\/?[\w@./-]+\.[cm]?[jt]sx?:\d+:\d+\)?/],
  ["stack frame", /\n\s+at [\w$.<>]+ \(/],
  ["node_modules", /node_modules/],
  ["source path", new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))],
  ["error with stack", /\b(?:Type|Range|Syntax|Reference)?Error: [^\n]*\n\s+at /],
];

const SQL_PATTERNS: [string, RegExp][] = [
  ["SQL SELECT", /\bSELECT\b[\s\S]{0,300}\bFROM\b/],
  ["SQL INSERT", /\bINSERT INTO\b/],
  ["SQL UPDATE", /\bUPDATE\s+\S+\s+SET\b/],
  ["SQL DELETE", /\bDELETE FROM\b/],
  ["SQL syntax error", /syntax error at/i],
  ["SQL constraint", /violates [\w-]+ (?:key )?constraint/i],
  ["SQL relation", /relation "/],
  ["pg_ name", /\bpg_[a-z_]+/],
  ["SQL invalid input", /invalid input syntax for/i],
  ["SQL encoding", /invalid byte sequence for encoding/i],
  ["SQL out of range", /(?:field value|value) out of range/i],
  ["SQL column", /column "[^"]*" (?:does not exist|of relation)/],
  ["SQL cast", /\$\d+::[a-z]+/],
  ["SQL parameter", /bind message supplies|could not determine data type of parameter/],
];

/** Leaks that the request did not itself contain (an error message may echo the input back). */
function leaks(req: FuzzRequest, text: string): string[] {
  const sent = decodeSafe(req.path) + "\n" + (typeof req.body === "string" ? req.body : "");
  const found: string[] = [];
  for (const [name, re] of [...STACK_PATTERNS, ...SQL_PATTERNS]) {
    const m = re.exec(text);
    if (m && !re.test(sent)) found.push(`${name}: ${JSON.stringify(m[0].slice(0, 120))}`);
  }
  return found;
}

const decodeSafe = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Static files the pay page serves: their text is code, not an error message. */
const isAsset = (req: FuzzRequest) => /^\/pay\/assets\/pay\.(?:css|js)(?:\?|$)/.test(req.path);

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The GraphQL mutation fields whose non-null data means a write happened. */
const MUTATION_FIELDS = ["createPayment", "withdrawPayment", "cancelPayment", "recoverFunds"];

/** Every failure of one response (empty: it passed). `notes` collects things worth reporting but not failing. */
export function checkResponse(req: FuzzRequest, res: FuzzResponse, notes: Map<string, number>): Failure[] {
  const failures: Failure[] = [];
  const fail = (kind: string, detail: string) => failures.push({ kind, req, res, detail });
  if (res.status >= 500) fail(`HTTP ${res.status}`, errorMessage(res.text));
  if (!isAsset(req)) for (const leak of leaks(req, res.text)) fail("leak in body", leak);

  const json = parseJson(res.text) as Record<string, unknown> | undefined;
  const isGraphql = req.route.includes("/api/graphql");
  if (isGraphql && json && Array.isArray(json.errors)) {
    for (const e of json.errors as { message?: string; extensions?: { code?: string; http?: number } }[]) {
      if ((e.extensions?.http ?? 0) >= 500 || e.extensions?.code === "INTERNAL_SERVER_ERROR")
        fail("GraphQL internal error", `${e.extensions?.code} http=${e.extensions?.http}: ${e.message}`);
    }
  }
  if (req.mustReject) {
    if (isGraphql) {
      const data = json?.data as Record<string, unknown> | null | undefined;
      const written = MUTATION_FIELDS.filter((f) => data?.[f] != null);
      if (written.length) fail("accepted invalid input", `GraphQL ${written.join(", ")} returned data`);
    } else if (res.status >= 200 && res.status < 300) fail("accepted invalid input", `status ${res.status}`);
  }
  // Reported, not asserted: JavaScript leaking into error messages.
  const message = json ? errorMessage(res.text) : "";
  if (
    res.status >= 400 &&
    /\b(?:undefined|NaN)\b|\[object Object\]/.test(message) &&
    !/\b(?:undefined|NaN)\b|\[object Object\]/.test(decodeSafe(req.path) + String(req.body ?? ""))
  )
    notes.set(
      `${req.route} ${res.status}: ${message.slice(0, 160)}`,
      (notes.get(`${req.route} ${res.status}: ${message.slice(0, 160)}`) ?? 0) + 1,
    );
  return failures;
}

/** The error message of a body, whatever its family (`{error}`, GraphQL `errors`), else its start. */
export function errorMessage(text: string): string {
  const json = parseJson(text) as Record<string, unknown> | undefined;
  if (json && typeof json.error === "string") return json.error;
  if (json && Array.isArray(json.errors)) return (json.errors as { message?: string }[]).map((e) => e.message).join(" | ");
  return text.slice(0, 200);
}

// ---- database snapshot ----

/**
 * Tables a request may change without having been accepted: rate-limit counters, failed-login counters (they
 * count refused requests by design), caches and heartbeats, and the responses kept for idempotency keys (a refused
 * request's final 4xx is kept by design: docs/payments.md "Idempotency keys"; api-fuzz.test.ts checks that table on its own).
 */
const isVolatile = (table: string) =>
  /^rate_limit/.test(table) || ["login_attempts", "processor_state", "token_metadata", "idempotency_keys"].includes(table);
/** Columns a rejected request may still touch: an API key's last use is recorded when the key is checked. */
const VOLATILE_COLUMNS = ["last_used_at"];

export type Snapshot = Map<string, string>;

/** One hash of every row of every table of the app schema (volatile ones left out). */
export async function snapshotQuery(pool: pg.Pool, schema: string): Promise<() => Promise<Snapshot>> {
  const { rows } = await pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
    [schema],
  );
  const tables = rows.map((r) => r.table_name).filter((t) => !isVolatile(t));
  const drop = `ARRAY[${VOLATILE_COLUMNS.map((c) => `'${c}'`).join(",")}]`;
  const sql = tables
    .map(
      (t) =>
        `SELECT '${t}' AS t, count(*)::int AS n, md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS h
           FROM (SELECT (to_jsonb(r) - ${drop}::text[])::text AS x FROM "${schema}"."${t}" r) s`,
    )
    .join("\nUNION ALL\n");
  return async () => {
    const r = await pool.query<{ t: string; n: number; h: string }>(sql);
    return new Map(r.rows.map((x) => [x.t, `${x.n}:${x.h}`]));
  };
}

/** Tables whose rows changed, with their row counts before and after. */
export function diffSnapshots(a: Snapshot, b: Snapshot): string[] {
  const out: string[] = [];
  for (const [t, v] of b) if (a.get(t) !== v) out.push(`${t} (rows ${a.get(t)?.split(":")[0]} -> ${v.split(":")[0]})`);
  return out;
}

// ---- report ----

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
const bodyText = (b: FuzzRequest["body"]) =>
  b === undefined
    ? ""
    : typeof b === "string"
      ? JSON.stringify(short(b, 160))
      : `<${b.length} bytes: ${Buffer.from(b.slice(0, 24)).toString("hex")}>`;

/** A message with the variable parts (ids, numbers, quoted input) blurred, so one root cause is one group. */
const blur = (s: string) =>
  s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/0x[0-9a-fA-F]{6,}/g, "<hex>")
    .replace(/"[^"]{20,}"/g, '"…"')
    .replace(/\d+/g, "<n>")
    .slice(0, 160);

export function describeRequest(req: FuzzRequest): string {
  const key = req.headers["x-api-key"];
  const auth = key === undefined ? "no key" : `key ${short(JSON.stringify(key), 40)}`;
  const extra = Object.entries(req.headers)
    .filter(([k]) => k !== "x-api-key")
    .map(([k, v]) => `${k}: ${short(v, 60)}`)
    .join("; ");
  return `${req.method} ${short(req.path, 200)} [${auth}${extra ? "; " + extra : ""}] body=${bodyText(req.body)} (${req.note})`;
}

/** Failures grouped by route, kind, status and blurred message: one group per root cause, with a few examples. */
export function formatFailures(failures: Failure[], examples = 3): string {
  const groups = new Map<string, Failure[]>();
  for (const f of failures) {
    const key = `${f.req.route} | ${f.kind} | ${f.res?.status ?? "-"} | ${blur(f.detail)}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const lines = [`${failures.length} failing checks in ${groups.size} groups:`];
  for (const [key, fs] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    lines.push(`\n● ${key}  ×${fs.length}`);
    for (const f of fs.slice(0, examples)) {
      lines.push(`    ${describeRequest(f.req)}`);
      if (f.res) lines.push(`      -> ${f.res.status} ${short(f.res.text.replace(/\s+/g, " "), 240)}`);
      else lines.push(`      -> ${f.detail}`);
    }
  }
  return lines.join("\n");
}
