import fc from "fast-check";

// Hostile values for the API fuzz test (api-fuzz.test.ts): strings, wrong JSON types, broken JSON text,
// query values, dates, cursors, path ids and header values. Pure generators: no service, no database.

/** JSON text spliced in as is: numbers JSON.stringify cannot write (1e400, -0, 30 digits), duplicate keys. */
export class RawJson {
  constructor(readonly text: string) {}
}
export const raw = (text: string) => new RawJson(text);

/** JSON text of a value that may hold RawJson parts (lone surrogates come out as `\udXXX` escapes). */
export function toJsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(",")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/**
 * Values of one kind: `consts` are curated and each is sent at least once (enumerated, one request each);
 * `arb` draws from them and from random values for the random part of the run.
 */
export type Pool<T = unknown> = { consts: readonly T[]; arb: fc.Arbitrary<T> };

export function pool<T>(consts: readonly T[], ...random: fc.Arbitrary<T>[]): Pool<T> {
  const fixed = fc.constantFrom(...consts);
  return {
    consts,
    arb: random.length ? fc.oneof({ weight: 2, arbitrary: fixed }, ...random.map((arbitrary) => ({ weight: 1, arbitrary }))) : fixed,
  };
}

export const union = <T>(...pools: Pool<T>[]): Pool<T> => ({
  consts: pools.flatMap((p) => p.consts),
  arb: fc.oneof(...pools.map((p) => p.arb)),
});

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nastyChar = fc.constantFrom(
  "\u0000",
  "\u0001",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\u202e",
  "\u200b",
  "\ufeff",
  "\ufffe",
  "\uffff",
  "😀",
  "é",
  "\u0301",
  "ß",
  "İ",
  "\\",
  '"',
  "'",
  "`",
  "<",
  "&",
  "%",
  "$",
  "{",
  "\n",
  "\r",
  "\t",
  " ",
);

/** Strings that break naive code: NUL, lone surrogates, control and bidi characters, injections, huge. */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "%00",
  "\ud800",
  "x\udfffy",
  "\udbff\udbff",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-Infinity",
  "-0",
  "0",
  "-1",
  "1e309",
  "9".repeat(400),
  "0x",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "' OR '1'='1",
  "1; DROP TABLE payments --",
  "$1",
  "%s%s%s%n",
  "${process.env}",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "../../../../etc/passwd",
  "\r\nSet-Cookie: x=1",
  "😀".repeat(101),
  "a".repeat(101),
  "a".repeat(201),
  "a".repeat(2001),
  "ｐａｙ",
  "\u202egnp.exe",
  "\u0000".repeat(50),
];

/** Text a field may legitimately hold but the storage, logs or pages may choke on (phase "maybe", one request each). */
export const HOSTILE_TEXT = [
  "\u0000",
  "a\u0000b",
  "\u0000".repeat(50),
  "%00",
  "\ud800",
  "x\udfffy",
  "\udbff\udbff",
  "\u202egnp.exe",
  "\u2028\u2029",
  "\ufeffx",
  "\u0007bell",
  "😀".repeat(25),
  "ｐａｙ",
  "' OR '1'='1",
  "<script>alert(1)</script>",
  "\r\nSet-Cookie: x=1",
  "{{7*7}}",
  "a".repeat(100),
  "a".repeat(200),
  "a".repeat(2000),
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  {
    weight: 4,
    arbitrary: fc.string({
      unit: fc.oneof(nastyChar, loneSurrogate, fc.string({ unit: "binary", minLength: 1, maxLength: 1 })),
      maxLength: 40,
    }),
  },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(1000, 20_000, 100_000), fc.constantFrom("a", "\u0000", "é", "😀")).map(([n, c]) => c.repeat(n)),
  },
);

/** Numbers JSON can carry but JavaScript or Postgres may not (as raw JSON text). */
export const NASTY_NUMBERS = [
  raw("1e400"),
  raw("-1e400"),
  raw("-0"),
  raw("123456789012345678901234567890"),
  raw("1e-400"),
  raw("0.1e1"),
  raw("9007199254740993"),
  -1,
  0,
  1.5,
  2147483648,
  -2147483649,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  8.64e15 + 1,
  1e300,
];

