import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { createApp } from "../../../api/app.js";
import { attachMerchant, createAgent } from "../../../modules/agents/index.js";
import { ROUTE_SCHEMAS } from "../../../api/openapi/components.js";
import { openApiDocument } from "../../../api/openapi/document.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// GET /api/openapi.json and GET /api/docs (api/openapi/) on the test stack: the document covers the spec's endpoint
// table (read from the spec at test time) and every /api route the app serves, is well-formed OpenAPI 3.1, and its
// request schemas are the routes' own: what the document refuses, the route refuses. Real responses are checked
// against the documented response schemas. The page and its assets are local and served with the right types.

// The merchant contract, vendored in the repository (docs/spec/interface.md) so a clean clone can check against it.
const SPEC = process.env.SPEC_FILE ?? "docs/spec/interface.md";

let svc: TestService;
let doc: any;
let ajv: any;
const DOC_ID = "https://openapi.test/openapi.json";

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  const res = await fetch(`${svc.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
  // The document as a JSON Schema root, so `#/components/schemas/…` references resolve (OpenAPI 3.1 = draft 2020-12).
  ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
  ajv.addFormat("uri", (s: string) => URL.canParse(s));
  ajv.addSchema({ $id: DOC_ID, components: doc.components, paths: doc.paths });
});
afterAll(() => svc?.stop());

const pointer = (...parts: string[]) => "#/" + parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
/** A validator of the JSON Schema at a place in the document. */
const schemaAt = (...parts: string[]) => {
  const v = ajv.getSchema(DOC_ID + pointer(...parts));
  if (!v) throw new Error(`no schema at ${parts.join(" ")}`);
  return v as ((x: unknown) => boolean) & { errors?: unknown[] };
};
const requestSchema = (method: string, path: string) =>
  schemaAt("paths", path, method, "requestBody", "content", "application/json", "schema");
const querySchema = (method: string, path: string, name: string) => {
  const i = doc.paths[path][method].parameters.findIndex((p: any) => p.name === name && p.in === "query");
  expect(i, `${method} ${path} documents ?${name}`).toBeGreaterThanOrEqual(0);
  return schemaAt("paths", path, method, "parameters", String(i), "schema");
};

/** The response is documented: its status is listed for the operation and its body fits the documented schema. */
function expectDocumented(method: string, path: string, res: { status: number; body: unknown }) {
  const documented = doc.paths[path]?.[method]?.responses?.[String(res.status)];
  expect(documented, `${method.toUpperCase()} ${path} documents ${res.status} (${JSON.stringify(res.body)})`).toBeTruthy();
  const v = schemaAt("paths", path, method, "responses", String(res.status), "content", "application/json", "schema");
  expect(v(res.body), `${method.toUpperCase()} ${path} ${res.status} ${JSON.stringify(res.body)}: ${JSON.stringify(v.errors)}`).toBe(true);
  // An error's exact message is among the documented ones.
  const message = (res.body as { error?: unknown }).error;
  if (res.status >= 400 && typeof message === "string") expect(documented.description).toContain(`\`${message}\``);
}

