import { createHash, createHmac } from "node:crypto";
import { SECRET_PREFIX } from "./secret.js";

/**
 * The spec's signature (`X-Signature` for payments, `X-Webhook-Signature` for the Vault): lowercase hex
 * SHA-256 of the raw JSON body concatenated with the signing key (the `whsec_…` secret, or the API key
 * of a legacy webhook).
 */
export function bodySignature(rawBody: string, signingKey: string): string {
  return createHash("sha256")
    .update(rawBody + signingKey)
    .digest("hex");
}

/**
 * The HMAC key of Standard Webhooks: a `whsec_<base64>` secret is base64-decoded (what the
 * `standardwebhooks` package does); any other key (a legacy webhook's API key) is used as its UTF-8
 * bytes (verify with `new Webhook(apiKey, { format: "raw" })`).
 */
export function standardKey(signingKey: string): Buffer {
  return signingKey.startsWith(SECRET_PREFIX)
    ? Buffer.from(signingKey.slice(SECRET_PREFIX.length), "base64")
    : Buffer.from(signingKey, "utf8");
}

/** `webhook-signature`: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`. */
export function standardSignature(id: string, timestampSeconds: number, rawBody: string, signingKey: string): string {
  const mac = createHmac("sha256", standardKey(signingKey)).update(`${id}.${timestampSeconds}.${rawBody}`).digest("base64");
  return `v1,${mac}`;
}

export type SignatureScheme = "payment" | "vault";

/**
 * Headers of one attempt. `webhook-id` is stable per event (the receiver's deduplication key);
 * `webhook-timestamp` is the send time in Unix seconds. Without a key (a Vault webhook with no secret)
 * nothing is signed.
 */
export function webhookHeaders(input: {
  scheme: SignatureScheme;
  id: string;
  timestampSeconds: number;
  rawBody: string;
  signingKey: string | null;
}): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "chainpay-webhooks/1",
    "webhook-id": input.id,
    "webhook-timestamp": String(input.timestampSeconds),
  };
  if (input.signingKey) {
    h[input.scheme === "payment" ? "X-Signature" : "X-Webhook-Signature"] = bodySignature(input.rawBody, input.signingKey);
    h["webhook-signature"] = standardSignature(input.id, input.timestampSeconds, input.rawBody, input.signingKey);
  }
  return h;
}
