import { randomUUID } from "node:crypto";
import { getAddress, zeroAddress, type Address } from "viem";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { findToken, type ActiveToken } from "../../chains/runtime.js";
import { paymentSalt, computeWalletAddress } from "../../chains/deposit-address.js";
import { parsePositiveAmount } from "../../core/money.js";
import { readContractMetadata } from "../pricing/token-metadata.js";
import { quotePayment, PriceUnavailableError } from "./quote.js";
import type { CreatePaymentInput } from "./validate-create.js";

/** Spec: a payment link expires after 24 hours when `expiresAt` is omitted. */
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;
const TERMINAL_ORDER_RE = /^POS-([A-Za-z0-9]+)-([^-]+)-(\d+)$/;

export type CreateResult =
  | { ok: true; paymentId: string; url: string }
  | { ok: false; status: 400 | 503 | 500; error: string };

/** Chains whose custom ERC-20 tokens are accepted (spec: 1, 137, 56, 8453 and the service chains). */
const CUSTOM_TOKEN_CHAINS = new Set([1, 137, 56, 8453, 777178, 777177]);

async function resolveToken(deps: AppDeps, chainId: number, address: Address): Promise<ActiveToken | null> {
  const chain = deps.chains.find((c) => c.chainId === chainId);
  if (!chain) return null;
  const known = findToken(chain, address);
  if (known) return known;
  if (address.toLowerCase() === zeroAddress || !CUSTOM_TOKEN_CHAINS.has(chainId)) return null;
  const meta = await readContractMetadata(deps.clients.get(chainId)!, address).catch(() => null);
  if (!meta?.symbol) return null;
  return { symbol: meta.symbol, decimals: meta.decimals, kind: "token", oracleSymbol: meta.symbol.toUpperCase(), address: getAddress(address) };
}

export async function createPayment(deps: AppDeps, merchant: Merchant, input: CreatePaymentInput): Promise<CreateResult> {
  const chain = deps.chains.find((c) => c.chainId === input.chainId);
  if (!chain || !chain.factory) return { ok: false, status: 400, error: "Invalid network selected" };
  const token = await resolveToken(deps, input.chainId, input.token);
  if (!token) return { ok: false, status: 400, error: "Invalid Token address format" };
  const amountUnits = parsePositiveAmount(input.amount, token.decimals);
  if (amountUnits === null) return { ok: false, status: 400, error: "Amount must be a positive number" };
  const now = deps.now();
  if (input.expiresAt !== undefined && input.expiresAt <= now) return { ok: false, status: 400, error: "Invalid form data" };

  let quote;
  try {
    quote = await quotePayment(deps, { chain, token, amountUnits, merchant, gasless: input.gasless, payerCoversFee: input.payerCoversFee, customPriceUsd: input.customPriceUsd });
  } catch (e) {
    if (e instanceof PriceUnavailableError) return { ok: false, status: 503, error: "Oracle price unavailable" };
    throw e;
  }

  const id = randomUUID();
  const salt = paymentSalt(id);
  const merchantAddress = getAddress(input.merchant);
  const recipient = computeWalletAddress({ factory: chain.factory, implementation: chain.implementation, salt, payout: merchantAddress });

  let terminalId: string | null = null;
  const m = TERMINAL_ORDER_RE.exec(input.orderId);
  if (m) {
    const { rows } = await deps.db.pool.query(`SELECT id FROM terminals WHERE merchant_id = $1 AND code = $2 AND deleted_at IS NULL`, [merchant.id, m[1]]);
    terminalId = rows[0]?.id ?? null;
  }

  await deps.db.pool.query(
    `INSERT INTO payments (id, merchant_id, order_id, description, status, chain_id, token_address, token_symbol, token_decimals,
       amount_units, due_units, merchant_address, recipient_address, salt, redirect_url, block_confirmations, gasless, payer_covers_fee,
       custom_price_usd, price_usd, price_source, platform_fee_bps, promo_applied, platform_fee_units, gas_fee_units, processing_fee_units,
       gas_tank_fee_micros, terminal_id, expires_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,'pending',$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$29)`,
    [
      id, merchant.id, input.orderId, input.description ?? null, input.chainId, token.address.toLowerCase() === zeroAddress ? zeroAddress : token.address,
      token.symbol, token.decimals, amountUnits.toString(), quote.dueUnits.toString(), merchantAddress, recipient, salt,
      input.redirectUrl ?? null, input.blockConfirmations, quote.gasless, input.payerCoversFee, input.customPriceUsd ?? null,
      quote.priceUsd, quote.priceSource, quote.platformFeeBps, quote.promoApplied, quote.platformFeeUnits.toString(),
      quote.gasFeeUnits.toString(), quote.processingFeeUnits.toString(), quote.gasTankFeeMicros.toString(), terminalId,
      new Date(input.expiresAt ?? now + DEFAULT_EXPIRY_MS), new Date(now),
    ],
  );
  return { ok: true, paymentId: id, url: `${deps.config.appUrl}/pay/${id}` };
}