/** Any JSON value that is not a string (for fields that must be strings). */
export const notString: Pool = pool<unknown>(
  [0, -1, 1.5, true, false, null, [], {}, ["x"], { value: "x" }, raw("1e400"), raw("123456789012345678901234567890")],
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...NASTY_NUMBERS),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  hostileString.map((s) => [s]),
  hostileString.map((s) => ({ value: s })),
);

/** Any JSON value that is not a number. */
export const notNumber: Pool = pool<unknown>(
  ["1", "", "abc", "1e400", true, null, [], {}, [1]],
  hostileString,
  fc.integer().map(String),
  fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
);

/** Any JSON value that is not a boolean. */
export const notBoolean: Pool = pool<unknown>(["true", "false", "yes", 1, 0, "", [], {}, [true], raw("-0")], hostileString);

/** An arbitrary JSON value (for unknown keys and body replacements). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 3 }), notString.arb, hostileString);

/** A JSON body that is not an object: array, string, number, boolean, null. */
export const notObjectBody: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, "", "body", [], [{}], [null]),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  hostileString,
  fc.constantFrom(...NASTY_NUMBERS),
);

/** Keys that are not fields of any body, some of them dangerous for naive object handling. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "",
    " ",
    "\u0000",
    "a.b",
    "$where",
    "x".repeat(500),
  ),
  fc.string({ unit: fc.oneof(nastyChar, loneSurrogate), minLength: 1, maxLength: 8 }),
);

// ---- JSON text ----

/** Text that is not JSON (or not the JSON a route wants): truncated, single quotes, comments, BOM, trailing garbage. */
export const MALFORMED_JSON = [
  "{",
  "}",
  "[",
  "{]",
  '{"a":',
  '{"a"}',
  "{'a':1}",
  "{a:1}",
  "nul",
  "tru",
  "NaN",
  "undefined",
  "Infinity",
  '{"a":1,}',
  "[1,]",
  '"unterminated',
  '{"a":"\\x00"}',
  '{"a":"\\u00"}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  "\u0000",
  "{}garbage",
  "{}{}",
  "\ufeff{}",
  "0x10",
  "01",
  "1e",
  "--1",
  '{"a":01}',
  "/* comment */ {}",
  "{} // comment",
  '{"a":1}\u0000',
  " \t\r\n ",
  "\u2028{}",
  '{"a":"line\nbreak"}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
];

const parses = (t: string) => {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
};

export const malformedJson = (valid: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...MALFORMED_JSON) },
    // A valid body cut short anywhere (never the whole of it).
    { weight: 3, arbitrary: fc.nat({ max: Math.max(0, valid.length - 1) }).map((n) => valid.slice(0, n) || "{") },
    // A valid body with one byte replaced by a structural character.
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat({ max: Math.max(0, valid.length - 1) }), fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", "\u0000"))
        .map(([i, ch]) => valid.slice(0, i) + ch + valid.slice(i + 1))
        // A character replaced inside a string can leave valid JSON: only broken text counts.
        .filter((t) => !parses(t)),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 80 }).filter((t) => !parses(t)) },
  );

/** Deeply nested JSON (arrays or objects), optionally as the value of `field`. 10k levels are ~20 kB. */
export const deepJson = (field?: string): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(100, 1000, 10_000, 50_000), fc.constantFrom("array", "object")).map(([n, kind]) => {
    const inner = kind === "array" ? "[".repeat(n) + "]".repeat(n) : '{"a":'.repeat(n) + "1" + "}".repeat(n);
    return field ? `{${JSON.stringify(field)}:${inner}}` : inner;
  });

/** A body of about 2 MB: one huge string, a huge array, or whitespace around an object. */
export const hugeJson = (field: string): fc.Arbitrary<string> =>
  fc
    .constantFrom(
      () => `{${JSON.stringify(field)}:"${"a".repeat(2 * 1024 * 1024)}"}`,
      () => `[${"1,".repeat(1024 * 1024)}1]`,
      () => `${" ".repeat(2 * 1024 * 1024)}{}`,
      () => `{${Array.from({ length: 60_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`,
    )
    .map((make) => make());

/** Bytes that are not UTF-8 at all. */
export const invalidUtf8 = fc.oneof(
  fc.constantFrom(
    new Uint8Array([0xff, 0xfe, 0xfd]),
    new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]),
    new Uint8Array([0xed, 0xa0, 0x80]),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
);

export const ODD_CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "APPLICATION/JSON",
  "application/jsonx",
  "application/json-patch+json",
  "application/graphql",
  "application/xml",
  "*/*",
  ";;;",
  "application/json; " + "x=y; ".repeat(500),
];

