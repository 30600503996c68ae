import { z } from "zod";
import { errorBody, type ErrorBody } from "../errors.js";
import { COMPONENTS, routeSchema, routeSchemaOf } from "./components.js";
import { IDEMPOTENCY_FAILURES, IDEMPOTENCY_PARAMETER, takesIdempotencyKey } from "./idempotency.js";
import type { Auth, Failure, Operation } from "./operation.js";
import { AGENT_OPERATIONS } from "./routes-agents.js";
import { EVENT_OPERATIONS } from "./routes-events.js";
import { OTHER_OPERATIONS } from "./routes-other.js";
import { PAYMENT_OPERATIONS } from "./routes-payments.js";
import { SETTINGS_OPERATIONS } from "./routes-settings.js";
import { VAULT_OPERATIONS } from "./routes-vault.js";
import { WEBHOOK_OPERATIONS } from "./routes-webhooks.js";

// The OpenAPI 3.1 document of the HTTP API, built from the operation lists (api/openapi/routes-*.ts) and zod 4's
// own JSON Schema output (draft 2020-12, the dialect of OpenAPI 3.1). Request schemas (bodies and queries) are the
// very objects the routes validate with (components.ts), converted as the route reads them (`io: "input"`).

/** Every documented operation. */
export const OPERATIONS: readonly Operation[] = [
  ...PAYMENT_OPERATIONS,
  ...WEBHOOK_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...VAULT_OPERATIONS,
  ...AGENT_OPERATIONS,
  ...SETTINGS_OPERATIONS,
  ...OTHER_OPERATIONS,
];

type Json = Record<string, unknown>;
const JSON_SCHEMA = { target: "draft-2020-12", io: "input" } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The spec's version (spec "Versioning"). */
export const API_VERSION = "1.3.0";

const TAGS = [
  { name: "Payments", description: "Payment links, the list and redirect verification." },
  { name: "Account", description: "The Gas Tank balance and the free-fee promotion." },
  { name: "Public lookups", description: "Token prices, token metadata and oracle prices; no authentication." },
  { name: "Webhooks", description: "Payment webhook configuration." },
  { name: "Vault", description: "Per-user deposit addresses, swept to the business wallet minus a fee." },
  {
    name: "Agents",
    description:
      "Extensions for agents, who refer merchants (docs/agents.md): terms and balances, referred merchants, markup and payout address, withdrawals. The API key of the agent's own account.",
  },
  { name: "Extensions", description: "Routes of this service beyond the specification's endpoint table (`x-extension: true`)." },
];

const SECURITY: Record<Auth, Json[]> = {
  key: [{ ApiKey: [] }],
  public: [],
  "key-or-session": [{ ApiKey: [] }, { SessionCookie: [] }],
  "optional-key": [{ ApiKey: [] }, {}],
  metrics: [{ MetricsToken: [] }, {}],
};

const CODE_BY_STATUS: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  500: "internal_error",
  503: "service_unavailable",
};

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  413: "Payload too large",
  415: "Unsupported media type",
  429: "Too many requests",
  500: "Internal error",
  503: "Unavailable",
};

const COMPONENT_OF: Record<ErrorBody, string> = {
  plain: "PlainError",
  coded: "CodedError",
  result: "ResultError",
  verify: "VerifyError",
  vault: "VaultError",
};

/** The per-address flood guard in front of every /api route (api/middleware/ip-limits.ts) answers `{error}`. */
const FLOOD_GUARD: Failure = { status: 429, message: "Too many requests", shape: "plain" };

let components: Record<string, Json> | undefined;

/** Every component schema, converted once: cross references between named schemas become `$ref`s. */
function componentSchemas(): Record<string, Json> {
  if (components) return components;
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { ...JSON_SCHEMA, uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // `$schema` and a fragment `$id` belong to standalone documents, not to OpenAPI components.
    const { $schema: _s, $id: _i, ...rest } = schema as Json;
    const own = routeSchema(id);
    out[id] = own ? { ...described(rest, own.notes), "x-validator": own.validator } : rest;
  }
  return (components = out);
}

/** A converted object schema with descriptions added to its properties (nothing else changes). */
function described(schema: Json, notes: Record<string, string>): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return schema;
  const withNotes = Object.fromEntries(
    Object.entries(properties).map(([k, v]) => [k, notes[k] && !v.description ? { ...v, description: notes[k] } : v]),
  );
  return { ...schema, properties: withNotes };
}

/**
 * A query object's properties as OpenAPI query parameters, each with its own JSON Schema; where the route reads
 * its query with that object, each parameter names it in `x-validator`.
 */
function queryParameters(query: z.ZodObject): Json[] {
  const own = routeSchemaOf(query);
  const schema = described(z.toJSONSchema(query, JSON_SCHEMA), own?.notes ?? {}) as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const { description, examples, ...rest } = prop as Json & { examples?: unknown[] };
    return {
      name,
      in: "query",
      required: schema.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      ...(Array.isArray(examples) && examples.length ? { example: examples[0] } : {}),
      schema: rest,
      ...(own ? { "x-validator": own.validator } : {}),
    };
  });
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_|_$/g, "")
    .slice(0, 60);

