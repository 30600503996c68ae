import { describe, expect, it } from "vitest";
import { z } from "zod";
import { firstIssue, objectError, UNKNOWN_FIELDS, unknownFieldsMessage } from "./zod-issues.js";

const body = z.strictObject(
  {
    name: z.string({ error: "name must be a string" }),
    items: z
      .array(z.strictObject({ id: z.number({ error: "id must be a number" }) }, { error: objectError("must be an object") }))
      .max(2, "too many"),
  },
  { error: objectError("Body must be a JSON object", ["fee"]) },
);
const first = (value: unknown, order: string[]) => {
  const r = body.safeParse(value);
  return r.success ? null : firstIssue(r.error.issues, order).message;
};

describe("firstIssue", () => {
  it("reports in the given order of keys, unknown fields where UNKNOWN_FIELDS stands", () => {
    const bad = { name: 5, color: 1, items: [{ id: "x" }] };
    expect(first(bad, ["name", UNKNOWN_FIELDS, "items"])).toBe("name must be a string");
    expect(first(bad, [UNKNOWN_FIELDS, "name", "items"])).toBe("Unknown field: color");
    expect(first(bad, ["items", "name", UNKNOWN_FIELDS])).toBe("id must be a number");
  });

  it("items by index, a container's own issue before its items', an item's unknown fields by the same order", () => {
    expect(first({ name: "a", items: [{ id: 1 }, { id: "x" }, 3] }, ["name", "items"])).toBe("too many");
    expect(first({ name: "a", items: [{ id: 1 }, { id: "x", extra: 1 }] }, [UNKNOWN_FIELDS, "name", "items", "id"])).toBe(
      "Unknown field: extra",
    );
    expect(first({ name: "a", items: [{ id: 1 }, { id: "x", extra: 1 }] }, ["name", "items", "id", UNKNOWN_FIELDS])).toBe(
      "id must be a number",
    );
    expect(first({ name: "a", items: [7, { id: "x" }] }, ["name", "items"])).toBe("must be an object");
    expect(first(null, ["name"])).toBe("Body must be a JSON object");
  });
});

describe("unknownFieldsMessage", () => {
  it("names the fields, or the first field only the operator may set", () => {
    expect(unknownFieldsMessage(["color"])).toBe("Unknown field: color");
    expect(unknownFieldsMessage(["color", "size"])).toBe("Unknown fields: color, size");
    expect(unknownFieldsMessage(["color", "fee"], ["fee"])).toBe("fee can only be set by the operator for a registered business");
    expect(first({ name: "a", items: [], fee: 1, color: 2 }, ["name"])).toBe(
      "fee can only be set by the operator for a registered business",
    );
  });
});