// ---- query strings ----

/** One query parameter: `raw` is sent without encoding (malformed percent escapes on purpose). */
export type QueryPart = { name: string; value: string; raw?: boolean };

/** Percent-encodes UTF-8 (lone surrogates become U+FFFD, as any client would send them). */
export function pct(s: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export const queryString = (parts: QueryPart[]) =>
  parts.length ? "?" + parts.map((p) => (p.raw ? `${p.name}=${p.value}` : `${pct(p.name)}=${pct(p.value)}`)).join("&") : "";

/** Raw (unencoded) query values: NUL, broken escapes, overlong UTF-8. */
export const RAW_QUERY_VALUES = [
  "%00",
  "a%00b",
  "%",
  "%Z",
  "%ZZ",
  "%E0%A4%A",
  "%C0%80",
  "%ED%A0%80",
  "%F0%9F%98",
  "%FF%FE",
  "%2500",
  "+",
  "%2B1",
  "a&b",
  "=",
  "==",
];

/** Numbers and not-quite-numbers as query text. */
export const NUMBERISH = [
  "0",
  "-1",
  "1",
  "1.5",
  "1e2",
  "1e309",
  "0x10",
  " 1",
  "1 ",
  "+1",
  "01",
  "100",
  "101",
  "Infinity",
  "NaN",
  "9007199254740993",
  "99999999999999999999999",
  "2147483648",
  "-0",
  "1_000",
  "١٢",
];

export type QueryValue = { value: string; raw?: boolean };

export const hostileQueryValue: fc.Arbitrary<QueryValue> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map((value) => ({ value })) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBERISH).map((value) => ({ value })) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_QUERY_VALUES).map((value) => ({ value, raw: true })) },
);

/** Sent (one request each) in every query parameter: NUL, broken escapes, lone surrogates, huge, odd numbers. */
const HOSTILE_QUERY_CONSTS: QueryValue[] = [
  ...RAW_QUERY_VALUES.slice(0, 9).map((value) => ({ value, raw: true })),
  ...["\u0000", "\ud800", "", " ", "a".repeat(3000), "1e309", "-1", "[]", "' OR '1'='1"].map((value) => ({ value })),
];

/** A query parameter's pool: its own semi-valid values, the hostile constants, and random hostile values. */
export const queryPool = (...own: string[]): Pool<QueryValue> =>
  pool([...own.map((value) => ({ value })), ...HOSTILE_QUERY_CONSTS], hostileQueryValue);

/** Time bounds: ISO dates out of every range, impossible dates, Unix ms beyond JS and Postgres. */
export const HOSTILE_DATES = [
  "0000-01-01",
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00Z",
  "-000001-01-01T00:00:00Z",
  "275760-09-13T00:00:00.000Z",
  "275760-09-13T00:00:00.001Z",
  "+275760-09-13T00:00:00.000Z",
  "-271821-04-20T00:00:00Z",
  "-271821-04-19T00:00:00Z",
  "294277-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999999999Z",
  "2024-02-30",
  "2023-02-29",
  "2024-13-01",
  "2024-00-10",
  "2024-01-00",
  "2024-01-01T24:00:00Z",
  "2024-01-01T23:59:60Z",
  "2024-01-01T00:00:00+99:99",
  "2024-01-01T00:00:00+23:59",
  "2024-01-01T00:00:00-23:59",
  "2024-01-01T00:00:00 05:00",
  "2024-01-01T00:00:00.1234567890123Z",
  "20240230T000000Z",
  "2024-W01",
  "2024-001",
  "2024",
  "March 7, 2024",
  "8640000000000000",
  "8640000000000001",
  "99999999999999999999",
  "1e3",
  "-1",
  "0",
  "",
  "1704067200000",
  "2024-01-01T00:00:00Z",
];

// ---- cursors ----

const b64url = (s: string | Uint8Array) => Buffer.from(s).toString("base64url");

const CURSOR_ATS = [
  "2024-01-01T00:00:00.000000Z",
  "0000-01-01T00:00:00.000000Z",
  "0001-01-01T00:00:00.000000Z",
  "1969-12-31T23:59:59.999999Z",
  "9999-12-31T23:59:59.999999Z",
  "2024-02-30T00:00:00.000000Z",
  "2024-01-01T24:00:00.000000Z",
  "275760-09-13T00:00:00.000000Z",
  "294277-01-01T00:00:00.000000Z",
  "infinity",
  "-infinity",
  "epoch",
  "now",
  "allballs",
  "",
];

