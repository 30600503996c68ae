import { randomUUID } from "node:crypto";
import { getAddress, zeroAddress, type Address } from "viem";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { acceptsCustomTokens } from "../../chains/registry.js";
import { findToken, type ActiveToken } from "../../chains/runtime.js";
import { paymentSalt, computeWalletAddress } from "../../chains/deposit-address.js";
import { Invalid } from "../../core/errors.js";
import { withTransaction } from "../../db/client.js";
import { registerAddress } from "../addresses/registry.js";
import { parsePositiveAmount } from "../../core/money.js";
import { authenticate, type Caller } from "../merchants/authenticate.js";
import { readContractMetadata } from "../pricing/token-metadata.js";
import { terminalIdForOrder } from "../terminals/terminals.js";
import { quotePayment } from "./quote.js";
import { validateCreatePayment, type CreatePaymentInput } from "./validate-create.js";

/** Spec: a payment link expires after 24 hours when `expiresAt` is omitted. */
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;

export type CreatedPayment = { paymentId: string; url: string };

/**
 * POST /payments and GraphQL `createPayment`: the body's checks, then the key (spec order), then
 * creation. Throws Invalid, Unauthorized or Unavailable (`Oracle price unavailable`); anything
 * else is an unexpected failure (`Failed to create payment`).
 */
export async function createPayment(deps: AppDeps, caller: Caller, body: unknown): Promise<CreatedPayment> {
  const input = validateCreatePayment(body, { chains: deps.chains, now: deps.now() });
  const merchant = await authenticate(deps, caller);
  return insertPayment(deps, merchant, input);
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

async function insertPayment(deps: AppDeps, merchant: Merchant, input: CreatePaymentInput): Promise<CreatedPayment> {
  // Validation has checked the network is running with a factory.
  const chain = deps.chains.find((c) => c.chainId === input.chainId)!;
  const token = await resolveToken(deps, input.chainId, input.token);
  if (!token) throw new Invalid("Invalid Token address format");
  const amountUnits = parsePositiveAmount(input.amount, token.decimals, { strict: true });
  if (amountUnits === null) throw new Invalid("Amount must be a positive number");
  const now = deps.now();

  const quote = await quotePayment(deps, {
    chain,
    token,
    amountUnits,
    merchant,
    gasless: input.gasless,
    payerCoversFee: input.payerCoversFee,
    customPriceUsd: input.customPriceUsd,
  });

  const id = randomUUID();
  const salt = paymentSalt(id);
  const merchantAddress = getAddress(input.merchant);
  const recipient = computeWalletAddress({ factory: chain.factory!, implementation: chain.implementation, salt, payout: merchantAddress });
  const terminalId = await terminalIdForOrder(deps.db, merchant.id, input.orderId);

  // The recipient is registered with the payment, in its transaction: the indexer watches it before anyone sees it.
  await withTransaction(deps.db, async (client) => {
    await client.query(
      `INSERT INTO payments (id, merchant_id, order_id, description, status, chain_id, token_address, token_symbol, token_decimals,
       amount_units, due_units, merchant_address, recipient_address, salt, redirect_url, block_confirmations, gasless, payer_covers_fee,
       custom_price_usd, price_usd, price_source, platform_fee_bps, promo_applied, platform_fee_units, gas_fee_units, processing_fee_units,
       gas_tank_fee_micros, terminal_id, expires_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,'pending',$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$29)`,
      [
        id,
        merchant.id,
        input.orderId,
        input.description ?? null,
        input.chainId,
        token.address.toLowerCase() === zeroAddress ? zeroAddress : token.address,
        token.symbol,
        token.decimals,
        amountUnits.toString(),
        quote.dueUnits.toString(),
        merchantAddress,
        recipient,
        salt,
        input.redirectUrl ?? null,
        input.blockConfirmations,
        quote.gasless,
        input.payerCoversFee,
        input.customPriceUsd ?? null,
        quote.priceUsd,
        quote.priceSource,
        quote.platformFeeBps,
        quote.promoApplied,
        quote.platformFeeUnits.toString(),
        quote.gasFeeUnits.toString(),
        quote.processingFeeUnits.toString(),
        quote.gasTankFeeMicros.toString(),
        terminalId,
        new Date(input.expiresAt ?? now + DEFAULT_EXPIRY_MS),
        new Date(now),
      ],
    );
    await registerAddress(client, { chainId: input.chainId, address: recipient, kind: "payment", ownerId: id, merchantId: merchant.id });
  });
  return { paymentId: id, url: `${deps.config.appUrl}/pay/${id}` };
}
