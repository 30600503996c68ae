import { GraphQLError } from "graphql";
import { logger } from "../../core/log.js";

/**
 * Errors of the GraphQL API, each with `extensions.code`. Field errors come from api/errors.ts
 * (`toGraphqlError`: REST's message, `extensions.http` the status REST answers for the same
 * failure). The HTTP status of a response that was executed is 200 whatever its field errors
 * (see docs/graphql.md).
 */

/** Request errors (the document is never executed). */
export const REQUEST_ERROR_CODES = {
  badRequest: "BAD_REQUEST",
  tooLarge: "PAYLOAD_TOO_LARGE",
  parse: "GRAPHQL_PARSE_FAILED",
  validation: "GRAPHQL_VALIDATION_FAILED",
  variables: "BAD_USER_INPUT",
  method: "METHOD_NOT_ALLOWED",
} as const;

export type ErrorJson = { message: string; locations?: unknown; path?: unknown; extensions: Record<string, unknown> };

/** A GraphQL error as JSON, with a code (its own, or `code` when it has none). */
export function errorJson(e: GraphQLError, code: string): ErrorJson {
  const json = e.toJSON();
  return { ...json, extensions: { code, ...json.extensions } };
}

/** A request error that has no GraphQLError behind it (bad HTTP request, limits). */
export const requestError = (message: string, code: string): ErrorJson => ({ message, extensions: { code } });

/**
 * Errors thrown by resolvers that are not GraphQLErrors are bugs or outages (a database error, an
 * RPC failure): logged, and answered like REST's 500 without leaking their text.
 */
export function maskUnexpected(e: GraphQLError): ErrorJson {
  if (e.originalError && !(e.originalError instanceof GraphQLError)) {
    logger("graphql").error({ err: e.originalError, field: e.path?.join(".") ?? "" }, "unexpected error");
    return errorJson(
      new GraphQLError("Internal server error", { nodes: e.nodes, path: e.path, extensions: { code: "INTERNAL_SERVER_ERROR", http: 500 } }),
      "INTERNAL_SERVER_ERROR",
    );
  }
  return errorJson(e, "INTERNAL_SERVER_ERROR");
}
