import { createHash } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { parseEventList, PAYMENT_EVENTS, vaultSubscribed } from "./events.js";
import { maxAttemptsFor, nextAttemptAt } from "./retry-policy.js";
import { generateWebhookSecret, maskSecret } from "./secret.js";
import { bodySignature, standardSignature, webhookHeaders } from "./sign.js";
import { checkWebhookTarget, isPrivateAddress, parseWebhookUrl } from "./url-policy.js";
import { describeError } from "./deliver.js";

describe("signatures", () => {
  const body = JSON.stringify({ event: "payment.completed", paymentId: "p1", amount: "1.5" });

  it("X-Signature is the lowercase hex SHA-256 of the raw body + key", () => {
    const key = "whsec_abc";
    expect(bodySignature(body, key)).toBe(
      createHash("sha256")
        .update(body + key)
        .digest("hex"),
    );
    expect(bodySignature(body, key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("webhook-signature matches the standardwebhooks package's own signing (secret and raw API key)", () => {
    const secret = generateWebhookSecret();
    const ts = new Date(1_700_000_000_000);
    expect(standardSignature("msg_1", 1_700_000_000, body, secret)).toBe(new Webhook(secret).sign("msg_1", ts, body));
    const apiKey = "cp_live_someKeyValue";
    expect(standardSignature("msg_1", 1_700_000_000, body, apiKey)).toBe(new Webhook(apiKey, { format: "raw" }).sign("msg_1", ts, body));
  });

  it("payment and vault headers; nothing signed without a key", () => {
    const p = webhookHeaders({ scheme: "payment", id: "d1", timestampSeconds: 5, rawBody: body, signingKey: "k" });
    expect(p["X-Signature"]).toBe(bodySignature(body, "k"));
    expect(p["X-Webhook-Signature"]).toBeUndefined();
    const v = webhookHeaders({ scheme: "vault", id: "d1", timestampSeconds: 5, rawBody: body, signingKey: "k" });
    expect(v["X-Webhook-Signature"]).toBe(bodySignature(body, "k"));
    expect(v["X-Signature"]).toBeUndefined();
    const u = webhookHeaders({ scheme: "vault", id: "d1", timestampSeconds: 5, rawBody: body, signingKey: null });
    expect(Object.keys(u).sort()).toEqual(["content-type", "user-agent", "webhook-id", "webhook-timestamp"]);
  });
});

describe("secrets", () => {
  it("are whsec_ + 32 random bytes, masked on reads", () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(maskSecret(a)).toBe(`whsec_********${a.slice(-4)}`);
    expect(maskSecret(null)).toBeNull();
  });
});

describe("url policy", () => {
  it("accepts HTTPS only", () => {
    expect(parseWebhookUrl("http://example.com/hook")).toEqual({ ok: false, error: expect.stringMatching(/HTTPS/) });
    expect(parseWebhookUrl("ftp://example.com/hook").ok).toBe(false);
    expect(parseWebhookUrl("https://user:pw@example.com/").ok).toBe(false);
    expect(parseWebhookUrl("not a url").ok).toBe(false);
    expect(parseWebhookUrl(`https://example.com/${"a".repeat(2000)}`).ok).toBe(false);
    expect(parseWebhookUrl("https://example.com/hook").ok).toBe(true);
  });

  it.each([
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["172.20.0.1", true],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["224.0.0.1", true],
    ["::1", true],
    ["::", true],
    ["fd00::1", true],
    ["fe80::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["64:ff9b::a00:1", true],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    ["2606:4700:4700::1111", false],
    ["172.32.0.1", false],
  ])("%s private=%s", (ip, priv) => {
    expect(isPrivateAddress(ip)).toBe(priv);
  });

  it("refuses private targets unless allowed, by literal and by resolution", async () => {
    const u = (s: string) => new URL(s);
    expect((await checkWebhookTarget(u("https://127.0.0.1/x"), { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookTarget(u("https://[::1]/x"), { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookTarget(u("https://0x7f000001/x"), { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookTarget(u("https://127.0.0.1/x"), { allowPrivate: true })).ok).toBe(true);
    expect((await checkWebhookTarget(u("https://8.8.8.8/x"), { allowPrivate: false })).ok).toBe(true);
    const lookup = async (h: string) =>
      h === "internal.example"
        ? [
            { address: "93.184.216.34", family: 4 },
            { address: "10.0.0.5", family: 4 },
          ]
        : [{ address: "93.184.216.34", family: 4 }];
    expect((await checkWebhookTarget(u("https://internal.example/x"), { allowPrivate: false, lookup })).ok).toBe(false);
    expect((await checkWebhookTarget(u("https://public.example/x"), { allowPrivate: false, lookup })).ok).toBe(true);
    expect((await checkWebhookTarget(u("https://localhost/x"), { allowPrivate: false })).ok).toBe(false);
  });
});

describe("events and retries", () => {
  it("validates event lists", () => {
    expect(parseEventList(["payment.completed", "payment.completed", "payment.expired"], PAYMENT_EVENTS)).toEqual({
      ok: true,
      events: ["payment.completed", "payment.expired"],
    });
    expect(parseEventList(["payment.refunded"], PAYMENT_EVENTS)).toEqual({
      ok: false,
      error: expect.stringMatching(/Unknown event: payment.refunded/),
    });
    // Issue 10: 100,000 unknown events were all echoed back (500 kB); a few are named, each cut short.
    const many = parseEventList(
      Array.from({ length: 100_000 }, (_, i) => `x${i}`.padEnd(200, "y")),
      PAYMENT_EVENTS,
    );
    expect(many.ok).toBe(false);
    expect(!many.ok && many.error.length).toBeLessThan(500);
    expect(!many.ok && many.error).toContain("and 99995 more");
    expect(parseEventList([], PAYMENT_EVENTS).ok).toBe(false);
    expect(parseEventList("payment.completed", PAYMENT_EVENTS).ok).toBe(false);
    expect(vaultSubscribed(["deposit.*"], "deposit.failed")).toBe(true);
    expect(vaultSubscribed(["deposit.completed"], "deposit.failed")).toBe(false);
  });

  it("schedule: immediately, +5 min, +10 min, then failed; awaiting_gas once", () => {
    expect(maxAttemptsFor("payment.completed")).toBe(3);
    expect(maxAttemptsFor("deposit.completed")).toBe(3);
    expect(maxAttemptsFor("payment.awaiting_gas")).toBe(1);
    expect(nextAttemptAt(1, 3, 1000)).toBe(1000 + 5 * 60_000);
    expect(nextAttemptAt(2, 3, 1000)).toBe(1000 + 10 * 60_000);
    expect(nextAttemptAt(3, 3, 1000)).toBeNull();
    expect(nextAttemptAt(1, 1, 1000)).toBeNull();
  });

  it("classifies failures", () => {
    expect(describeError(Object.assign(new Error("getaddrinfo ENOTFOUND x.invalid"), { code: "ENOTFOUND" }), 1)).toMatch(/^dns:/);
    expect(describeError(Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }), 1)).toMatch(/^tls:/);
    expect(describeError(new DOMException("The operation was aborted due to timeout", "TimeoutError"), 30000)).toMatch(/^timeout:/);
    expect(describeError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 1)).toMatch(/^connection:/);
  });
});
