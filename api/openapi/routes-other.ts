import { TOO_MANY_LOGINS } from "../../modules/merchants/index.js";
import { GraphqlGetQuery } from "./schemas-common.js";
import { fail, NOT_JSON, TOO_LARGE, type Operation } from "./operation.js";

// The service's own routes beyond the spec: dashboard login, GraphQL, health, metrics and this reference itself.

const CROSS_ORIGIN = fail(403, "Cross-origin request refused");
const graphqlErrors = (statuses: number[]) =>
  statuses.map((status) => ({
    status,
    description: "A request error: `{errors: [{message, extensions: {code}}]}`",
    schema: "GraphqlResponse" as const,
  }));

export const OTHER_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/auth/login",
    tag: "Extensions",
    summary: "Dashboard login",
    description:
      "Sets the `cp_session` cookie that GET /v1/payments accepts in place of a key. JSON only, from the service's own origin (403 otherwise).",
    auth: "public",
    extension: true,
    body: { schema: "LoginRequest", required: true, example: { email: "owner@shop.example", password: "correct horse battery staple" } },
    responses: [{ status: 200, description: "Logged in; `Set-Cookie: cp_session=…`", schema: "LoginResponse" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "Invalid form data"),
        fail(401, "Invalid email or password"),
        CROSS_ORIGIN,
        TOO_LARGE,
        NOT_JSON,
        fail(429, TOO_MANY_LOGINS),
      ],
    },
    rateLimit: "20 attempts a minute per IP",
  },
  {
    method: "post",
    path: "/auth/logout",
    tag: "Extensions",
    summary: "Dashboard logout",
    description: "Ends the session of the `cp_session` cookie (if any) and clears the cookie.",
    auth: "public",
    extension: true,
    responses: [{ status: 200, description: "Logged out", schema: "LogoutResponse" }],
    errors: { shape: "plain", list: [CROSS_ORIGIN] },
  },
  {
    method: "post",
    path: "/graphql",
    tag: "Extensions",
    summary: "GraphQL",
    description:
      "The merchant operations of the REST API over GraphQL (docs/graphql.md). Fields that need a key check `x-api-key` themselves; their errors come in `errors` with status 200.",
    auth: "optional-key",
    extension: true,
    body: {
      schema: "GraphqlRequest",
      required: true,
      example: { query: "{ promoStatus { freeTransactions { eligible used remaining } } }" },
    },
    responses: [{ status: 200, description: "The result", schema: "GraphqlResponse" }, ...graphqlErrors([400, 413, 415])],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/graphql",
    tag: "Extensions",
    summary: "GraphQL (queries only)",
    description: "`variables` is JSON text; a mutation over GET is refused (405).",
    auth: "optional-key",
    extension: true,
    query: GraphqlGetQuery,
    responses: [{ status: 200, description: "The result", schema: "GraphqlResponse" }, ...graphqlErrors([400, 405])],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/health",
    tag: "Extensions",
    summary: "Health of every component",
    auth: "public",
    extension: true,
    responses: [
      { status: 200, description: "`ok`: every component is fine", schema: "HealthResponse" },
      { status: 503, description: "`degraded`: `issues` names each failing component", schema: "HealthResponse" },
    ],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "Extensions",
    summary: "This OpenAPI document",
    auth: "public",
    extension: true,
    responses: [{ status: 200, description: "OpenAPI 3.1", contentType: "application/json" }],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/docs",
    tag: "Extensions",
    summary: "Interactive API reference",
    description: "Swagger UI, served with its assets by the service itself.",
    auth: "public",
    extension: true,
    responses: [{ status: 200, description: "The page", contentType: "text/html" }],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/docs/assets/{file}",
    tag: "Extensions",
    summary: "Assets of the API reference",
    auth: "public",
    extension: true,
    pathParams: { file: { description: "`swagger-ui.css`, `swagger-ui-bundle.js`, `swagger-ui-standalone-preset.js` or `init.js`" } },
    responses: [
      { status: 200, description: "The file", contentType: "application/octet-stream" },
      { status: 404, description: "No such asset", contentType: "text/plain" },
    ],
    errors: { shape: "plain", list: [] },
  },
  {
    method: "get",
    path: "/metrics",
    tag: "Extensions",
    summary: "Prometheus metrics",
    description:
      "At the origin's root, not under /api. With METRICS_TOKEN set, a bearer token is required; without it only a direct local connection outside production (or the METRICS_PORT listener).",
    auth: "metrics",
    extension: true,
    atRoot: true,
    responses: [
      { status: 200, description: "Prometheus text format", contentType: "text/plain" },
      { status: 401, description: "`metrics: bearer token required`", contentType: "text/plain" },
      { status: 403, description: "Scraping is not open here", contentType: "text/plain" },
    ],
    errors: { shape: "plain", list: [] },
  },
];
