import fc from "fast-check";
import { getIntrospectionQuery } from "graphql";
import type { FuzzRequest } from "./fuzz-check.js";
import { enumerateBodies, invalidBody, maybeValidBody } from "./fuzz-bodies.js";
import type { RouteGen } from "./fuzz-routes.js";
import { paymentSpec, type FuzzContext } from "./fuzz-specs.js";
import {
  anyJson,
  badApiKey,
  forgedCursor,
  HOSTILE_DATES,
  HOSTILE_STRINGS,
  hostileId,
  hostileString,
  MALFORMED_JSON,
  NASTY_NUMBERS,
  notString,
  ODD_CONTENT_TYPES,
  pct,
  raw,
  RawJson,
  toJsonText,
} from "./fuzz-values.js";

// /api/graphql (api/routes/graphql.ts): documents with hostile arguments and variables, mutations built to be
// refused, broken documents, deep and wide ones, and request shapes GraphQL over HTTP does not allow.

const PAYMENT = "paymentId orderId status amount createdAt token { symbol } fees { totalFee } unexpectedFunds { token units }";
const LIST = `query List($limit: Int, $cursor: String, $status: String, $createdAfter: String, $createdBefore: String, $orderId: String) {
  payments(limit: $limit, cursor: $cursor, status: $status, createdAfter: $createdAfter, createdBefore: $createdBefore, orderId: $orderId) {
    data { ${PAYMENT} } nextCursor hasMore } }`;
const VAULT_USER = `query U($e: String!, $c: Int, $t: String) { vaultUser(externalUserId: $e, chainId: $c, tokenAddress: $t) {
  externalUserId depositAddress totalDeposited depositCount lastDepositAt } }`;
const VAULT_DEPOSITS = `query D($l: Int, $s: String, $e: String) { vaultDeposits(limit: $l, status: $s, externalUserId: $e) { total deposits { depositId amount } } }`;
const ACCOUNT = `{ balance { balance depositAddresses { chainId address } } promoStatus { freeTransactions { eligible used remaining } }
  vaultConfig { publicId businessName enabledTokens { chainId tokenSymbol } } }`;
const ONE = `query One($id: String!) { payment(paymentId: $id) { ${PAYMENT} } }`;
const CREATE = `mutation C($input: CreatePaymentInput!) { createPayment(input: $input) { url paymentId expiresAt amountDue } }`;
const WITHDRAW = `mutation W($id: String!) { withdrawPayment(paymentId: $id) { paymentId status } }`;
const RECOVER = `mutation R($id: String!, $t: String!) { recoverFunds(paymentId: $id, token: $t) { recoveryId status } }`;

const MALFORMED_DOCS = [
  "{",
  "query {",
  "mutation",
  "{ payments(limit: ) { hasMore } }",
  "{ payments { nope } }",
  "subscription { payments { hasMore } }",
  "query Q { balance { balance } } query Q { balance { balance } }",
  "query A { balance { balance } } query B { promoStatus { freeTransactions { used } } }",
  "fragment F on Query { ...F } { ...F }",
  "fragment F on Query { balance { balance } } { ...F ...F ...F }",
  '{ payments @skip(if: "x") { hasMore } }',
  "{ payments @include(if: $undefined) { hasMore } }",
  "\u0000",
  "{ balance(x: 1) { balance } }",
  "# only a comment",
  'query ($a: Int = "x") { __typename }',
  "query ($a: Int!) { payments(limit: $a) { hasMore } }",
  "query ($a: [[Int]]) { payments(limit: $a) { hasMore } }",
  "{ payments { data } }",
  "{ __type(name: 1) { name } }",
  '{ __type(name: "Payment") { name fields { name } } }',
  "{ __typename }",
  "mutation { createPayment { url } }",
  "mutation { createPayment(input: {}) { url } }",
  'mutation { withdrawPayment(paymentId: "\\u0000") { status } }',
  '{ payments(cursor: "\\ud800") { hasMore } }',
  "{ payments(limit: 1) { hasMore } ",
  "{ ...on Query { balance { balance } } }",
  "{ a: balance { balance } a: promoStatus { freeTransactions { used } } }",
];