/** The spec's endpoint table ("## Endpoints"): one entry per method and path, with its Auth column. */
function specEndpoints(): { method: string; path: string; auth: string }[] {
  if (!existsSync(SPEC)) throw new Error(`the spec is not at ${SPEC} (set SPEC_FILE)`);
  const text = readFileSync(SPEC, "utf8");
  const section = text.slice(text.indexOf("## Endpoints"), text.indexOf("\n### ", text.indexOf("## Endpoints")));
  const rows = [...section.matchAll(/^\| ([A-Z, ]+) \| `([^`]+)` \| ([A-Z/]+) \|$/gm)];
  // Every row of the table is read (a row the pattern missed would go untested): all lines but the header and rule.
  expect(rows.length).toBe(section.split("\n").filter((l) => l.startsWith("| ")).length - 1);
  expect(rows.length).toBeGreaterThanOrEqual(15);
  return rows.flatMap(([, methods, path, auth]) =>
    methods!.split(",").map((m) => ({ method: m.trim().toLowerCase(), path: path!, auth: auth! })),
  );
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];
/** Every documented operation as `METHOD path` (paths outside /api, which carry their own servers, as app paths). */
const documentedOps = () =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.keys(item)
      .filter((k) => METHODS.includes(k))
      .map((m) => ({ method: m, path, appPath: item.servers ? path : `/api${path}`, op: item[m] })),
  );
const shape = (path: string) => path.replace(/\{[^}]+\}|:[A-Za-z]+/g, "{}");

describe("the OpenAPI document", () => {
  it("documents every method and path of the spec's endpoint table, with the spec's authentication", () => {
    const endpoints = specEndpoints();
    for (const e of endpoints) {
      const op = doc.paths[e.path]?.[e.method];
      expect(op, `${e.method.toUpperCase()} ${e.path}`).toBeTruthy();
      expect(op["x-extension"], `${e.method} ${e.path} is the spec's`).toBeUndefined();
      const schemes = op.security.map((s: object) => Object.keys(s).join("+"));
      if (e.auth === "K") expect(schemes, `${e.method} ${e.path}`).toEqual(["ApiKey"]);
      else if (e.auth === "P") expect(schemes, `${e.method} ${e.path}`).toEqual([]);
      else if (e.auth === "K/S") expect(schemes, `${e.method} ${e.path}`).toEqual(["ApiKey", "SessionCookie"]);
      else throw new Error(`unknown Auth ${e.auth}`);
    }
    // Everything else is marked as ours: tagged `Extensions`, or `Agents` (the agent's own routes, docs/agents.md).
    const inSpec = new Set(endpoints.map((e) => `${e.method} ${e.path}`));
    for (const { method, path, op } of documentedOps())
      if (!inSpec.has(`${method} ${path}`)) {
        expect(op["x-extension"], `${method} ${path}`).toBe(true);
        expect(op.tags, `${method} ${path}`).toEqual([path.startsWith("/v1/agent") ? "Agents" : "Extensions"]);
      }
    expect(doc.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }));
    expect(doc.components.securitySchemes.SessionCookie).toEqual(
      expect.objectContaining({ type: "apiKey", in: "cookie", name: "cp_session" }),
    );
  });

  it("documents exactly the routes the app serves under /api (and GET /metrics)", () => {
    const served = new Set(
      createApp(svc.deps)
        .routes.filter((r) => r.method !== "ALL" && (r.path.startsWith("/api/") || r.path === "/metrics"))
        .map((r) => `${r.method.toLowerCase()} ${shape(r.path)}`),
    );
    const documented = new Set(documentedOps().map((o) => `${o.method} ${shape(o.appPath)}`));
    expect([...served].filter((r) => !documented.has(r)).sort(), "served but not documented").toEqual([]);
    expect([...documented].filter((r) => !served.has(r)).sort(), "documented but not served").toEqual([]);
  });

  it("is OpenAPI 3.1: version, server, resolvable references, declared path parameters, unique operation ids", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toEqual(expect.objectContaining({ title: expect.any(String), version: "1.3.0" }));
    expect(doc.servers[0].url).toBe(svc.deps.config.baseUrl);
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument(svc.deps.config.baseUrl))));

    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object")
        for (const [k, child] of Object.entries(v)) {
          if (k === "$ref") refs.push(child as string);
          else walk(child);
        }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(100);
    for (const r of new Set(refs)) {
      expect(r, "local reference").toMatch(/^#\//);
      const target = r
        .slice(2)
        .split("/")
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
        .reduce((node: any, key) => node?.[key], doc);
      expect(target, `${r} resolves`).toBeTruthy();
    }

    const ids = new Set<string>();
    for (const { method, path, op } of documentedOps()) {
      const placeholders = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? []).filter((p: any) => p.in === "path");
      expect(declared.map((p: any) => p.name).sort(), `${method} ${path} path parameters`).toEqual(placeholders);
      for (const p of declared) expect(p.required, `${method} ${path} {${p.name}}`).toBe(true);
      expect(ids.has(op.operationId), op.operationId).toBe(false);
      ids.add(op.operationId);
      expect(Object.keys(op.responses).length, `${method} ${path} responses`).toBeGreaterThan(0);
    }
    // Every schema compiles as draft 2020-12, and every example fits its schema.
    for (const name of Object.keys(doc.components.schemas)) schemaAt("components", "schemas", name);
    for (const { method, path, op } of documentedOps()) {
      const body = op.requestBody?.content?.["application/json"];
      if (body?.example !== undefined) expect(requestSchema(method, path)(body.example), `${method} ${path} request example`).toBe(true);
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        const media = r.content?.["application/json"];
        for (const [name, ex] of Object.entries((media?.examples ?? {}) as Record<string, any>)) {
          const v = schemaAt("paths", path, method, "responses", status, "content", "application/json", "schema");
          expect(v(ex.value), `${method} ${path} ${status} example ${name}`).toBe(true);
        }
      }
    }
  });

  it("documents the spec's error bodies and exact messages", () => {
    const examples = (path: string, method: string, status: number) =>
      Object.values(doc.paths[path][method].responses[status].content["application/json"].examples).map((e: any) => e.value);
    expect(examples("/payments", "post", 400)).toContainEqual({ error: "Invalid form data" });
    expect(examples("/payments", "post", 503)).toContainEqual({ error: "Oracle price unavailable" });
    expect(examples("/v1/payments", "get", 400)).toContainEqual(expect.objectContaining({ code: "invalid_query" }));
    expect(examples("/v1/payments", "get", 401)).toEqual([{ error: "Unauthorized", code: "unauthorized" }]);
    expect(examples("/v1/webhooks", "get", 401)).toEqual([{ success: false, error: "Unauthorized", data: null }]);
    expect(examples("/vault/v1/config", "post", 409)).toContainEqual({ success: false, error: "Vault already configured" });
    expect(examples("/payments/verify", "get", 400)).toContainEqual({ valid: false, verified: false, error: "Invalid hash" });
    expect(examples("/tokens/price", "get", 404)).toEqual([{ error: "Price not available for this token" }]);
  });

  it("takes the request schemas of the routes that validate with zod from the routes themselves", () => {
    const strip = (s: any) => {
      const { $schema: _s, "x-validator": _x, ...rest } = s;
      const properties = Object.fromEntries(
        Object.entries(rest.properties ?? {}).map(([k, v]: [string, any]) => [k, { ...v, description: undefined }]),
      );
      return JSON.parse(JSON.stringify({ ...rest, properties }));
    };
    for (const [name, own] of Object.entries(ROUTE_SCHEMAS)) {
      expect(doc.components.schemas[name]["x-validator"]).toBe(own.validator);
      expect(strip(doc.components.schemas[name]), name).toEqual(
        strip(z.toJSONSchema(own.schema, { target: "draft-2020-12", io: "input" })),
      );
    }
    expect(doc.paths["/payments"].post.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CreatePaymentRequest",
    });
    expect(doc.paths["/auth/login"].post.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/LoginRequest",
    });
  });

  it("every request body and query is the exported schema its module validates with (`x-validator`), converted as is", async () => {
    const convert = (schema: z.ZodType) => z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as any;
    // `x-validator` names the very object: `<file> <export>`.
    for (const [name, own] of Object.entries(ROUTE_SCHEMAS)) {
      const [file, exported] = own.validator.split(" ");
      const mod = await import(/* @vite-ignore */ `../../../${file!.replace(/\.ts$/, ".js")}`);
      expect(mod[exported!], `${name}: ${own.validator}`).toBe(own.schema);
    }
    const withValidator: string[] = [];
    const without: string[] = [];
    for (const { method, path, op } of documentedOps()) {
      const ref: string | undefined = op.requestBody?.content?.["application/json"]?.schema?.$ref;
      const query = (op.parameters ?? []).filter((p: any) => p.in === "query");
      if (!ref && !query.length) continue;
      const validators = new Set<string>();
      if (ref) {
        const component = doc.components.schemas[ref.split("/").pop()!];
        if (component["x-validator"]) validators.add(component["x-validator"]);
        else without.push(`${method} ${path} body`);
      }
      const own = Object.values(ROUTE_SCHEMAS).find((r) => r.validator === query[0]?.["x-validator"]);
      if (query.length && !own) without.push(`${method} ${path} query`);
      if (own) {
        // Each parameter is the converted property, required exactly when the object requires it.
        const converted = convert(own.schema);
        expect(query.map((p: any) => p.name).sort(), `${method} ${path}`).toEqual(Object.keys(converted.properties).sort());
        for (const p of query) {
          expect(p["x-validator"], `${method} ${path} ?${p.name}`).toBe(own.validator);
          expect(p.required, `${method} ${path} ?${p.name}`).toBe((converted.required ?? []).includes(p.name));
          const { description: _d, ...property } = converted.properties[p.name];
          expect(p.schema, `${method} ${path} ?${p.name}`).toEqual(property);
        }
        validators.add(own.validator);
      }
      if (validators.size) withValidator.push(`${method} ${path}`);
    }
    // GraphQL checks its own request (docs/graphql.md): the only input without a module schema.
    expect(without.sort()).toEqual(["get /graphql query", "post /graphql body"]);
    // 24, and PUT /v1/settings/underpayment-tolerance (docs/payments.md "Underpayment tolerance"), GET /v1/events (docs/payments.md "Event feed"),
    // GET /payments/{paymentId}/bridge/holdings (docs/bridge.md, Solana payers).
    expect(withValidator.length).toBe(27);
  });
});

