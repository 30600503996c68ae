import {
  GraphQLError,
  Kind,
  getIntrospectionQuery,
  parse,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql";
import type { AppDeps } from "../../core/deps.js";
import { RateLimited } from "../../core/errors.js";
import { findMerchant, type Caller } from "../../modules/merchants/index.js";
import { retryAfterSeconds, takeFor, type Scope } from "../middleware/rate-limit.js";

/** Largest GraphQL document accepted, in UTF-8 bytes (20 kB). */
export const MAX_DOCUMENT_BYTES = 20 * 1024;
/** Largest POST body (document plus variables), in bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Deepest selection accepted: a root field is depth 1, `payments { data { token { symbol } } }` is 4. */
export const MAX_DEPTH = 8;
/** Most root fields one operation may ask for, counted with fragments expanded and aliases included (cost.ts). */
export const MAX_ROOT_FIELDS = 10;

const INTROSPECTION_ROOTS = new Set(["__schema", "__type"]);

type Fragments = (name: string) => FragmentDefinitionNode | undefined;

/**
 * Depth of the deepest field of a selection set (fields count, fragments do not). Fragment depths
 * are memoized, so a document that spreads fragments into each other many times costs linear time;
 * a cycle counts 0 here (NoFragmentCyclesRule rejects it anyway).
 */
function depthOf(set: SelectionSetNode, fragments: Fragments, memo: Map<string, number>): number {
  let max = 0;
  for (const s of set.selections) {
    let d = 0;
    if (s.kind === Kind.FIELD) d = 1 + (s.selectionSet ? depthOf(s.selectionSet, fragments, memo) : 0);
    else if (s.kind === Kind.INLINE_FRAGMENT) d = depthOf(s.selectionSet, fragments, memo);
    else {
      const name = s.name.value;
      if (!memo.has(name)) {
        memo.set(name, 0);
        const f = fragments(name);
        if (f) memo.set(name, depthOf(f.selectionSet, fragments, memo));
      }
      d = memo.get(name)!;
    }
    if (d > max) max = d;
  }
  return max;
}

/**
 * Depth of an operation's selection set, split between the data fields and the introspection
 * root fields (`__schema`, `__type`), which can only appear at the root.
 */
function operationDepth(set: SelectionSetNode, fragments: Fragments, memo: Map<string, number>, seen = new Set<string>()) {
  let data = 0;
  let introspection = 0;
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) {
      const d = 1 + (s.selectionSet ? depthOf(s.selectionSet, fragments, memo) : 0);
      if (INTROSPECTION_ROOTS.has(s.name.value)) introspection = Math.max(introspection, d);
      else data = Math.max(data, d);
      continue;
    }
    let inner: SelectionSetNode | undefined;
    if (s.kind === Kind.INLINE_FRAGMENT) inner = s.selectionSet;
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      inner = fragments(s.name.value)?.selectionSet;
    }
    if (!inner) continue;
    const d = operationDepth(inner, fragments, memo, seen);
    data = Math.max(data, d.data);
    introspection = Math.max(introspection, d.introspection);
  }
  return { data, introspection };
}

/**
 * How deep introspection may go: exactly as deep as graphql-js's own full introspection query
 * (the one GraphiQL and code generators send), which needs more than MAX_DEPTH for its nested
 * `ofType`s. Introspection is only allowed outside production (see the route).
 */
export const MAX_INTROSPECTION_DEPTH = (() => {
  const doc = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    }),
  );
  const fragments = new Map(
    doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  let max = 0;
  for (const d of doc.definitions)
    if (d.kind === Kind.OPERATION_DEFINITION)
      max = Math.max(max, operationDepth(d.selectionSet, (n) => fragments.get(n), new Map()).introspection);
  return max;
})();

/** Validation rule: operations deeper than MAX_DEPTH (introspection: MAX_INTROSPECTION_DEPTH) are refused. */
export function depthLimitRule(context: ValidationContext): ASTVisitor {
  const memo = new Map<string, number>();
  const fragments: Fragments = (name) => context.getFragment(name) ?? undefined;
  return {
    OperationDefinition(node) {
      const d = operationDepth(node.selectionSet, fragments, memo);
      if (d.data > MAX_DEPTH)
        context.reportError(new GraphQLError(`Query is too deep: depth ${d.data} exceeds the limit of ${MAX_DEPTH}`, { nodes: node }));
      if (d.introspection > MAX_INTROSPECTION_DEPTH)
        context.reportError(
          new GraphQLError(`Introspection query is too deep: depth ${d.introspection} exceeds the limit of ${MAX_INTROSPECTION_DEPTH}`, {
            nodes: node,
          }),
        );
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Rate limits. rateLimit() (api/middleware/rate-limit.ts) limits whole HTTP requests: as route
// middleware on POST /graphql it would count every query too. So the limited fields count
// themselves, in the REST route's own bucket (the same scope, per merchant account, or per IP when
// the key does not resolve): a merchant's 100 creations a minute are shared by POST /payments and
// createPayment, over all of its keys. Each limited field of a document counts once (two aliased
// createPayment calls count two).

/** The REST scope each limited field takes from. */
export const FIELD_SCOPES = {
  createPayment: "payments.create",
  balance: "balance",
  vaultConfig: "vault.config",
  vaultUser: "vault.users.read",
  vaultDeposits: "vault.deposits",
  recoverFunds: "payments.recover",
} as const satisfies Record<string, Scope>;

export type RateLimitedField = keyof typeof FIELD_SCOPES;

/** Counts one call of `field`; throws RateLimited (`Too many requests`, RATE_LIMITED, http 429, retryAfter) beyond its limit. */
export async function countCall(deps: AppDeps, field: RateLimitedField, who: { caller: Caller; clientIp: string }): Promise<void> {
  const merchant = await findMerchant(deps, who.caller);
  const t = await takeFor(deps, FIELD_SCOPES[field], merchant ? { merchantId: merchant.id } : { ip: who.clientIp });
  if (!t.allowed) throw new RateLimited(retryAfterSeconds(t));
}
