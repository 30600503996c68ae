import { randomUUID } from "node:crypto";
import { getAddress, zeroAddress, type Address } from "viem";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { acceptsCustomTokens } from "../../chains/registry.js";
import { findToken, type ActiveToken } from "../../chains/runtime.js";
import { paymentSalt, computeWalletAddress } from "../../chains/deposit-address.js";
import { Invalid } from "../../core/errors.js";
import { prepared } from "../../db/client.js";
import { countPaymentCreated } from "../../core/metrics.js";
import { parsePositiveAmount } from "../../core/money.js";
import type { KeyUse } from "../idempotency/key.js";
import { authenticate, type Caller } from "../merchants/authenticate.js";
import { toleranceTermsOf } from "../merchants/underpayment-tolerance.js";
import { readContractMetadata } from "../pricing/token-metadata.js";
import { terminalCodeOf } from "../terminals/terminals.js";
import { PROMO_SLOT_LEFT_SQL } from "./promo.js";
import { quotePayment, type QuoteFees } from "./quote.js";
import { underpaymentToleranceUnits } from "./tolerance.js";
import { validateCreatePayment, type CreatePaymentInput } from "./validate-create.js";

/** Spec: a payment link expires after 24 hours when `expiresAt` is omitted. */
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;

export type CreatedPayment = { paymentId: string; url: string };

/** The unique index of a key use's payment (migration 0021): one payment per use of an Idempotency-Key. */
const ON_KEY_USE = `ON CONFLICT (merchant_id, idempotency_api_key_id, idempotency_key, idempotency_key_id)
         WHERE idempotency_key IS NOT NULL DO NOTHING`;

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
 * `idempotency`: the Idempotency-Key use the request runs under (README "Idempotency keys"), recorded on the payment by
 * the INSERT itself; when that use has a payment already (a first attempt committed it, then died or failed before its
 * response was stored), that payment is the answer and nothing is created.
 */
async function insertPayment(deps: AppDeps, merchant: Merchant, input: CreatePaymentInput, idempotency?: KeyUse): Promise<CreatedPayment> {
  // Validation has checked the network is running with a factory.
  const chain = deps.chains.find((c) => c.chainId === input.chainId)!;
  const token = await resolveToken(deps, input.chainId, input.token);
  if (!token) throw new Invalid("Invalid Token address format");
  const amountUnits = parsePositiveAmount(input.amount, token.decimals, { strict: true });
  if (amountUnits === null) throw new Invalid("Amount must be a positive number");
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
  const { regular, promo } = quote;
  // One statement, so one round trip and atomic: whether the promotion applies (a free slot left), the POS
  // terminal of the orderId, the payment, and its recipient registered for the indexer (watched_addresses'
  // trigger notifies it at commit), before anyone sees the address.
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const byPromo = (type: string, pick: (f: QuoteFees) => unknown) =>
    promo ? `CASE WHEN promo.on THEN ${$(pick(promo))}::${type} ELSE ${$(pick(regular))}::${type} END` : `${$(pick(regular))}::${type}`;
  const merchantId = $(merchant.id);
  const code = terminalCodeOf(input.orderId);
  const columns: Record<string, string> = {
    id: $(id),
    merchant_id: merchantId,
    order_id: $(input.orderId),
    description: $(input.description ?? null),
    status: "'pending'",
    chain_id: $(input.chainId),
    token_address: $(token.address.toLowerCase() === zeroAddress ? zeroAddress : token.address),
    token_symbol: $(token.symbol),
    token_decimals: $(token.decimals),
    amount_units: $(amountUnits.toString()),
    due_units: byPromo("numeric", (f) => f.dueUnits.toString()),
    underpayment_tolerance_units: byPromo("numeric", (f) => toleranceOf(f).toString()),
    merchant_address: $(merchantAddress),
    recipient_address: $(recipient),
    salt: $(salt),
    redirect_url: $(input.redirectUrl ?? null),
    block_confirmations: $(input.blockConfirmations),
    gasless: $(quote.gasless),
    payer_covers_fee: $(input.payerCoversFee),
    custom_price_usd: $(input.customPriceUsd ?? null),
    price_usd: $(quote.priceUsd),
    price_source: $(quote.priceSource),
    platform_fee_bps: $(quote.platformFeeBps),
    promo_applied: promo ? "promo.on" : "false",
    platform_fee_units: byPromo("numeric", (f) => f.platformFeeUnits.toString()),
    gas_fee_units: byPromo("numeric", (f) => f.gasFeeUnits.toString()),
    processing_fee_units: byPromo("numeric", (f) => f.processingFeeUnits.toString()),
    gas_tank_fee_micros: byPromo("numeric", (f) => f.gasTankFeeMicros.toString()),
    agent_id: $(quote.agent?.id ?? null),
    agent_fee_bps: byPromo("int", (f) => f.agentFeeBps),
    agent_fee_units: byPromo("numeric", (f) => f.agentFeeUnits.toString()),
    agent_share_bps: $(quote.agent?.platformShareBps ?? 0),
    terminal_id: code
      ? `(SELECT id FROM terminals WHERE merchant_id = ${merchantId}::uuid AND code = ${$(code)} AND deleted_at IS NULL LIMIT 1)`
      : "NULL",
    expires_at: $(new Date(input.expiresAt ?? now + DEFAULT_EXPIRY_MS)),
    created_at: $(new Date(now)),
  };
  columns.updated_at = columns.created_at!;
  if (idempotency) {
    columns.idempotency_api_key_id = $(idempotency.apiKeyId);
    columns.idempotency_key = $(idempotency.key);
    columns.idempotency_key_id = $(idempotency.useId);
  }
  // Prepared: the text varies only with whether the merchant has a promotion, the orderId a terminal code and the
  // request an Idempotency-Key.
  const written = await deps.db.pool.query(
    prepared(
      `WITH promo AS MATERIALIZED (SELECT ${promo ? PROMO_SLOT_LEFT_SQL(`${merchantId}::uuid`) : "false"} AS on),
     payment AS (
       INSERT INTO payments (${Object.keys(columns).join(", ")})
       SELECT ${Object.values(columns).join(", ")} FROM promo
       ${idempotency ? ON_KEY_USE : ""}
       RETURNING id, chain_id, recipient_address, merchant_id)
     INSERT INTO watched_addresses (chain_id, address, kind, owner_id, merchant_id)
     SELECT chain_id, lower(recipient_address), 'payment', id::text, merchant_id FROM payment
     ON CONFLICT DO NOTHING`,
      params,
    ),
  );
  // Nothing written (the new address is never watched yet): the key's use has its payment already.
  if (idempotency && !written.rowCount) {
    const first = await paymentOfKeyUse(deps, merchant.id, idempotency);
    if (!first) throw new Error("payment not written, and none holds its idempotency key");
    return { paymentId: first, url: `${deps.config.appUrl}/pay/${first}` };
  }
  countPaymentCreated(input.chainId);
  return { paymentId: id, url: `${deps.config.appUrl}/pay/${id}` };
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
