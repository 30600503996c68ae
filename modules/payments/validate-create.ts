import { z } from "zod";
import { chainInfo } from "../../chains/registry.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { MAX_UINT256 } from "../../core/money.js";

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
export const DECIMAL_RE = /^\d+(\.\d+)?$/;

/** customPriceUsd: a positive decimal with at most 18 fraction digits (the precision prices are kept in). */
const CUSTOM_PRICE_RE = /^\d+(\.\d{1,18})?$/;
const positiveDecimal = (v: string) => DECIMAL_RE.test(v) && /[1-9]/.test(v);

/** Shape and limits of POST /payments; any violation is `Invalid form data`. String limits count characters (code points). */
const body = z.object({
  merchant: z.string(),
  chainId: z.union([z.string(), z.number().int()]).transform(String),
  token: z.string(),
  amount: z.union([z.string(), z.number()]).transform(String),
  orderId: z.string().min(1).max(100),
  description: z.string().max(200).optional().nullable(),
  redirectUrl: z.url({ protocol: /^https?$/ }).max(2000).optional().nullable(),
  expiresAt: z.number().int().positive().optional().nullable(),
  blockConfirmations: z.number().int().min(1).max(100).optional().nullable(),
  gasless: z.boolean().optional().nullable(),
  payerCoversFee: z.boolean().optional().nullable(),
  // A form field: a malformed price is `Invalid form data`, reported before the address checks.
  customPriceUsd: z
    .union([z.string(), z.number()])
    .transform(String)
    .refine((v) => CUSTOM_PRICE_RE.test(v) && /[1-9]/.test(v))
    .optional()
    .nullable(),
});

export type CreatePaymentInput = {
  merchant: `0x${string}`;
  chainId: number;
  token: `0x${string}`;
  amount: string;
  orderId: string;
  description?: string;
  redirectUrl?: string;
  expiresAt?: number;
  blockConfirmations: number;
  gasless: boolean;
  payerCoversFee: boolean;
  customPriceUsd?: string;
};

export type ValidationResult = { ok: true; input: CreatePaymentInput } | { ok: false; error: string };

/**
 * What the body is checked against beyond its own text. Without it only the registry is known;
 * with it the network must be one this service runs (a factory deployed), the amount must fit the
 * decimals of a known token, and `expiresAt` must lie in the future: all body errors, so they are
 * reported before the API key is looked at (spec order).
 */
export type ValidationContext = { chains?: readonly ActiveChain[]; now?: number };

const fail = (error: string): ValidationResult => ({ ok: false, error });

/** The spec's checks in the spec's order; the first failing one names the error. */
export function validateCreatePayment(raw: unknown, ctx: ValidationContext = {}): ValidationResult {
  const parsed = body.safeParse(raw);
  if (!parsed.success) return fail("Invalid form data");
  const b = parsed.data;
  if (ctx.now !== undefined && b.expiresAt != null && b.expiresAt <= ctx.now) return fail("Invalid form data");
  // The zero address receives nothing: the factory refuses it as a payout, so a payer's funds would be stranded.
  if (!ADDRESS_RE.test(b.merchant) || /^0x0{40}$/.test(b.merchant)) return fail("Invalid Merchant address format");
  if (!ADDRESS_RE.test(b.token)) return fail("Invalid Token address format");
  const chainId = /^\d+$/.test(b.chainId) ? Number(b.chainId) : NaN;
  if (!chainInfo(chainId)) return fail("Invalid network selected");
  const running = ctx.chains?.find((c) => c.chainId === chainId);
  if (ctx.chains && !running?.factory) return fail("Invalid network selected");
  const amount = b.amount.trim();
  if (!positiveDecimal(amount)) return fail("Amount must be a positive number");
  const [whole, frac = ""] = amount.split(".") as [string, string?];
  // No token holds more than uint256 smallest units (78 digits): larger amounts are refused up front.
  if (whole.replace(/^0+/, "").length > 78 || BigInt(whole) > MAX_UINT256) return fail("Amount must be a positive number");
  const decimals = running ? findToken(running, b.token)?.decimals : undefined;
  if (decimals !== undefined && (frac.length > decimals || BigInt(whole + frac.padEnd(decimals, "0")) > MAX_UINT256))
    return fail("Amount must be a positive number");
  return {
    ok: true,
    input: {
      merchant: b.merchant as `0x${string}`,
      chainId,
      token: b.token as `0x${string}`,
      amount,
      orderId: b.orderId,
      description: b.description ?? undefined,
      redirectUrl: b.redirectUrl ?? undefined,
      expiresAt: b.expiresAt ?? undefined,
      blockConfirmations: b.blockConfirmations ?? 1,
      gasless: b.gasless ?? false,
      payerCoversFee: b.payerCoversFee ?? false,
      customPriceUsd: b.customPriceUsd ?? undefined,
    },
  };
}
