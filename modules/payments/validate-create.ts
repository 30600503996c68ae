import { isAddress, zeroAddress } from "viem";
import { z } from "zod";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { Invalid } from "../../core/errors.js";
import { parsePositiveAmount } from "../../core/money.js";
import { parseCustomPriceUsd } from "../pricing/index.js";

/** The last instant a JavaScript Date can hold (year 275760). */
const MAX_DATE_MS = 8_640_000_000_000_000;

// Postgres cannot store NUL in text: refused here for every caller (REST bodies get this 400 earlier, GraphQL refuses
// NUL in its input), so no creation fails in the database for it, nor drags a batch (insert-batch.ts) down with it.
const noNul = (s: string) => !s.includes("\u0000");

/** Shape and limits of POST /payments; any violation is `Invalid form data`. String limits count characters (code points). */
export const createPaymentBody = z.object({
  merchant: z.string(),
  chainId: z.union([z.string(), z.number().int()]).transform(String),
  token: z.string(),
  // Strings only, as the spec types them: a JSON number is a float and money never is one.
  amount: z.string(),
  orderId: z.string().min(1).max(100).refine(noNul),
  description: z.string().max(200).refine(noNul).optional().nullable(),
  redirectUrl: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .refine(noNul)
    .optional()
    .nullable(),
  // Unix ms within the JavaScript (and Postgres) date range.
  expiresAt: z.number().int().positive().max(MAX_DATE_MS).optional().nullable(),
  blockConfirmations: z.number().int().min(1).max(100).optional().nullable(),
  gasless: z.boolean().optional().nullable(),
  payerCoversFee: z.boolean().optional().nullable(),
  // A form field: a price that is not a positive decimal of at most 18 fraction digits is
  // `Invalid form data`, reported before the address checks.
  customPriceUsd: z
    .string()
    .refine((v) => parseCustomPriceUsd(v) !== null)
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

/**
 * What the body is checked against beyond its own text: the network must be one this service runs
 * (a factory deployed), the amount must fit the decimals of a registry token, and `expiresAt` must
 * lie in the future. All are body errors, so they are reported before the API key is looked at
 * (spec order).
 */
export type ValidationContext = { chains: readonly ActiveChain[]; now: number };

const isHexAddress = (v: string) => isAddress(v, { strict: false });
const fractionDigits = (v: string) => (v.includes(".") ? v.length - v.indexOf(".") - 1 : 0);

/** The spec's message for an amount that is not a positive decimal (or does not fit uint256 in the token's units). */
export const AMOUNT_NOT_POSITIVE = "Amount must be a positive number";

/**
 * Beyond the spec's list (it names no message for this case): a positive amount with more fraction digits than the
 * token has, trailing zeros included (`1.0000000` for a 6-decimal token). Never rounded.
 * @example tooManyDecimals(6) // "Amount must have at most 6 decimal places"
 */
export const tooManyDecimals = (decimals: number) => `Amount must have at most ${decimals} decimal place${decimals === 1 ? "" : "s"}`;

/**
 * The amount in the token's smallest units. Throws Invalid: tooManyDecimals for a positive plain decimal that only has
 * too many fraction digits for the token, the spec's AMOUNT_NOT_POSITIVE for anything else.
 * @example amountUnitsOf("12.5", 6) // 12500000n
 */
export function amountUnitsOf(amount: string, decimals: number): bigint {
  const units = parsePositiveAmount(amount, decimals, { strict: true });
  if (units !== null) return units;
  const digits = fractionDigits(amount);
  if (digits > decimals && digits <= 77 && parsePositiveAmount(amount, digits, { strict: true }) !== null)
    throw new Invalid(tooManyDecimals(decimals));
  throw new Invalid(AMOUNT_NOT_POSITIVE);
}

/** The spec's checks in the spec's order; the first failing one is thrown as `Invalid`. */
export function validateCreatePayment(raw: unknown, ctx: ValidationContext): CreatePaymentInput {
  const parsed = createPaymentBody.safeParse(raw);
  if (!parsed.success) throw new Invalid("Invalid form data");
  const b = parsed.data;
  if (b.expiresAt != null && b.expiresAt <= ctx.now) throw new Invalid("Invalid form data");
  // The zero address receives nothing: the factory refuses it as a payout, so a payer's funds would be stranded.
  if (!isHexAddress(b.merchant) || b.merchant.toLowerCase() === zeroAddress) throw new Invalid("Invalid Merchant address format");
  if (!isHexAddress(b.token)) throw new Invalid("Invalid Token address format");
  const chainId = /^\d+$/.test(b.chainId) ? Number(b.chainId) : NaN;
  const running = ctx.chains.find((c) => c.chainId === chainId);
  if (!running?.factory) throw new Invalid("Invalid network selected");
  const amount = b.amount;
  // A registry token's decimals are known now; a custom token's are read from its contract at
  // creation (create.ts parses again then), so until then the amount is read at its own precision.
  // Either way no amount above uint256 smallest units gets through.
  const decimals = findToken(running, b.token)?.decimals ?? Math.min(fractionDigits(amount), 77);
  amountUnitsOf(amount, decimals);
  return {
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
  };
}
