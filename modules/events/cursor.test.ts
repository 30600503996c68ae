import { describe, expect, it } from "vitest";
import { decodeFeedCursor, encodeFeedCursor } from "./cursor.js";

const b64 = (text: string) => Buffer.from(text).toString("base64url");

describe("feed cursor", () => {
  it.each(["0", "1", "42", "9223372036854775807"])("round-trips position %s", (position) => {
    const c = encodeFeedCursor(position);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeFeedCursor(c)).toBe(position);
  });

  it.each([
    ["empty", ""],
    ["not base64url", "garbage!"],
    ["base64 with padding", Buffer.from("ev:1").toString("base64")],
    ["non-canonical base64url", `${b64("ev:12")}A`],
    ["no prefix", b64("12")],
    ["negative", b64("ev:-1")],
    ["leading zero", b64("ev:01")],
    ["a fraction", b64("ev:1.5")],
    ["beyond bigint", b64("ev:9223372036854775808")],
    ["twenty digits", b64("ev:10000000000000000000")],
    ["trailing text", b64("ev:1 ")],
    ["a list cursor", b64(JSON.stringify(["2025-01-15T10:20:30.123456Z", "0b7e5a3c-1f2d-4e6a-9b8c-7d6e5f4a3b2c"]))],
  ])("refuses %s", (_what, text) => {
    expect(decodeFeedCursor(text)).toBeNull();
  });
});