/** Cursors nobody issued: crafted JSON of out-of-range or impossible instants, wrong ids, random bytes, other encodings. */
export const forgedCursor = (uuids: string[]): Pool<string> => {
  const id = uuids[0]!;
  const consts = [
    ...CURSOR_ATS.map((at) => b64url(JSON.stringify([at, id]))),
    b64url(JSON.stringify(["2024-01-01T00:00:00.000000Z", id.toUpperCase()])),
    b64url(JSON.stringify(["2024-01-01T00:00:00.000000Z", "not-a-uuid"])),
    b64url(JSON.stringify([1704067200000, id])),
    b64url(JSON.stringify(["2024-01-01T00:00:00.000000Z", id, 1])),
    b64url(JSON.stringify({ at: "2024-01-01T00:00:00.000000Z", id })),
    b64url(JSON.stringify(["2024-01-01T00:00:00.000000Z\u0000", id])),
    b64url(`1|${id}`),
    b64url(JSON.stringify(["2024-01-01T00:00:00.000000Z", id])) + "=",
    Buffer.from(JSON.stringify(["2024-01-01T00:00:00.000000Z", id])).toString("base64"),
    `1|${id}`,
    "-1",
    "0",
    "null",
    "=",
    "A",
    "eyJ",
    "__",
    "%00",
  ];
  const uuid = fc.oneof(fc.uuid(), fc.constantFrom(...uuids));
  const at = fc.oneof(
    fc.constantFrom(...CURSOR_ATS),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString().replace("Z", "000Z")),
  );
  const crafted: fc.Arbitrary<unknown> = fc.oneof(
    fc.tuple(at, uuid).map(([a, u]) => [a, u]),
    fc.tuple(at, uuid).map(([a, u]) => [a, u.toUpperCase()]),
    fc.tuple(fc.integer(), uuid).map(([n, u]) => [n, u]),
    fc.tuple(at, hostileString).map(([a, s]) => [a, s]),
    fc.tuple(at, uuid, anyJson).map((x) => x),
    anyJson,
  );
  return pool(
    consts,
    crafted.map((v) => b64url(toJsonText(v))),
    fc.uint8Array({ maxLength: 80 }).map(b64url),
    fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString("base64")),
    uuid.map((u) => b64url(`1|${u}`)),
    hostileString,
  );
};

// ---- path ids ----

/** Path segments where an id belongs: real ids, other UUIDs, NUL, traversal, broken escapes, very long. */
export const hostileId = (real: string[]): Pool<string> =>
  pool(
    [
      ...real,
      real[0]!.toUpperCase(),
      "00000000-0000-0000-0000-000000000000",
      "%00",
      "a%00b",
      `${real[0]}%00`,
      "..",
      "%2e%2e",
      "%2F",
      "%ZZ",
      "%C0%AF",
      "%ED%A0%80",
      "null",
      "undefined",
      "-1",
      "0",
      "1e309",
      "x".repeat(5000),
      "%20",
      "' OR 1=1 --",
    ],
    fc.uuid(),
    hostileString.filter((s) => s.length > 0 && s.length < 3000).map(pct),
  );

// ---- headers ----

/** x-api-key values that are never a valid key (Node refuses NUL, CR and LF in headers, so none of those). */
export const badApiKey = (valid: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 80 }),
    fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 }),
    fc.constantFrom(
      valid + "x",
      valid.slice(0, -1),
      valid.toUpperCase(),
      `${valid}, ${valid}`,
      `${valid}\t${valid}`,
      "x".repeat(8000),
      "null",
      "undefined",
      "Bearer " + valid,
      "%00",
      "' OR '1'='1",
    ),
  );

/** A cookie header whose session is never valid. */
export const badCookie = (name: string, valid: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }).map((v) => `${name}=${v}`),
    fc.constantFrom(
      `${name}=`,
      `${name}=${valid}x`,
      `${name}=%00`,
      `${name}=%ZZ`,
      `${name}="${valid}`,
      `${name}=${"x".repeat(8000)}`,
      `${name}=${valid.toUpperCase()}`,
      `other=1; ${name}=nope`,
      `;;;`,
      `=${valid}`,
    ),
  );
