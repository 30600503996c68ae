import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../context.js";
import { REQUEST_ERROR_CODES as CODES, requestError, type ErrorJson } from "../graphql/errors.js";
import { executeGraphql, type GraphqlResponse } from "../graphql/execute.js";
import { MAX_BODY_BYTES } from "../graphql/limits.js";
import { clientIp } from "../middleware/rate-limit.js";

/** The merchant GraphQL API, mounted at /api/graphql (the same operations as the REST routes; docs/graphql.md). */
export const graphqlRoute = new Hono<AppEnv>();

const GRAPHQL_RESPONSE = "application/graphql-response+json";

/** GraphQL over HTTP: `application/graphql-response+json` when the client asks for it, else `application/json`. */
function send(c: Context<AppEnv>, r: GraphqlResponse) {
  const type = c.req.header("accept")?.includes(GRAPHQL_RESPONSE) ? GRAPHQL_RESPONSE : "application/json";
  return c.body(JSON.stringify(r.body), r.status as 200, { ...r.headers, "content-type": `${type}; charset=utf-8` });
}

const badRequest = (c: Context<AppEnv>, message: string, status = 400, code: string = CODES.badRequest) =>
  send(c, { status, body: { errors: [requestError(message, code)] as ErrorJson[] } });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks the request parameters' shapes and runs the document. */
async function run(c: Context<AppEnv>, method: "GET" | "POST", params: { query: unknown; variables: unknown; operationName: unknown }) {
  if (typeof params.query !== "string" || params.query.trim() === "") return badRequest(c, "Missing query");
  if (params.variables != null && !isObject(params.variables)) return badRequest(c, "variables must be an object");
  if (params.operationName != null && typeof params.operationName !== "string") return badRequest(c, "operationName must be a string");
  const r = await executeGraphql(c.var.deps, {
    method,
    query: params.query,
    variables: params.variables as Record<string, unknown> | null | undefined,
    operationName: params.operationName as string | null | undefined,
    apiKey: c.req.header("x-api-key"),
    clientIp: clientIp(c),
  });
  return send(c, r);
}

graphqlRoute.post(
  "/",
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => badRequest(c, `Request body too large (limit ${MAX_BODY_BYTES} bytes)`, 413, CODES.tooLarge),
  }),
  async (c) => {
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") return badRequest(c, "Content-Type must be application/json", 415);
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return badRequest(c, "Body is not valid JSON");
    }
    if (!isObject(body)) return badRequest(c, "Body must be a JSON object");
    return run(c, "POST", { query: body.query, variables: body.variables, operationName: body.operationName });
  },
);

/** Queries only (a mutation over GET is 405); `variables` is JSON text. */
graphqlRoute.get("/", async (c) => {
  let variables: unknown;
  const raw = c.req.query("variables");
  if (raw !== undefined && raw !== "") {
    try {
      variables = JSON.parse(raw);
    } catch {
      return badRequest(c, "variables is not valid JSON");
    }
  }
  return run(c, "GET", { query: c.req.query("query"), variables, operationName: c.req.query("operationName") });
});
