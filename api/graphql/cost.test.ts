import { parse, validate } from "graphql";
import { describe, expect, it } from "vitest";
import { costLimitRule, MAX_COST } from "./cost.js";
import { schema } from "./schema.js";

const errors = (doc: string, vars?: Record<string, unknown>) =>
  validate(schema, parse(doc), [costLimitRule(10, vars)]).map((e) => e.message);
const aliased = (n: number, field = "payments(limit: 100) { hasMore }", prefix = "p") =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}: ${field}`).join(" ");

describe("GraphQL cost over the expanded document", () => {
  it("counts root fields spread in through named fragments, nested fragments and inline fragments", () => {
    expect(errors(`query { ...A } fragment A on Query { ${aliased(4)} }`)).toEqual([]);
    // The attack: two fragments of 280 aliased pages each.
    expect(
      errors(`query { ...A ...B } fragment A on Query { ${aliased(280)} } fragment B on Query { ${aliased(280, undefined, "q")} }`),
    ).toEqual(["Too many root fields: 560 exceeds the limit of 10"]);
    expect(
      errors(`query { ...A ...A } fragment A on Query { ...B ...B } fragment B on Query { ${aliased(3, "balance { balance }")} }`),
    ).toEqual(["Too many root fields: 12 exceeds the limit of 10"]);
    expect(
      errors(`query { ... on Query { ${aliased(6, "balance { balance }")} } ... { ${aliased(5, "promoStatus { __typename }", "s")} } }`),
    ).toEqual(["Too many root fields: 11 exceeds the limit of 10"]);
    expect(errors(`query ($s: Boolean!) { ${aliased(11, "balance @skip(if: $s) { balance }")} }`)).toEqual([
      "Too many root fields: 11 exceeds the limit of 10",
    ]);
  });

  it("costs a page by its limit: a literal or a variable's value as given, nothing as the field's default page", () => {
    expect(errors(`{ ${aliased(5)} }`)).toEqual([]); // 500
    expect(errors(`{ ${aliased(5)} balance { balance } }`)).toEqual([
      `Query is too costly: it would read up to 501 rows, the limit is ${MAX_COST}`,
    ]);
    expect(errors(`{ ${aliased(10, "payments(limit: 50) { hasMore }")} }`)).toEqual([]); // 500
    const byVar = `query ($n: Int) { ${aliased(6, "payments(limit: $n) { hasMore }")} }`;
    expect(errors(byVar, { n: 80 })).toEqual([]); // 480
    expect(errors(byVar, { n: 90 })).toEqual([`Query is too costly: it would read up to 540 rows, the limit is ${MAX_COST}`]);
    expect(errors(byVar)).toEqual([`Query is too costly: it would read up to 600 rows, the limit is ${MAX_COST}`]); // default page
    expect(errors(byVar, { n: "10" })).toEqual([`Query is too costly: it would read up to 600 rows, the limit is ${MAX_COST}`]);
    // The operation's default, and a variable used inside a fragment.
    expect(errors(`query ($n: Int = 80) { ...F } fragment F on Query { ${aliased(6, "payments(limit: $n) { hasMore }")} }`)).toEqual([]);
    expect(
      errors(`query ($n: Int = 80) { ...F } fragment F on Query { ${aliased(6, "payments(limit: $n) { hasMore }")} }`, { n: 100 }),
    ).toEqual([`Query is too costly: it would read up to 600 rows, the limit is ${MAX_COST}`]);
    expect(errors(`{ ${aliased(6, "payments { hasMore }")} }`)).toEqual([
      `Query is too costly: it would read up to 600 rows, the limit is ${MAX_COST}`,
    ]);
    expect(errors(`{ ${aliased(10, "vaultDeposits { total }")} }`)).toEqual([]); // default page 50
    expect(errors(`{ ${aliased(10, "payments(limit: 100000) { hasMore }")} }`)).toEqual([
      `Query is too costly: it would read up to 1000 rows, the limit is ${MAX_COST}`,
    ]);
  });

  it("terminates on fragment cycles (refused by graphql's own rule)", () => {
    expect(errors(`query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`)).toEqual([]);
  });
});
