import { randomUUID } from "node:crypto";
import { getAddress, zeroAddress, type Address } from "viem";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { acceptsCustomTokens } from "../../chains/registry.js";
import { findToken, type ActiveToken } from "../../chains/runtime.js";
import { paymentSalt, computeWalletAddress } from "../../chains/deposit-address.js";
import { Invalid } from "../../core/errors.js";
import { countPaymentCreated } from "../../core/metrics.js";
import { formatAmount } from "../../core/money.js";
import type { KeyUse } from "../idempotency/index.js";
import { authenticate, type Caller } from "../merchants/index.js";
import { toleranceTermsOf } from "../merchants/index.js";
import { readContractMetadata } from "../pricing/index.js";
import { terminalCodeOf } from "../terminals/index.js";
import { insertBatcher } from "./insert-batch.js";
import type { NewPaymentRow } from "./insert-one.js";
import { quotePayment, type QuoteFees } from "./quote.js";
import { underpaymentToleranceUnits } from "./tolerance.js";
import { amountUnitsOf, validateCreatePayment, type CreatePaymentInput } from "./validate-create.js";

/** Spec: a payment link expires after 24 hours when `expiresAt` is omitted. */
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;

/**
 * What a creation answers: the payer page's `url` (the spec's whole answer) and, as extensions, the payment's id, when
 * it expires (Unix ms) and what the payer is asked to send (`amountDue`: the amount, plus the fees in payer-covers-fee
 * mode; a decimal string in the token).
 */
export type CreatedPayment = { paymentId: string; url: string; expiresAt: number; amountDue: string };

/**
 * POST /payments and GraphQL `createPayment`: the body's checks, then the key (spec order), then
 * creation. Throws Invalid, Unauthorized or Unavailable (`Oracle price unavailable`); anything
 * else is an unexpected failure (`Failed to create payment`).
 */
export async function createPayment(
  deps: AppDeps,
  caller: Caller,
  body: unknown,
  opts: { idempotency?: KeyUse } = {},
): Promise<CreatedPayment> {
  const input = validateCreatePayment(body, { chains: deps.chains, now: deps.now() });
  const merchant = await authenticate(deps, caller);
  return insertPayment(deps, merchant, input, opts.idempotency);
}

/** A registry token of the chain, or a custom ERC-20 read from its contract where the chain accepts those. */
async function resolveToken(deps: AppDeps, chainId: number, address: Address): Promise<ActiveToken | null> {
  const chain = deps.chains.find((c) => c.chainId === chainId);
  if (!chain) return null;
  const known = findToken(chain, address);
  if (known) return known;
  if (address.toLowerCase() === zeroAddress || !acceptsCustomTokens(chainId)) return null;
  const meta = await readContractMetadata(deps.clients.get(chainId)!, address).catch(() => null);
  if (!meta?.symbol) return null;
  // The oracle prices by symbol, which any contract can claim: only an operator-trusted custom token may use it.
  const trusted = deps.config.ORACLE_TRUSTED_TOKENS.includes(`${chainId}:${address.toLowerCase()}`);
  return {
    symbol: meta.symbol,
    decimals: meta.decimals,
    kind: "token",
    oracleSymbol: trusted ? meta.symbol.toUpperCase() : "",
    address: getAddress(address),
  };
}

/**
 * `idempotency`: the Idempotency-Key use the request runs under (docs/payments.md "Idempotency keys"), recorded on the payment by
 * the INSERT itself; when that use has a payment already (a first attempt committed it, then died or failed before its
 * response was stored), that payment is the answer and nothing is created.
 */