/** A GraphQL literal of a value (objects and lists as GraphQL writes them; strings as JSON escapes). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(literal).join(", ")}]`;
  if (typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${/^[_A-Za-z][_0-9A-Za-z]*$/.test(k) ? k : "k"}: ${literal(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v) ?? "null";
}

const intish = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 101, 2147483647, 2147483648, -2147483649, 1.5, "10", null, [], {}, true, ...NASTY_NUMBERS),
);
const stringish = fc.oneof({ weight: 3, arbitrary: hostileString }, { weight: 1, arbitrary: notString.arb });

type Doc = { query?: unknown; variables?: unknown; operationName?: unknown; note: string; mutation?: boolean };

function documents(ctx: FuzzContext): fc.Arbitrary<Doc> {
  const uuids = [...ctx.payments, ctx.otherPayment];
  const ids = fc.oneof(hostileId(uuids).arb.map(decodeURIComponentSafe), stringish);
  const listVars = fc.record(
    {
      limit: intish,
      cursor: fc.oneof(forgedCursor(uuids).arb, stringish),
      status: stringish,
      createdAfter: fc.oneof(fc.constantFrom(...HOSTILE_DATES), stringish),
      createdBefore: fc.oneof(fc.constantFrom(...HOSTILE_DATES), stringish),
      orderId: stringish,
    },
    { requiredKeys: [] },
  );
  const inlineList = fc
    .record(
      {
        limit: intish,
        cursor: fc.oneof(forgedCursor(uuids).arb, hostileString),
        createdAfter: fc.constantFrom(...HOSTILE_DATES),
        orderId: hostileString,
      },
      { requiredKeys: [] },
    )
    .map((args) => {
      const a = Object.entries(args).map(([k, v]) => `${k}: ${literal(v)}`);
      return {
        query: `{ payments${a.length ? `(${a.join(", ")})` : ""} { data { paymentId } hasMore nextCursor } }`,
        note: "inline list arguments",
      };
    });
  const paymentBody = invalidBody(paymentSpec(ctx)).filter((b) => typeof b.body === "string");
  const deep = fc.constantFrom(...DEEP_SIZES).chain((n) => fc.constantFrom(...deepDocs(n)));
  const wide = fc.constantFrom(...WIDE_SIZES).map(wideDoc);
  return fc.oneof(
    { weight: 6, arbitrary: listVars.map((variables) => ({ query: LIST, variables, note: "list variables" })) },
    { weight: 3, arbitrary: inlineList },
    {
      weight: 3,
      arbitrary: fc
        .record({ e: stringish, c: intish, t: fc.oneof(fc.constantFrom(ctx.usdt, ctx.usdc, "0x123"), stringish) }, { requiredKeys: [] })
        .map((variables) => ({ query: VAULT_USER, variables, note: "vaultUser variables" })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ l: intish, s: stringish, e: stringish }, { requiredKeys: [] })
        .map((variables) => ({ query: VAULT_DEPOSITS, variables, note: "vaultDeposits variables" })),
    },
    { weight: 1, arbitrary: fc.constant({ query: ACCOUNT, note: "account fields" }) },
    {
      weight: 4,
      arbitrary: paymentBody.map((b) => ({
        query: CREATE,
        variables: { input: raw(b.body as string) },
        note: `createPayment ${b.note}`,
        mutation: true,
      })),
    },
    { weight: 2, arbitrary: ids.map((id) => ({ query: ONE, variables: { id }, note: "payment" })) },
    { weight: 2, arbitrary: ids.map((id) => ({ query: WITHDRAW, variables: { id }, note: "withdrawPayment", mutation: true })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(ids, fc.oneof(fc.constantFrom("0x0000000000000000000000000000000000000000", ctx.usdt), stringish))
        .map(([id, t]) => ({ query: RECOVER, variables: { id, t }, note: "recoverFunds", mutation: true })),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...MALFORMED_DOCS)
        .map((query) => ({ query, note: "malformed document", mutation: query.includes("mutation") })),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 80 }).map((query) => ({ query, note: "random document" })) },
    { weight: 1, arbitrary: fc.nat({ max: LIST.length - 1 }).map((n) => ({ query: LIST.slice(0, n), note: "truncated document" })) },
    { weight: 2, arbitrary: deep },
    { weight: 1, arbitrary: wide },
    { weight: 1, arbitrary: fc.constant({ query: getIntrospectionQuery(), note: "introspection" }) },
    {
      weight: 2,
      arbitrary: fc
        .record(
          {
            query: fc.oneof(notString.arb, fc.constant(LIST)),
            variables: fc.oneof(anyJson, fc.constant(undefined)),
            operationName: fc.oneof(anyJson, hostileString, fc.constant("Nope")),
          },
          { requiredKeys: [] },
        )
        .map((d) => ({ ...d, note: "request fields of wrong types" })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ query: `{ payments(orderId: "${"a".repeat(21 * 1024)}") { hasMore } }`, note: "document over 20 kB" }),
    },
  );
}

const DEEP_SIZES = [50, 500, 2000, 6000];
const deepDocs = (n: number): Doc[] => [
  { query: "{ a".repeat(n) + " }".repeat(n), note: `selection ${n} deep` },
  { query: `{ payments(limit: ${"[".repeat(n)}1${"]".repeat(n)}) { hasMore } }`, note: `list literal ${n} deep` },
  { query: `{ payments(orderId: ${"{a: ".repeat(n)}1${"}".repeat(n)}) { hasMore } }`, note: `object literal ${n} deep` },
  { query: LIST, variables: { limit: raw("[".repeat(n) + "]".repeat(n)) }, note: `variable ${n} deep` },
  {
    query: `fragment F0 on Query { __typename } ${Array.from({ length: Math.min(n, 400) }, (_, i) => `fragment F${i + 1} on Query { ...F${i} }`).join(" ")} { ...F${Math.min(n, 400)} }`,
    note: `fragment chain ${Math.min(n, 400)}`,
  },
];
const WIDE_SIZES = [11, 50, 300];
const wideDoc = (n: number): Doc => ({
  query: `{ ${Array.from({ length: n }, (_, i) => `a${i}: payments(limit: 100) { data { paymentId } }`).join(" ")} }`,
  note: `${n} aliased root fields`,
});

/** Every curated document once: broken, deep, wide, and each curated argument value. */
function fixedDocs(ctx: FuzzContext): Doc[] {
  const uuids = [...ctx.payments, ctx.otherPayment];
  const ints = [0, -1, 101, 2147483647, 2147483648, -2147483649, 1.5, "10", [], {}, true, ...NASTY_NUMBERS];
  const strings = [...HOSTILE_STRINGS, ...notString.consts];
  return [
    ...MALFORMED_DOCS.map((query) => ({ query, note: "malformed document", mutation: query.includes("mutation") })),
    ...DEEP_SIZES.flatMap(deepDocs),
    ...WIDE_SIZES.map(wideDoc),
    { query: getIntrospectionQuery(), note: "introspection" },
    { query: ACCOUNT, note: "account fields" },
    ...ints.map((limit) => ({ query: LIST, variables: { limit }, note: "list limit" })),
    ...forgedCursor(uuids).consts.map((cursor) => ({ query: LIST, variables: { cursor }, note: "list cursor" })),
    ...HOSTILE_DATES.map((createdAfter) => ({ query: LIST, variables: { createdAfter }, note: "list createdAfter" })),
    ...strings.map((orderId) => ({ query: LIST, variables: { orderId }, note: "list orderId" })),
    ...strings.slice(0, 20).map((e) => ({ query: VAULT_USER, variables: { e }, note: "vaultUser externalUserId" })),
    ...ints.map((c) => ({ query: VAULT_USER, variables: { e: ctx.userId, c }, note: "vaultUser chainId" })),
    ...ints.map((l) => ({ query: VAULT_DEPOSITS, variables: { l }, note: "vaultDeposits limit" })),
    ...hostileId(uuids).consts.map((id) => ({
      query: WITHDRAW,
      variables: { id: decodeURIComponentSafe(id) },
      note: "withdrawPayment",
      mutation: true,
    })),
    ...hostileId(uuids).consts.map((id) => ({
      query: RECOVER,
      variables: { id: decodeURIComponentSafe(id), t: ctx.usdt },
      note: "recoverFunds",
      mutation: true,
    })),
    ...strings
      .slice(0, 20)
      .map((t) => ({ query: RECOVER, variables: { id: ctx.payments[0], t }, note: "recoverFunds token", mutation: true })),
    // The same checks as POST /payments (enumerated there in full): the fields whose types GraphQL does not fix.
    ...enumerateBodies(paymentSpec(ctx), "invalid")
      .filter((b) => /amount|expiresAt|chainId|customPriceUsd|blockConfirmations|orderId/.test(b.note))
      .map((b) => ({
        query: CREATE,
        variables: { input: raw(b.body as string) },
        note: `createPayment ${b.note}`,
        mutation: true,
      })),
  ];
}

