import {
  execute,
  getOperationAST,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
} from "graphql";
import type { AppDeps } from "../../core/deps.js";
import { findMerchant } from "../../modules/merchants/index.js";
import { admit, refused } from "./admission.js";
import { errorJson, maskUnexpected, REQUEST_ERROR_CODES as CODES, requestError, type ErrorJson } from "./errors.js";
import { jsonProblem } from "../middleware/input.js";
import { costLimitRule } from "./cost.js";
import { depthLimitRule, MAX_DOCUMENT_BYTES, MAX_ROOT_FIELDS } from "./limits.js";
import { graphqlContext } from "./context.js";
import { rootValue } from "./resolvers.js";
import { schema } from "./schema.js";
import { MAX_NESTING, nestingDepth } from "./nesting.js";
import { noNulTextRule } from "./text-rule.js";

export type GraphqlRequest = {
  method: "GET" | "POST";
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  apiKey: string | undefined;
  clientIp: string;
};

export type GraphqlResponse = { status: number; body: { data?: unknown; errors?: ErrorJson[] }; headers?: Record<string, string> };

const fail = (status: number, errors: ErrorJson[], headers?: Record<string, string>): GraphqlResponse => ({
  status,
  body: { errors },
  headers,
});

/**
 * Introspection (`__schema`, `__type`) is refused when NODE_ENV is production; `__typename` always works. The cost
 * rule reads the request's variables (`payments(limit: $n)`).
 */
export const validationRules = (deps: AppDeps, variables?: Record<string, unknown> | null) => {
  const costRule = costLimitRule(MAX_ROOT_FIELDS, variables);
  return deps.config.NODE_ENV === "production"
    ? [...specifiedRules, depthLimitRule, costRule, noNulTextRule, NoSchemaIntrospectionCustomRule]
    : [...specifiedRules, depthLimitRule, costRule, noNulTextRule];
};

/**
 * One GraphQL-over-HTTP request: size limit, parse, validate (graphql-js's rules plus the depth
 * limit, and no introspection in production), then execute. This is what `graphql()` does, in
 * steps, because `graphql()` takes no extra validation rules.
 *
 * Status: 429 (Retry-After: 1) when the caller already runs as many documents as it may at once (admission.ts),
 * 413 for a document over 20 kB, 400 when the document cannot be parsed or validated or
 * its variables do not fit (nothing was executed), 405 for a mutation over GET; otherwise 200,
 * with field errors (auth, input, rate limit...) in `errors`, each with `extensions.code` and
 * `extensions.http` (the REST status of the same failure).
 */
export async function executeGraphql(deps: AppDeps, req: GraphqlRequest): Promise<GraphqlResponse> {
  const bytes = Buffer.byteLength(req.query, "utf8");
  if (bytes > MAX_DOCUMENT_BYTES)
    return fail(413, [requestError(`Document too large: ${bytes} bytes (limit ${MAX_DOCUMENT_BYTES})`, CODES.tooLarge)]);

  const problem = req.variables == null ? null : jsonProblem(req.variables);
  if (problem) return fail(400, [requestError(`variables: ${problem}`, CODES.badRequest)]);

  if (nestingDepth(req.query) > MAX_NESTING)
    return fail(400, [requestError(`Document nested deeper than ${MAX_NESTING} levels`, CODES.parse)]);

  let document: DocumentNode;
  try {
    document = parse(req.query);
  } catch (e) {
    if (e instanceof GraphQLError) return fail(400, [errorJson(e, CODES.parse)]);
    // The nesting scan above should keep the recursive parser within the stack; this is the backstop.
    if (e instanceof RangeError) return fail(400, [requestError("Document nested too deeply", CODES.parse)]);
    throw e;
  }

  const invalid = validate(schema, document, validationRules(deps, req.variables));
  if (invalid.length)
    return fail(
      400,
      invalid.map((e) => errorJson(e, CODES.validation)),
    );

  const operation = getOperationAST(document, req.operationName ?? undefined);
  if (!operation)
    return fail(400, [
      requestError(
        req.operationName
          ? `Unknown operation named "${req.operationName}".`
          : "Must provide operation name if query contains multiple operations.",
        CODES.badRequest,
      ),
    ]);
  if (operation.operation === "subscription") return fail(400, [requestError("Subscriptions are not supported", CODES.badRequest)]);
  // GraphQL over HTTP: GET may not change anything.
  if (req.method === "GET" && operation.operation !== "query")
    return fail(405, [requestError(`Can only perform a ${operation.operation} operation from a POST request.`, CODES.method)], {
      allow: "POST",
    });

  const contextValue = graphqlContext(deps, req.apiKey, req.clientIp);
  const merchant = req.apiKey ? await findMerchant(deps, contextValue.caller) : null;
  const result = await admit(merchant ? `merchant:${merchant.id}` : `ip:${req.clientIp}`, () =>
    Promise.resolve(
      execute({
        schema,
        document,
        rootValue,
        contextValue,
        variableValues: req.variables ?? undefined,
        operationName: req.operationName ?? undefined,
      }),
    ),
  );
  if (result === refused)
    return fail(
      429,
      [{ message: "Too many concurrent GraphQL requests", extensions: { code: "RATE_LIMITED", http: 429, retryAfter: 1 } }],
      {
        "retry-after": "1",
      },
    );
  // No `data`: the variables did not coerce, nothing ran.
  if (!("data" in result))
    return fail(
      400,
      (result.errors ?? []).map((e) => errorJson(e, CODES.variables)),
    );
  const body: GraphqlResponse["body"] = { data: result.data };
  if (result.errors?.length) body.errors = result.errors.map(maskUnexpected);
  return { status: 200, body };
}