describe("the documented schemas and the routes agree", () => {
  const usdt = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!;
  const validBody = () => ({
    merchant: privateKeyToAccount(generatePrivateKey()).address,
    chainId: "777177",
    token: usdt().address,
    amount: "12.5",
    orderId: `doc-${randomUUID()}`,
  });

  it("POST /payments: a body the schema accepts is created; each body the schema refuses is `Invalid form data`", async () => {
    const { apiKey } = await svc.newMerchant();
    const valid = schemaAt("components", "schemas", "CreatePaymentRequest");
    const body = validBody();
    expect(valid(body)).toBe(true);
    const created = await svc.http("POST", "/payments", { body, apiKey });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expectDocumented("post", "/payments", created);

    const refused: Record<string, unknown>[] = [
      { ...body, orderId: "" },
      { ...body, orderId: "x".repeat(101) },
      { ...body, description: "d".repeat(201) },
      { ...body, amount: 12.5 },
      { ...body, blockConfirmations: 101 },
      { ...body, blockConfirmations: 0 },
      { ...body, gasless: "yes" },
      { ...body, expiresAt: -1 },
      { ...body, redirectUrl: "not a url" },
      { ...body, redirectUrl: `https://shop.example/${"p".repeat(2000)}` },
      (({ merchant: _m, ...rest }) => rest)(body),
      (({ orderId: _o, ...rest }) => rest)(body),
    ];
    for (const b of refused) {
      expect(valid(b), `schema refuses ${JSON.stringify(b).slice(0, 120)}`).toBe(false);
      const res = await svc.http("POST", "/payments", { body: b, apiKey });
      expect(res.status, JSON.stringify(b).slice(0, 120)).toBe(400);
      expect(res.body).toEqual({ error: "Invalid form data" });
      expectDocumented("post", "/payments", res);
    }
    // Beyond the shape, the route's own checks give the spec's other documented messages.
    const badMerchant = await svc.http("POST", "/payments", { body: { ...body, merchant: "0x123" }, apiKey });
    expect(badMerchant.body).toEqual({ error: "Invalid Merchant address format" });
    expectDocumented("post", "/payments", badMerchant);
    // Beyond the spec's list: too many decimals for the token (USDT: 6).
    const decimals = await svc.http("POST", "/payments", { body: { ...body, amount: "1.0000001" }, apiKey });
    expect(decimals.body).toEqual({ error: "Amount must have at most 6 decimal places" });
    expectDocumented("post", "/payments", decimals);
    const noKey = await svc.http("POST", "/payments", { body: validBody() });
    expect(noKey.status).toBe(401);
    expectDocumented("post", "/payments", noKey);
  });

  it("GET /v1/payments: documented query values are accepted; values the parameter schemas refuse are `invalid_query`", async () => {
    const { apiKey } = await svc.newMerchant();
    expect((await svc.http("POST", "/payments", { body: validBody(), apiKey })).status).toBe(200);
    const ok = { limit: "5", status: "pending", createdAfter: "2020-01-01T00:00:00Z" };
    for (const [name, value] of Object.entries(ok)) expect(querySchema("get", "/v1/payments", name)(value), name).toBe(true);
    const page = await svc.http("GET", `/v1/payments?${new URLSearchParams(ok)}`, { apiKey });
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expectDocumented("get", "/v1/payments", page);

    for (const [name, value] of [
      ["status", "bogus"],
      ["limit", "abc"],
      ["limit", "-1"],
    ] as const) {
      expect(querySchema("get", "/v1/payments", name)(value), `${name}=${value}`).toBe(false);
      const res = await svc.http("GET", `/v1/payments?${name}=${value}`, { apiKey });
      expect(res.status, `${name}=${value}`).toBe(400);
      expect(res.body.code).toBe("invalid_query");
      expectDocumented("get", "/v1/payments", { status: res.status, body: res.body });
    }
    const anon = await svc.http("GET", "/v1/payments");
    expect(anon.body).toEqual({ error: "Unauthorized", code: "unauthorized" });
    expectDocumented("get", "/v1/payments", anon);

    // One payment by id: its answer, its 404 and its 401 fit the documented ones.
    const one = await svc.http("GET", `/v1/payments/${page.body.data[0].paymentId}`, { apiKey });
    expect(one.body).toEqual({ data: page.body.data[0] });
    for (const res of [one, await svc.http("GET", `/v1/payments/${randomUUID()}`, { apiKey }), await svc.http("GET", "/v1/payments/x")])
      expectDocumented("get", "/v1/payments/{paymentId}", res);
  });

  it("POST /auth/login: the schema's refusals are the route's `Invalid form data`; a valid login fits the documented answer", async () => {
    const email = `doc-${randomUUID()}@shop.example`;
    await svc.newMerchant({ email, password: "correct horse battery" });
    const valid = requestSchema("post", "/auth/login");
    for (const b of [{}, { email }, { email, password: "" }, { email: 1, password: "x" }]) {
      expect(valid(b), JSON.stringify(b)).toBe(false);
      const res = await svc.http("POST", "/auth/login", { body: b });
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(res.body).toEqual({ error: "Invalid form data" });
      expectDocumented("post", "/auth/login", res);
    }
    const b = { email, password: "correct horse battery" };
    expect(valid(b)).toBe(true);
    const res = await svc.http("POST", "/auth/login", { body: b });
    expect(res.status).toBe(200);
    expectDocumented("post", "/auth/login", res);
  });

  it("hand-written schemas match what the routes answer (account, agents, webhooks, vault, lookups, health)", async () => {
    const { apiKey } = await svc.newMerchant();
    expectDocumented("get", "/balance", await svc.http("GET", "/balance", { apiKey }));
    expectDocumented("get", "/promo-status", await svc.http("GET", "/promo-status", { apiKey }));

    const notAgent = await svc.http("GET", "/v1/agent", { apiKey });
    expect(notAgent.status).toBe(403);
    expectDocumented("get", "/v1/agent", notAgent);
    expectDocumented("get", "/v1/agent", await svc.http("GET", "/v1/agent"));
    const agent = await svc.newMerchant();
    await createAgent(svc.deps.db, agent.id, { markupCapBps: 100, platformShareBps: 3000 });
    await attachMerchant(svc.deps.db, (await svc.newMerchant()).id, agent.id);
    const settings = { markupBps: 50, payoutAddress: privateKeyToAccount(generatePrivateKey()).address };
    expect(requestSchema("patch", "/v1/agent")(settings)).toBe(true);
    const updated = await svc.http("PATCH", "/v1/agent", { body: settings, apiKey: agent.apiKey });
    expect(updated.status).toBe(200);
    expectDocumented("patch", "/v1/agent", updated);
    const overCap = await svc.http("PATCH", "/v1/agent", { body: { markupBps: 101 }, apiKey: agent.apiKey });
    expect(overCap.status).toBe(400);
    expectDocumented("patch", "/v1/agent", overCap);
    const me = await svc.http("GET", "/v1/agent", { apiKey: agent.apiKey });
    expect(me.body.payoutAddress).toBe(settings.payoutAddress);
    expectDocumented("get", "/v1/agent", me);
    const referred = await svc.http("GET", "/v1/agent/merchants", { apiKey: agent.apiKey });
    expect(referred.body.data).toHaveLength(1);
    expectDocumented("get", "/v1/agent/merchants", referred);
    const withdraw = { chainId: "777177", token: usdt().address };
    expect(requestSchema("post", "/v1/agent/withdrawals")(withdraw)).toBe(true);
    const nothing = await svc.http("POST", "/v1/agent/withdrawals", { body: withdraw, apiKey: agent.apiKey });
    expect(nothing.body).toEqual({ error: "Nothing to withdraw" });
    expectDocumented("post", "/v1/agent/withdrawals", nothing);
    expectDocumented("get", "/v1/agent/withdrawals", await svc.http("GET", "/v1/agent/withdrawals", { apiKey: agent.apiKey }));
    expectDocumented("get", "/v1/webhooks", await svc.http("GET", "/v1/webhooks", { apiKey }));
    expectDocumented("get", "/v1/webhooks", await svc.http("GET", "/v1/webhooks"));

    const http = { url: "http://shop.example/hooks" };
    expect(requestSchema("put", "/v1/webhooks")(http)).toBe(false);
    const refused = await svc.http("PUT", "/v1/webhooks", { body: http, apiKey });
    expect(refused.body).toEqual({ success: false, error: "Webhook URL must use HTTPS (http:// is not accepted)", data: null });
    expectDocumented("put", "/v1/webhooks", refused);
    const hook = { url: "https://127.0.0.1:9/hooks", events: ["payment.completed"] };
    expect(requestSchema("put", "/v1/webhooks")(hook)).toBe(true);
    const put = await svc.http("PUT", "/v1/webhooks", { body: hook, apiKey });
    expect(put.status).toBe(201);
    expectDocumented("put", "/v1/webhooks", put);
    expectDocumented("get", "/v1/webhooks/deliveries", await svc.http("GET", "/v1/webhooks/deliveries", { apiKey }));

    const vault = { businessName: "Docs Shop", walletAddress: privateKeyToAccount(generatePrivateKey()).address };
    expect(requestSchema("post", "/vault/v1/config")(vault)).toBe(true);
    const created = await svc.http("POST", "/vault/v1/config", { body: vault, apiKey });
    expect(created.status).toBe(201);
    expectDocumented("post", "/vault/v1/config", created);
    const again = await svc.http("POST", "/vault/v1/config", { body: vault, apiKey });
    expect(again.status).toBe(409);
    expectDocumented("post", "/vault/v1/config", again);
    const extra = { ...vault, color: "red" };
    expect(requestSchema("patch", "/vault/v1/config")(extra)).toBe(false);
    const patched = await svc.http("PATCH", "/vault/v1/config", { body: extra, apiKey });
    expect(patched.status).toBe(400);
    expectDocumented("patch", "/vault/v1/config", patched);
    const tokens = await svc.http("GET", `/vault/v1/business/${created.body.data.publicId}/tokens`);
    expectDocumented("get", "/vault/v1/business/{publicId}/tokens", tokens);
    expectDocumented("get", "/vault/v1/deposits", await svc.http("GET", "/vault/v1/deposits", { apiKey }));

    expectDocumented("get", "/tokens/price", await svc.http("GET", "/tokens/price?chainId=1"));
    expectDocumented("get", "/oracle/price", await svc.http("GET", "/oracle/price"));
    expectDocumented("get", "/payments/verify", await svc.http("GET", `/payments/verify?id=${randomUUID()}&hash=x`));
    const health = await svc.http("GET", "/health");
    expectDocumented("get", "/health", health);
  });
});

