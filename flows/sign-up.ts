import { z } from "zod";
import type { AppDeps } from "../core/deps.js";
import { Forbidden, Invalid } from "../core/errors.js";
import { agentByReferralCode } from "../modules/agents/index.js";
import { createMerchant, createSession, newToken, SESSION_TTL_MS } from "../modules/merchants/index.js";

export const SIGNUP_CLOSED = "Sign-up is closed on this service";

/** The sign-up form's rules (the local demo account keeps them too: local/demo-merchant.ts). */
export const signUpForm = z.object({
  name: z.string().trim().min(1, "Name is required").max(100, "Name must be at most 100 characters"),
  email: z.string().trim().max(254).email("Enter a valid e-mail address"),
  password: z.string().min(12, "Password must be at least 12 characters").max(200, "Password must be at most 200 characters"),
  /** An agent's referral code (docs/agents.md): the new merchant is referred by that agent. */
  referralCode: z.string().trim().max(32, "Unknown referral code").optional(),
});

/**
 * Dashboard sign-up: a direct merchant (1% platform fee) with a dashboard login, and a session for it; with an
 * agent's `referralCode`, referred by that agent (Invalid `Unknown referral code` for a code that is no agent's).
 * Refused with Forbidden when the operator closed sign-up (DASHBOARD_SIGNUP=closed).
 *
 * An e-mail that already has an account gets the same answer: a session token of the same form and expiry,
 * a decoy stored nowhere, after the same password hashing, and nothing changes. So the answer does not tell whether
 * the address has an account; the next page does (the decoy opens no session), as it must without e-mail
 * verification: anyone can also log in with the password they chose (docs/dashboard.md, "Sign-up and existing accounts").
 *
 * @example
 * const { merchantId, token } = await signUp(deps, { name: "Shop", email: "a@shop.example", password: "correct horse battery" });
 * // merchantId: the new account's id, or null when the e-mail had one (token is then a decoy)
 */
export async function signUp(
  deps: Pick<AppDeps, "db" | "now" | "config">,
  body: unknown,
): Promise<{ merchantId: string | null; token: string; expiresAt: Date }> {
  if (deps.config.DASHBOARD_SIGNUP === "closed") throw new Forbidden(SIGNUP_CLOSED);
  const parsed = signUpForm.safeParse(body);
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]?.message ?? "Invalid form data");
  const { name, email, password, referralCode } = parsed.data;
  const agentId = referralCode ? await agentByReferralCode(deps.db.pool, referralCode) : undefined;
  try {
    const merchant = await createMerchant(deps.db, { name, email, password, type: "direct", agentId });
    return { merchantId: merchant.id, ...(await createSession(deps.db, merchant.id, deps.now())) };
  } catch (err) {
    // merchants.email is unique (lowercased): the password was hashed before the insert failed, as for a new one.
    if ((err as { code?: string }).code === "23505" || (err as { cause?: { code?: string } }).cause?.code === "23505")
      return { merchantId: null, token: newToken(), expiresAt: new Date(deps.now() + SESSION_TTL_MS) };
    throw err;
  }
}
