import { createHmac, timingSafeEqual } from "node:crypto";
import type { PaymentRow } from "./types.js";

/**
 * Redirect hash: HMAC-SHA256 (server secret) over the payment's identifying data, so a payer cannot
 * forge a redirect for another payment, amount, token, chain or merchant.
 */
export function redirectHash(
  secret: string,
  p: Pick<PaymentRow, "id" | "order_id" | "merchant_address" | "chain_id" | "token_address" | "amount_units">,
): string {
  const data = [p.id, p.order_id, p.merchant_address.toLowerCase(), p.chain_id, p.token_address.toLowerCase(), p.amount_units].join("|");
  return createHmac("sha256", secret).update(data).digest("hex");
}

export function hashMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(given.toLowerCase(), "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Where the payer goes after a successful payment: redirectUrl + service, success and hash. */
export function redirectTarget(secret: string, p: PaymentRow): string | null {
  if (!p.redirect_url) return null;
  const url = new URL(p.redirect_url);
  url.searchParams.set("service", p.id);
  url.searchParams.set("success", "true");
  url.searchParams.set("hash", redirectHash(secret, p));
  return url.toString();
}
