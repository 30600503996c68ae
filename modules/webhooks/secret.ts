import { randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";

/**
 * A dedicated signing secret: `whsec_` + base64 of 32 bytes from the OS CSPRNG. The same value is the
 * `X-Signature` key (appended to the body as text) and, base64-decoded, the Standard Webhooks HMAC key
 * (the format the `standardwebhooks` package expects).
 */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/** `whsec_********` + the last 4 characters: enough to tell secrets apart, useless to sign. */
export function maskSecret(secret: string | null): string | null {
  if (!secret) return null;
  return `${SECRET_PREFIX}********${secret.slice(-4)}`;
}
