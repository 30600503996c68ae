import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";
import { createSecretBox, isSealed, keyId, parseSecretKey, secretBoxOf } from "./secret-box.js";

const key = randomBytes(32);
const box = createSecretBox({ current: key });
const secret = `whsec_${randomBytes(32).toString("base64")}`;

describe("seal and open (AES-256-GCM)", () => {
  it("round trip, versioned text format, a fresh IV each time", () => {
    const a = box.seal(secret, "webhook_configs.secret:m1");
    const b = box.seal(secret, "webhook_configs.secret:m1");
    expect(a).toMatch(new RegExp(`^enc:v1:${keyId(key)}:[A-Za-z0-9_-]+$`));
    expect(a).not.toBe(b);
    expect(a).not.toContain(secret);
    // iv (12) + tag (16) + ciphertext (as long as the plaintext)
    expect(Buffer.from(a.split(":")[3]!, "base64url")).toHaveLength(12 + 16 + secret.length);
    expect(box.open(a, "webhook_configs.secret:m1")).toBe(secret);
    expect(box.open(b, "webhook_configs.secret:m1")).toBe(secret);
    expect(isSealed(a)).toBe(true);
    expect(box.isCurrent(a)).toBe(true);
  });

  it("legacy plaintext opens as itself and is not current", () => {
    expect(box.open(secret, "anything")).toBe(secret);
    expect(isSealed(secret)).toBe(false);
    expect(box.isCurrent(secret)).toBe(false);
  });

  it("is bound to its context: a value copied to another row does not open there", () => {
    const sealed = box.seal(secret, "webhook_configs.secret:m1");
    expect(() => box.open(sealed, "webhook_configs.secret:m2")).toThrow(/does not open/);
  });

  it("refuses altered, truncated, unknown-format and unknown-key values", () => {
    const sealed = box.seal(secret, "c");
    const data = Buffer.from(sealed.split(":")[3]!, "base64url");
    data[data.length - 1]! ^= 1;
    expect(() => box.open(`enc:v1:${keyId(key)}:${data.toString("base64url")}`, "c")).toThrow(/does not open/);
    expect(() => box.open(`enc:v1:${keyId(key)}:AAAA`, "c")).toThrow(/truncated/);
    expect(() => box.open(`enc:v2:${keyId(key)}:AAAA`, "c")).toThrow(/unknown format/);
    const other = createSecretBox({ current: randomBytes(32) });
    expect(() => other.open(sealed, "c")).toThrow(/neither SECRET_KEY nor SECRET_KEY_PREVIOUS/);
  });

  it("rotation: a previous key still opens, only the current one seals", () => {
    const old = box.seal(secret, "c");
    const rotated = createSecretBox({ current: randomBytes(32), previous: [key] });
    expect(rotated.open(old, "c")).toBe(secret);
    expect(rotated.isCurrent(old)).toBe(false);
    const resealed = rotated.seal(secret, "c");
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(() => box.open(resealed, "c")).toThrow(/neither/);
  });

  it("without a key nothing is derived: sealing throws, plaintext still opens", () => {
    const none = createSecretBox({});
    expect(none.keyId).toBeNull();
    expect(() => none.seal(secret, "c")).toThrow(/SECRET_KEY is not set/);
    expect(none.open(secret, "c")).toBe(secret);
    expect(() => none.open(box.seal(secret, "c"), "c")).toThrow(/neither/);
    expect(none.isCurrent(box.seal(secret, "c"))).toBe(false);
  });
});

describe("SECRET_KEY", () => {
  const hex = key.toString("hex");

  it("is 32 bytes as 64 hex characters or canonical base64 / base64url", () => {
    expect(parseSecretKey(hex).equals(key)).toBe(true);
    expect(parseSecretKey(hex.toUpperCase()).equals(key)).toBe(true);
    expect(parseSecretKey(key.toString("base64")).equals(key)).toBe(true);
    expect(parseSecretKey(key.toString("base64").replace(/=$/, "")).equals(key)).toBe(true);
    expect(parseSecretKey(key.toString("base64url")).equals(key)).toBe(true);
    expect(parseSecretKey(`${hex}\n`).equals(key)).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["63 hex characters", "a".repeat(63)],
    ["65 hex characters", "a".repeat(65)],
    ["0x-prefixed hex", `0x${"a".repeat(64)}`],
    ["31 bytes of base64", randomBytes(31).toString("base64")],
    ["33 bytes of base64", randomBytes(33).toString("base64")],
    ["non-canonical base64 (stray low bits)", "A".repeat(42) + "B="],
    ["a passphrase", "correct horse battery staple"],
  ])("refuses %s", (_, text) => {
    expect(() => parseSecretKey(text)).toThrow(/32 bytes given as 64 hex characters or base64/);
  });

  it("configuration: optional outside production, required and validated in production", () => {
    expect(loadConfig({}).SECRET_KEY).toBeUndefined();
    expect(loadConfig({ SECRET_KEY: hex }).SECRET_KEY).toBe(hex);
    expect(() => loadConfig({ SECRET_KEY: "short" })).toThrow(/SECRET_KEY must be 32 bytes/);
    expect(() => loadConfig({ SECRET_KEY: hex, SECRET_KEY_PREVIOUS: `${hex},nope` })).toThrow(/SECRET_KEY_PREVIOUS must be/);
    const prod = { NODE_ENV: "production", HASH_SECRET: "h".repeat(32) };
    expect(() => loadConfig(prod)).toThrow(/^SECRET_KEY must be set in production/);
    expect(loadConfig({ ...prod, SECRET_KEY: hex }).SECRET_KEY).toBe(hex);
  });

  it("secretBoxOf: one box per configuration, SECRET_KEY_PREVIOUS comma-separated", () => {
    const previous = randomBytes(32);
    const sealedBefore = createSecretBox({ current: previous }).seal(secret, "c");
    const config = { SECRET_KEY: hex, SECRET_KEY_PREVIOUS: ` ${randomBytes(32).toString("hex")}, ${previous.toString("hex")}` };
    const b = secretBoxOf(config);
    expect(secretBoxOf({ ...config })).toBe(b);
    expect(b.keyId).toBe(keyId(key));
    expect(b.open(sealedBefore, "c")).toBe(secret);
  });
});
