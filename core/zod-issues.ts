import type { z } from "zod";

// Request schemas report every problem at once; the API reports one, in a fixed order of checks (docs/vault.md,
// docs/webhooks.md give the messages). These helpers pick that one issue and word what zod cannot know.

type Issue = z.core.$ZodIssue;

/** The place of a strict object's unknown fields in an `order` list (zod reports them after the known fields). */
export const UNKNOWN_FIELDS = "~unknown";

/** Where an issue sits: its path, an object's unknown fields under the pseudo key UNKNOWN_FIELDS. */
const placeOf = (issue: Issue): PropertyKey[] => (issue.code === "unrecognized_keys" ? [...issue.path, UNKNOWN_FIELDS] : issue.path);

/**
 * The issue reported first when checks run in `order`: paths compare segment by segment, array items by index,
 * keys by their place in `order` (keys not in it last), a container's own issue (a shorter path) before its
 * items'. Within one place, zod's order stands: a field's checks in the order the schema declares them.
 * @example firstIssue(issues, [UNKNOWN_FIELDS, "url", "events"]) // an unknown field before a bad url
 */
export function firstIssue<I extends Issue>(issues: readonly I[], order: readonly string[]): I {
  const rank = (key: PropertyKey) => {
    if (typeof key === "number") return key;
    const i = order.indexOf(String(key));
    return i < 0 ? order.length : i;
  };
  const compare = (a: PropertyKey[], b: PropertyKey[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = rank(a[i]!) - rank(b[i]!);
      if (d !== 0) return d;
    }
    return a.length - b.length;
  };
  if (!issues.length) throw new Error("firstIssue of no issues");
  return issues.reduce((best, issue) => (compare(placeOf(issue), placeOf(best)) < 0 ? issue : best));
}

/**
 * The message of unknown fields: `Unknown field: color`, `Unknown fields: a, b`; a field only the operator may
 * set (`operatorOnly`) is named as such instead.
 * @example unknownFieldsMessage(["feeBps"], ["feeBps"]) // "feeBps can only be set by the operator for a registered business"
 */
export function unknownFieldsMessage(keys: readonly string[], operatorOnly: readonly string[] = []): string {
  const reserved = keys.find((k) => operatorOnly.includes(k));
  if (reserved) return `${reserved} can only be set by the operator for a registered business`;
  return `Unknown field${keys.length > 1 ? "s" : ""}: ${keys.join(", ")}`;
}

/**
 * The `error` of a strict object body: its unknown fields (unknownFieldsMessage), or `notObject` when the value
 * is not an object at all.
 */
export const objectError =
  (notObject: string, operatorOnly: readonly string[] = []) =>
  (issue: z.core.$ZodRawIssue): string =>
    issue.code === "unrecognized_keys" ? unknownFieldsMessage(issue.keys, operatorOnly) : notObject;