async function insertPayment(deps: AppDeps, merchant: Merchant, input: CreatePaymentInput, idempotency?: KeyUse): Promise<CreatedPayment> {
  // Validation has checked the network is running with a factory.
  const chain = deps.chains.find((c) => c.chainId === input.chainId)!;
  const token = await resolveToken(deps, input.chainId, input.token);
  if (!token) throw new Invalid("Invalid Token address format");
  const amountUnits = amountUnitsOf(input.amount, token.decimals);
  const now = deps.now();

  // The merchant's underpayment tolerance is read beside the quote (no added latency).
  const [quote, tolerance] = await Promise.all([
    quotePayment(deps, {
      chain,
      token,
      amountUnits,
      merchant,
      gasless: input.gasless,
      payerCoversFee: input.payerCoversFee,
      customPriceUsd: input.customPriceUsd,
    }),
    toleranceTermsOf(deps.db.pool, merchant.id, input.chainId, token.address),
  ]);
  // Fixed now, on the payment (tolerance.ts): what the payer is shown is what is accepted. The fees a sweep takes from
  // the wallet (gasless, payer-covers-fee) must still arrive in full.
  const walletFees = quote.gasless || input.payerCoversFee;
  const toleranceOf = (f: QuoteFees) =>
    underpaymentToleranceUnits({
      dueUnits: f.dueUnits,
      bps: tolerance.bps,
      absoluteUnits: tolerance.absoluteUnits,
      walletFeeUnits: walletFees ? f.platformFeeUnits + f.agentFeeUnits + f.gasFeeUnits + f.processingFeeUnits : 0n,
    });

  const id = randomUUID();
  const salt = paymentSalt(id);
  const merchantAddress = getAddress(input.merchant);
  const recipient = computeWalletAddress({ factory: chain.factory!, implementation: chain.implementation, salt, payout: merchantAddress });
  const row: NewPaymentRow = {
    id,
    merchantId: merchant.id,
    orderId: input.orderId,
    description: input.description ?? null,
    chainId: input.chainId,
    tokenAddress: token.address.toLowerCase() === zeroAddress ? zeroAddress : token.address,
    tokenSymbol: token.symbol,
    tokenDecimals: token.decimals,
    amountUnits,
    merchantAddress,
    recipientAddress: recipient,
    salt,
    redirectUrl: input.redirectUrl ?? null,
    blockConfirmations: input.blockConfirmations,
    gasless: quote.gasless,
    payerCoversFee: input.payerCoversFee,
    customPriceUsd: input.customPriceUsd ?? null,
    priceUsd: quote.priceUsd,
    priceSource: quote.priceSource,
    platformFeeBps: quote.platformFeeBps,
    agentId: quote.agent?.id ?? null,
    agentShareBps: quote.agent?.platformShareBps ?? 0,
    terminalCode: terminalCodeOf(input.orderId),
    expiresAt: new Date(input.expiresAt ?? now + DEFAULT_EXPIRY_MS),
    createdAt: new Date(now),
    gasFeeUsd18: quote.gasFeeUsd18,
    priceUpdatedAt: quote.priceUpdatedAt,
    regular: quote.regular,
    promo: quote.promo,
    tolerance: { regular: toleranceOf(quote.regular), promo: quote.promo ? toleranceOf(quote.promo) : null },
    idempotency: idempotency ?? null,
  };
  // With the payments created alongside it, in one statement (insert-batch.ts). Under a key, the key's use is recorded
  // by the INSERT itself; when that use has a payment already, nothing is written (the new address is never watched)
  // and that payment is the answer.
  if (!(await insertBatcher(deps.db)(row))) {
    const first = idempotency ? await paymentOfKeyUse(deps, merchant.id, idempotency) : null;
    if (!first) throw new Error("payment not written, and none holds its idempotency key");
    return createdAsStored(deps, first);
  }
  countPaymentCreated(input.chainId);
  // Whether the promotion applied was decided by the INSERT (insert-one.ts): only when that changes what is due is it read back.
  if (row.promo && row.promo.dueUnits !== row.regular.dueUnits) return createdAsStored(deps, id);
  return {
    paymentId: id,
    url: `${deps.config.appUrl}/pay/${id}`,
    expiresAt: row.expiresAt.getTime(),
    amountDue: formatAmount(row.regular.dueUnits, token.decimals),
  };
}

/** CreatedPayment of a stored payment. */
async function createdAsStored(deps: AppDeps, id: string): Promise<CreatedPayment> {
  const { rows } = await deps.db.pool.query<{ due_units: string; token_decimals: number; expires_at: Date }>(
    `SELECT due_units, token_decimals, expires_at FROM payments WHERE id = $1`,
    [id],
  );
  const p = rows[0];
  if (!p) throw new Error(`payment ${id} not found after its creation`);
  return {
    paymentId: id,
    url: `${deps.config.appUrl}/pay/${id}`,
    expiresAt: p.expires_at.getTime(),
    amountDue: formatAmount(BigInt(p.due_units), p.token_decimals),
  };
}

/** The payment created under a key use (the unique index of migration 0021), or null. */
async function paymentOfKeyUse(deps: AppDeps, merchantId: string, use: KeyUse): Promise<string | null> {
  const { rows } = await deps.db.pool.query<{ id: string }>(
    `SELECT id FROM payments
      WHERE merchant_id = $1 AND idempotency_api_key_id = $2 AND idempotency_key = $3 AND idempotency_key_id = $4`,
    [merchantId, use.apiKeyId, use.key, use.useId],
  );
  return rows[0]?.id ?? null;
}