function decodeURIComponentSafe(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const bodyOf = (d: Doc) => {
  const parts = [`"query":${toJsonText(d.query)}`];
  if (d.variables !== undefined) parts.push(`"variables":${toJsonText(d.variables)}`);
  if (d.operationName !== undefined) parts.push(`"operationName":${toJsonText(d.operationName)}`);
  return `{${parts.join(",")}}`;
};

export function graphqlRoutes(ctx: FuzzContext): RouteGen[] {
  const headers = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(ctx.key, ctx.otherKey).map((k) => ({ "x-api-key": k })) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: badApiKey(ctx.key).map((k) => ({ "x-api-key": k })) },
  );
  const accept = fc.constantFrom("application/json", "application/graphql-response+json", "*/*", "text/html");
  const docs = documents(ctx);
  const post = fc
    .tuple(
      headers,
      accept,
      fc.oneof(
        { weight: 12, arbitrary: docs.map((d) => ({ body: bodyOf(d), ct: "application/json", note: d.note, mutation: !!d.mutation })) },
        {
          weight: 1,
          arbitrary: docs.map((d) => ({
            body: `[${bodyOf(d)}]`,
            ct: "application/json",
            note: `batch: ${d.note}`,
            mutation: !!d.mutation,
          })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(docs, fc.constantFrom(...ODD_CONTENT_TYPES))
            .map(([d, ct]) => ({ body: bodyOf(d), ct, note: `content-type ${ct.slice(0, 30)}: ${d.note}`, mutation: !!d.mutation })),
        },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(...MALFORMED_JSON)
            .map((body) => ({ body, ct: "application/json", note: "malformed JSON", mutation: false })),
        },
        {
          weight: 1,
          arbitrary: fc.constant({
            body: bodyOf({ query: LIST, variables: { orderId: "a".repeat(70 * 1024) }, note: "" }),
            ct: "application/json",
            note: "body over 64 kB",
            mutation: false,
          }),
        },
      ),
    )
    .map(([h, a, b]): FuzzRequest => ({
      route: "POST /api/graphql",
      method: "POST",
      path: "/api/graphql",
      headers: { ...h, accept: a, "content-type": b.ct },
      body: b.body,
      note: b.note,
      mustReject: b.mutation,
    }));
  const get = fc
    .tuple(headers, docs, fc.option(fc.constantFrom("{", "[]", "1", '"x"', "null", '{"limit": 1e400}')))
    .map(([h, d, badVars]): FuzzRequest => {
      const params: string[] = [];
      if (typeof d.query === "string" && d.query.length < 8000) params.push(`query=${pct(d.query)}`);
      else if (d.query !== undefined) params.push(`query=${pct(toJsonText(d.query).slice(0, 8000))}`);
      const vars = badVars ?? (d.variables === undefined ? undefined : toJsonText(d.variables));
      if (vars !== undefined && vars.length < 8000) params.push(`variables=${pct(vars)}`);
      if (typeof d.operationName === "string") params.push(`operationName=${pct(d.operationName)}`);
      return {
        route: "GET /api/graphql",
        method: "GET",
        path: `/api/graphql${params.length ? "?" + params.join("&") : ""}`,
        headers: h,
        note: `GET ${d.note}${badVars ? ", malformed variables" : ""}`,
        mustReject: !!d.mutation,
      };
    });
  /** A createPayment mutation whose input is a generated REST payment body. */
  const createPayment = (b: { body: unknown; note: string }): FuzzRequest => ({
    route: "POST /api/graphql createPayment",
    method: "POST",
    path: "/api/graphql",
    headers: { "x-api-key": ctx.key, "content-type": "application/json" },
    body: bodyOf({ query: CREATE, variables: { input: raw(b.body as string) }, note: "" }),
    note: b.note,
    mustReject: false,
  });
  const maybe = maybeValidBody(paymentSpec(ctx)).map(createPayment);
  const postOf = (d: Doc): FuzzRequest => ({
    route: "POST /api/graphql",
    method: "POST",
    path: "/api/graphql",
    headers: { "x-api-key": ctx.key, "content-type": "application/json" },
    body: bodyOf(d),
    note: d.note,
    mustReject: !!d.mutation,
  });
  const shapes: Doc[] = [
    { query: 1, note: "query not a string" },
    { query: [LIST], note: "query an array" },
    { query: null, note: "query null" },
    { query: "", note: "empty query" },
    { query: LIST, variables: "x", note: "variables a string" },
    { query: LIST, variables: [1], note: "variables an array" },
    { query: LIST, operationName: 1, note: "operationName a number" },
    { query: LIST, operationName: "Nope", note: "unknown operationName" },
    { query: LIST, operationName: "\u0000", note: "operationName NUL" },
  ];
  return [
    {
      route: "POST /api/graphql",
      phase: "reject",
      count: 150,
      arb: post,
      fixed: [
        ...[...fixedDocs(ctx), ...shapes].map(postOf),
        ...MALFORMED_JSON.map((body) => ({ ...postOf({ note: "" }), body, note: "malformed JSON" })),
        ...ODD_CONTENT_TYPES.map((ct) => ({
          ...postOf({ query: LIST, note: "" }),
          headers: { "x-api-key": ctx.key, "content-type": ct },
          note: `content-type ${ct.slice(0, 30)}`,
        })),
        { ...postOf({ query: LIST, note: "" }), body: `[${bodyOf({ query: LIST, note: "" })}]`, note: "batch" },
      ],
    },
    { route: "GET /api/graphql", phase: "reject", count: 40, arb: get },
    {
      route: "POST /api/graphql createPayment",
      phase: "maybe",
      count: 5,
      arb: maybe,
      fixed: enumerateBodies(paymentSpec(ctx), "hostile")
        .filter((b) => /orderId|expiresAt|amount/.test(b.note))
        .map(createPayment),
    },
  ];
}
