import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValueNode } from "graphql";

/**
 * Most work one operation may ask for, in rows: `payments(limit: 100)` costs 100, every other root field 1 (one
 * lookup). Five full pages of payments fit; a document whose fragments expand to hundreds of pages does not.
 */
export const MAX_COST = 500;

/** Root fields that read a page of rows: their cost is the page size (`limit`), the default when absent. */
const PAGED: Record<string, { max: number; defaultLimit: number }> = {
  payments: { max: 100, defaultLimit: 100 },
  vaultDeposits: { max: 100, defaultLimit: 50 },
};

/** Values of the request's variables, by name; a variable whose value is not an integer counts as the largest page. */
type Variables = Record<string, unknown> | null | undefined;

/**
 * A `limit` counts as given, clamped to the field's range: a literal, or a variable's value in the request (else its
 * default in the operation); anything else (not an integer, so refused later by coercion) as the largest page.
 */
function pageSize(field: string, limit: ValueNode | undefined, vars: Variables, defaults: Map<string, ValueNode>): number {
  const p = PAGED[field]!;
  if (!limit) return p.defaultLimit;
  let n: unknown = limit.kind === Kind.INT ? Number(limit.value) : undefined;
  if (limit.kind === Kind.VARIABLE) {
    const name = limit.name.value;
    const d = defaults.get(name);
    n = vars && name in vars ? vars[name] : d?.kind === Kind.INT ? Number(d.value) : undefined;
    // An absent or null variable leaves the field's own default page.
    if (n == null && d?.kind !== Kind.INT) return p.defaultLimit;
  }
  return Number.isSafeInteger(n) ? Math.min(p.max, Math.max(1, n as number)) : p.max;
}

type Tally = { cost: number; roots: number };
type Fragments = (name: string) => SelectionSetNode | undefined;
type Scope = { fragments: Fragments; vars: Variables; defaults: Map<string, ValueNode> };

/**
 * Cost and root-field count of an operation's root selection set, with fragments (named and inline) expanded and
 * each aliased or repeated field counted where it occurs: what the executor would run. @skip/@include count as
 * included (their variables are unknown here). A fragment's tally is memoized, so a document that spreads
 * fragments into each other costs linear time to measure; cycles are refused by NoFragmentCyclesRule (count 0 here).
 */
export function rootTally(set: SelectionSetNode, scope: Scope, memo = new Map<string, Tally>()): Tally {
  const t: Tally = { cost: 0, roots: 0 };
  for (const s of set.selections) {
    let inner: Tally;
    if (s.kind === Kind.FIELD) {
      const name = s.name.value;
      if (name.startsWith("__")) continue;
      const limit = s.arguments?.find((a) => a.name.value === "limit")?.value;
      inner = { cost: name in PAGED ? pageSize(name, limit, scope.vars, scope.defaults) : 1, roots: 1 };
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      inner = rootTally(s.selectionSet, scope, memo);
    } else {
      const name = s.name.value;
      if (!memo.has(name)) {
        memo.set(name, { cost: 0, roots: 0 });
        const f = scope.fragments(name);
        if (f) memo.set(name, rootTally(f, scope, memo));
      }
      inner = memo.get(name)!;
    }
    t.cost += inner.cost;
    t.roots += inner.roots;
  }
  return t;
}

/**
 * Validation rule: an operation whose expanded root fields cost more than MAX_COST, or number more than
 * `maxRoots`, is refused before anything runs (400, GRAPHQL_VALIDATION_FAILED). `vars`: the request's variables,
 * for `limit: $n`.
 */
export const costLimitRule =
  (maxRoots: number, vars?: Variables) =>
  (context: ValidationContext): ASTVisitor => {
    const fragments: Fragments = (name) => context.getFragment(name)?.selectionSet;
    return {
      OperationDefinition(node) {
        const defaults = new Map<string, ValueNode>();
        for (const d of node.variableDefinitions ?? []) if (d.defaultValue) defaults.set(d.variable.name.value, d.defaultValue);
        // Per operation: a fragment's cost depends on the operation's variable defaults.
        const t = rootTally(node.selectionSet, { fragments, vars, defaults });
        if (t.roots > maxRoots)
          context.reportError(new GraphQLError(`Too many root fields: ${t.roots} exceeds the limit of ${maxRoots}`, { nodes: node }));
        else if (t.cost > MAX_COST)
          context.reportError(
            new GraphQLError(`Query is too costly: it would read up to ${t.cost} rows, the limit is ${MAX_COST}`, { nodes: node }),
          );
      },
    };
  };
