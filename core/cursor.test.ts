import { describe, expect, it } from "vitest";
import { cursorAtSql, decodeCursor, encodeCursor } from "./cursor.js";

const AT = "2025-01-15T10:20:30.123456Z";
const ID = "0b7e5a3c-1f2d-4e6a-9b8c-7d6e5f4a3b2c";
const b64 = (text: string) => Buffer.from(text).toString("base64url");
const json = (v: unknown) => b64(JSON.stringify(v));

describe("cursor", () => {
  it("round-trips what it encodes, microseconds included", () => {
    const c = encodeCursor({ at: AT, id: ID });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual({ at: AT, id: ID });
  });

  it("is opaque base64url of a JSON pair", () => {
    expect(Buffer.from(encodeCursor({ at: AT, id: ID }), "base64url").toString("utf8")).toBe(JSON.stringify([AT, ID]));
  });

  it.each([
    ["empty", ""],
    ["not base64url", "garbage!"],
    ["plain word", "garbage"],
    ["base64 with padding", Buffer.from(JSON.stringify([AT, ID])).toString("base64")],
    ["non-canonical base64url", `${json([AT, ID])}A`],
    ["not JSON", b64(`${AT}|${ID}`)],
    ["an object", json({ a: 1 })],
    ["one element", json([AT])],
    ["three elements", json([AT, ID, "x"])],
    ["numbers", json([1, 2])],
    ["dashes for a uuid", json([AT, "-".repeat(36)])],
    ["letters beyond f", json([AT, "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"])],
    ["uppercase uuid", json([AT, ID.toUpperCase()])],
    ["a year alone", json(["2024", ID])],
    ["text", json(["not a date at all 5", ID])],
    ["milliseconds only", json(["2025-01-15T10:20:30.123Z", ID])],
    ["no zone", json(["2025-01-15T10:20:30.123456", ID])],
    ["an offset", json(["2025-01-15T10:20:30.123456+02:00", ID])],
    ["an impossible date", json(["2024-02-30T00:00:00.000000Z", ID])],
    ["hour 24", json(["2024-02-01T24:00:00.000000Z", ID])],
    ["swapped", json([ID, AT])],
    // Postgres has no year 0; no row of ours predates the epoch.
    ["year 0", json(["0000-01-01T00:00:00.000000Z", ID])],
    ["before 1970", json(["1969-12-31T23:59:59.999999Z", ID])],
  ])("refuses %s", (_name, forged) => {
    expect(decodeCursor(forged)).toBeNull();
  });

  it("reads the column as UTC with microseconds", () => {
    expect(cursorAtSql("p.created_at")).toBe(`to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);
  });
});