/** The documented failures as responses: one per status, with the family's body schema and one example per message. */
function errorResponses(op: Operation): Record<string, Json> {
  const byStatus = new Map<number, Failure[]>();
  const guarded = op.atRoot || op.ipLimited === false ? op.errors.list : [...op.errors.list, FLOOD_GUARD];
  const failures = takesIdempotencyKey(op) ? [...guarded, ...IDEMPOTENCY_FAILURES] : guarded;
  for (const f of failures) byStatus.set(f.status, [...(byStatus.get(f.status) ?? []), f]);
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const shapes = [...new Set(list.map((f) => f.shape ?? op.errors.shape))];
    const examples: Record<string, Json> = {};
    for (const f of list) {
      const shape = f.shape ?? op.errors.shape;
      const name = shapes.length > 1 ? `${slug(f.message)}_${shape}` : slug(f.message);
      if (examples[name]) continue;
      examples[name] = { summary: f.message, value: errorBody(shape, f.message, f.code ?? CODE_BY_STATUS[status] ?? "error") };
    }
    const messages = [...new Set(list.map((f) => `\`${f.message}\``))].join("; ");
    out[String(status)] = {
      description: `${STATUS_TEXT[status] ?? "Error"}: ${messages}`,
      content: {
        "application/json": {
          schema: shapes.length === 1 ? ref(COMPONENT_OF[shapes[0]!]) : { anyOf: shapes.map((s) => ref(COMPONENT_OF[s])) },
          examples,
        },
      },
    };
  }
  return out;
}

function operationId(op: Operation): string {
  const words = op.path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  return op.method + words.join("");
}

function operationObject(op: Operation): Json {
  const parameters: Json[] = [
    ...Object.entries(op.pathParams ?? {}).map(([name, p]) => ({
      name,
      in: "path",
      required: true,
      description: p.description,
      schema: { type: "string" },
      ...(p.example ? { example: p.example } : {}),
    })),
    ...(op.query ? queryParameters(op.query) : []),
    ...(takesIdempotencyKey(op) ? [IDEMPOTENCY_PARAMETER] : []),
  ];
  const responses: Record<string, Json> = {};
  for (const r of op.responses) {
    const type = r.contentType ?? "application/json";
    responses[String(r.status)] = {
      description: r.description,
      content: {
        [type]: { schema: r.schema ? ref(r.schema) : { type: "string" }, ...(r.example !== undefined ? { example: r.example } : {}) },
      },
    };
  }
  Object.assign(responses, errorResponses(op));
  const description = [op.description, op.rateLimit && `Rate limit: ${op.rateLimit}.`].filter(Boolean).join("\n\n");
  return {
    tags: [op.tag],
    summary: op.summary,
    ...(description ? { description } : {}),
    operationId: operationId(op),
    security: SECURITY[op.auth],
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required ?? true,
            content: {
              "application/json": { schema: ref(op.body.schema), ...(op.body.example !== undefined ? { example: op.body.example } : {}) },
            },
          },
        }
      : {}),
    responses,
    ...(op.extension ? { "x-extension": true } : {}),
    ...(op.rateLimit ? { "x-rate-limit": op.rateLimit } : {}),
  };
}

/** The origin root of a base URL that ends in /api (where GET /metrics lives). */
const rootOf = (baseUrl: string) => baseUrl.replace(/\/api\/?$/, "") || baseUrl;

const built = new Map<string, Json>();

/**
 * The OpenAPI 3.1 document, `servers[0].url` = the API's base address (`config.baseUrl`). Built once per base URL.
 * @example openApiDocument("https://pay.example/api").paths["/payments"].post.operationId // "postPayments"
 */
export function openApiDocument(baseUrl: string): Json & { paths: Record<string, Record<string, unknown>> } {
  const cached = built.get(baseUrl);
  if (cached) return cached as ReturnType<typeof openApiDocument>;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const item = (paths[op.path] ??= op.atRoot ? { servers: [{ url: rootOf(baseUrl), description: "The service's origin root" }] } : {});
    item[op.method] = operationObject(op);
  }
  const doc = {
    openapi: "3.1.1",
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    info: {
      title: "chainpay API",
      version: API_VERSION,
      description: [
        "Crypto payment links, settlement to the merchant wallet, signed webhooks and the Vault (per-user deposit addresses).",
        "Every path is relative to `{base_url}`, which ends in `/api`. Authenticated routes take the `x-api-key` header; " +
          "`GET /v1/payments` also accepts the dashboard session cookie `cp_session`.",
        "Error bodies follow the route family: `{error}` (payment creation, balance, public lookups, agents), `{error, code}` (`GET /v1/payments`), " +
          "`{success: false, error, data: null}` (`/v1/webhooks`), `{valid: false, verified: false, error}` (`GET /payments/verify`) and " +
          '`{success: false, error}` (`/vault/v1`). Every `/api` route may answer 429 `{error: "Too many requests"}` (per-address limit).',
        "Routes beyond the specification carry `x-extension: true` and the tag `Extensions`, or `Agents` for the agent's own routes (`/v1/agent`, `{error}` bodies).",
      ].join("\n\n"),
    },
    servers: [{ url: baseUrl, description: "This service ({base_url})" }],
    tags: TAGS,
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        ApiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "An API key, created in the dashboard. Never use it in client-side code.",
        },
        SessionCookie: { type: "apiKey", in: "cookie", name: "cp_session", description: "The dashboard session (POST /auth/login)." },
        MetricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN" },
      },
    },
  };
  built.set(baseUrl, doc);
  return doc;
}
