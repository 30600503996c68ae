import { GraphQLError, type ASTVisitor, type ValidationContext } from "graphql";

/**
 * Refuses string literals holding a NUL character (`"\u0000"` in the document): Postgres cannot store or
 * compare such text, so it is a request error (400) like any other invalid argument, never a 500.
 * Variables are checked as JSON (api/middleware/input.ts `jsonProblem`).
 */
export function noNulTextRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.includes("\u0000")) context.reportError(new GraphQLError("Text must not contain NUL characters", { nodes: node }));
    },
  };
}