describe("the modules' schemas refuse what their routes refuse, with the documented messages", () => {
  const USDT_777177 = () => svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!.address;
  const wallet = () => privateKeyToAccount(generatePrivateKey()).address;

  /** The document refuses `input` (a body, or a query: a parameter's schema or a required one missing), and so does the route: 400 `message`, documented. */
  async function refused(
    method: string,
    path: string,
    input: { body?: unknown; query?: Record<string, string> },
    message: string,
    apiKey: string,
  ) {
    const m = method.toLowerCase();
    const label = `${method} ${path} ${JSON.stringify(input.body ?? input.query)}`;
    const documentRefuses = input.query
      ? Object.entries(input.query).some(([name, value]) => !querySchema(m, path, name)(value)) ||
        doc.paths[path][m].parameters.some((p: any) => p.in === "query" && p.required && !(p.name in input.query!))
      : !requestSchema(m, path)(input.body);
    expect(documentRefuses, `the document refuses ${label}`).toBe(true);
    const res = await svc.http(method, input.query ? `${path}?${new URLSearchParams(input.query)}` : path, { body: input.body, apiKey });
    expect(res.status, label).toBe(400);
    expect(res.body.error, label).toBe(message);
    expectDocumented(m, path, res);
  }

  it("webhooks: bodies and the delivery log's query", async () => {
    const { apiKey } = await svc.newMerchant();
    const url = "https://127.0.0.1:9/hooks";
    for (const [body, message] of [
      [{ url, color: "red" }, "Unknown field: color"],
      [{ url: "http://shop.example/h", color: "red" }, "Unknown field: color"],
      [{ events: ["payment.completed"] }, "url is required"],
      [{ url: 5 }, "url is required"],
      [{ url: "not a url" }, "url is not a valid URL"],
      [{ url, events: [] }, "events must contain at least one event"],
      [{ url, isActive: "yes" }, "isActive must be a boolean"],
      [JSON.stringify("just text"), "Body must be a JSON object"],
    ] as const)
      await refused("PUT", "/v1/webhooks", { body }, message, apiKey);
    const put = { url, events: ["payment.completed", "payment.failed"], isActive: true };
    expect(requestSchema("put", "/v1/webhooks")(put)).toBe(true);
    expect((await svc.http("PUT", "/v1/webhooks", { body: put, apiKey })).status).toBe(201);
    await refused(
      "POST",
      "/v1/webhooks",
      { body: { action: "rotate" } },
      'Unknown action; expected {"action": "regenerate-secret"}',
      apiKey,
    );
    for (const [query, message] of [
      [{ status: "bogus" }, "status must be one of pending, success, failed"],
      [{ paymentId: "not-a-uuid" }, "paymentId must be a payment id"],
    ] as const)
      await refused("GET", "/v1/webhooks/deliveries", { query }, message, apiKey);
  });

  it("the Vault: configuration, tokens, webhook, users and deposits", async () => {
    const { apiKey } = await svc.newMerchant();
    const token = USDT_777177();
    for (const [body, message] of [
      [{ walletAddress: wallet() }, "businessName is required"],
      [{ businessName: "Docs", walletAddress: "0x123" }, "Invalid EVM address"],
      [{ businessName: "Docs", walletAddress: wallet(), feeBps: 0 }, "feeBps can only be set by the operator for a registered business"],
      [
        { businessName: "Docs", walletAddress: wallet(), enabledTokens: [{ chainId: "777177", token, tokenSymbol: "USDT" }] },
        "enabledTokens[0]: chainId must be a positive integer number",
      ],
    ] as const)
      await refused("POST", "/vault/v1/config", { body }, message, apiKey);
    const config = { businessName: "Docs", walletAddress: wallet(), enabledTokens: [{ chainId: 777177, token, tokenSymbol: "USDT" }] };
    expect(requestSchema("post", "/vault/v1/config")(config)).toBe(true);
    expect((await svc.http("POST", "/vault/v1/config", { body: config, apiKey })).status).toBe(201);

    await refused("PATCH", "/vault/v1/config", { body: { isActive: "no" } }, "isActive must be a boolean", apiKey);
    for (const [body, message] of [
      [{ chainId: 777177, tokenSymbol: "USDT" }, "token is required"],
      [{ chainId: 1.5, token, tokenSymbol: "USDT" }, "chainId must be a positive integer number"],
      [{ chainId: 777177, token, tokenSymbol: "x".repeat(21) }, "tokenSymbol must be at most 20 characters"],
      [{ chainId: 777177, token, tokenSymbol: "USDT", color: 1 }, "Unknown field: color"],
    ] as const)
      await refused("POST", "/vault/v1/config/tokens", { body }, message, apiKey);
    await refused(
      "DELETE",
      "/vault/v1/config/tokens",
      { body: { chainId: 0, token } },
      "chainId must be a positive integer number",
      apiKey,
    );
    await refused(
      "PUT",
      "/vault/v1/config/webhooks",
      { body: { url: "https://127.0.0.1:9/v", events: ["payment.completed"] } },
      "Unknown event: payment.completed. Subscribable events: deposit.completed, deposit.failed, deposit.*",
      apiKey,
    );
    await refused(
      "POST",
      "/vault/v1/config/webhooks",
      { body: { action: "regenerate-secret", extra: 1 } },
      'Unknown action; expected no body or {"action": "regenerate-secret"}',
      apiKey,
    );

    for (const [body, message] of [
      [{ chainId: 777177, tokenAddress: token }, "externalUserId is required"],
      [{ externalUserId: "u".repeat(101), chainId: 777177, tokenAddress: token }, "externalUserId must be at most 100 characters"],
      [{ externalUserId: "u1", chainId: 777177 }, "tokenAddress is required"],
      [{ externalUserId: "u1", chainId: 777177, tokenAddress: token, color: 1 }, "Unknown field: color"],
    ] as const)
      await refused("POST", "/vault/v1/users", { body }, message, apiKey);
    const user = { externalUserId: "u1", chainId: 777177, tokenAddress: token };
    expect(requestSchema("post", "/vault/v1/users")(user)).toBe(true);
    expect((await svc.http("POST", "/vault/v1/users", { body: user, apiKey })).status).toBe(201);
    await refused(
      "GET",
      "/vault/v1/users",
      { query: { externalUserId: "u1", chainId: "0" } },
      "chainId must be a positive integer number",
      apiKey,
    );
    await refused("GET", "/vault/v1/deposits", { query: { limit: "abc" } }, "limit must be an integer between 1 and 100", apiKey);
    await refused(
      "GET",
      "/vault/v1/deposits",
      { query: { status: "lost" } },
      "status must be one of: detected, processing, completed, failed",
      apiKey,
    );
  });

  it("lookups, redirect verification and fund recovery", async () => {
    const { apiKey } = await svc.newMerchant();
    await refused("GET", "/tokens/metadata", { query: { chainId: "0x89", address: zeroAddress } }, "chainId must be a number", apiKey);
    await refused("GET", "/tokens/price", { query: { chainId: "137", address: "0x123" } }, "Invalid token address", apiKey);
    await refused("GET", "/oracle/price", { query: {} }, "Symbol parameter is required", apiKey);
    const verify = await svc.http("GET", `/payments/verify?id=${randomUUID()}`);
    expect(verify.body).toEqual({ valid: false, verified: false, error: "Missing hash" });
    expectDocumented("get", "/payments/verify", verify);
    const recover = await svc.http("POST", `/v1/payments/${randomUUID()}/recover`, { body: { token: "0x123" }, apiKey });
    expect(requestSchema("post", "/v1/payments/{paymentId}/recover")({ token: "0x123" })).toBe(false);
    expect(recover.body).toEqual({ success: false, error: "Invalid token address format", data: null });
    expectDocumented("post", "/v1/payments/{paymentId}/recover", recover);
  });

  it("cancel: the answer, a second cancel and an unknown payment fit the documented schemas and messages", async () => {
    const { apiKey } = await svc.newMerchant();
    const body = {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "777177",
      token: svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!.address,
      amount: "1",
      orderId: `doc-${randomUUID()}`,
    };
    const created = await svc.http("POST", "/payments", { body, apiKey });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = (created.body.url as string).split("/pay/")[1]!;
    const cancelled = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey });
    expect(cancelled.body).toEqual({ success: true, error: null, data: { paymentId: id, status: "cancelled" } });
    expectDocumented("post", "/v1/payments/{paymentId}/cancel", cancelled);
    const again = await svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey });
    expect(again.body).toEqual({ success: false, error: "Payment cannot be cancelled in status cancelled", data: null });
    expectDocumented("post", "/v1/payments/{paymentId}/cancel", again);
    const unknown = await svc.http("POST", `/v1/payments/${randomUUID()}/cancel`, { apiKey });
    expect(unknown.body).toEqual({ success: false, error: "Payment not found", data: null });
    expectDocumented("post", "/v1/payments/{paymentId}/cancel", unknown);
  });
});

describe("the reference page", () => {
  it("serves /api/openapi.json publicly with a short cache", async () => {
    const res = await fetch(`${svc.url}/openapi.json`);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(300);
  });

  it("serves /api/docs as HTML that loads only local assets, each with its content type", async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    expect(html).toContain("<title>API reference · chainpay</title>");
    expect(html).toContain('<div id="swagger-ui"></div>');
    // No inline script (a strict CSP holds), and nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const refs = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBe(5);
    const types: Record<string, RegExp> = {
      "swagger-ui.css": /^text\/css/,
      "swagger-ui-bundle.js": /^text\/javascript/,
      "swagger-ui-standalone-preset.js": /^text\/javascript/,
      "init.js": /^text\/javascript/,
      "favicon-32x32.png": /^image\/png/,
    };
    expect(refs.map((r) => r.split("?")[0]!.split("/").pop()).sort()).toEqual(Object.keys(types).sort());
    for (const ref of refs) {
      expect(ref, "relative and local").toMatch(/^docs\/assets\/[\w.-]+\?v=[0-9a-f]+$/);
      const url = new URL(ref, `${svc.url}/docs`);
      expect(url.origin).toBe(new URL(svc.url).origin);
      const asset = await fetch(url);
      const name = url.pathname.split("/").pop()!;
      expect(asset.status, name).toBe(200);
      expect(asset.headers.get("content-type"), name).toMatch(types[name]!);
      expect(asset.headers.get("cache-control"), name).toContain("immutable");
      const body = Buffer.from(await asset.arrayBuffer());
      expect(body.length, name).toBeGreaterThan(100);
      if (name === "swagger-ui-bundle.js") expect(body.toString()).toContain("SwaggerUIBundle");
      if (name === "init.js") expect(body.toString()).toContain('"../../openapi.json"');
      // Revalidation by ETag.
      const again = await fetch(url, { headers: { "if-none-match": asset.headers.get("etag")! } });
      expect(again.status, name).toBe(304);
    }
    // init.js's relative document URL lands on the served document.
    expect(new URL("../../openapi.json", `${svc.url}/docs/assets/init.js`).href).toBe(`${svc.url}/openapi.json`);
    expect((await fetch(`${svc.url}/docs/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${svc.url}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});
