import { cachedGasPrice, cachedL1Cost } from "../pricing/index.js";
import type { AppDeps, Merchant, MerchantAgent } from "../../core/deps.js";
import type { ActiveChain, ActiveToken } from "../../chains/runtime.js";
import { Invalid, Unavailable } from "../../core/errors.js";
import { firstLine, logger } from "../../core/log.js";
import { MAX_UINT256 } from "../../core/money.js";
import { computeFees, feeModeOf, gasFeeUsd18 } from "./fees.js";
import { agentTermsOf } from "../agents/index.js";
import { hasPromotion } from "./promo.js";
import { PriceUnavailableError, resolveNativePriceUsd, resolveTokenPriceUsd, type PriceSource } from "../pricing/index.js";

const PRICE_UNAVAILABLE = "Oracle price unavailable";
const log = logger("payments");
const orUnavailable = <T>(p: Promise<T>): Promise<T> =>
  p.catch((e: unknown) => {
    throw e instanceof PriceUnavailableError ? new Unavailable(PRICE_UNAVAILABLE, 5) : e;
  });

/**
 * Gas charged per payment: a wallet deployed and swept alone (bench/sweep-gas.ts: 102k ERC-20, 101k native) plus
 * headroom, since a payment may settle alone; in a batch it costs less (58.8k per ERC-20 payment at 50).
 */
export const SWEEP_GAS_UNITS = { token: 135_000n, native: 140_000n };

/** The fees of a payment, with or without the promotion. */
export type QuoteFees = {
  promoApplied: boolean;
  platformFeeUnits: bigint;
  agentFeeBps: number;
  agentFeeUnits: bigint;
  gasFeeUnits: bigint;
  processingFeeUnits: bigint;
  gasTankFeeMicros: bigint;
  dueUnits: bigint;
};

export type Quote = {
  priceUsd: string;
  priceSource: PriceSource;
  gasless: boolean;
  platformFeeBps: number;
  /** The referring agent and its terms (docs/agents.md), or null. */
  agent: MerchantAgent | null;
  /** When the price was set (ResolvedPrice.updatedAt); null for a stablecoin or a custom price. */
  priceUpdatedAt: Date | null;
  /** The gas part of the fees in USD (18 decimals), kept for the Gas Tank's charge at completion. */
  gasFeeUsd18: bigint;
  /** Fees without the promotion. */
  regular: QuoteFees;
  /**
   * Fees with the promotion when the merchant's plan has one; whether a free slot is left is decided where the
   * payment is inserted, in the same statement (insert-batch.ts), so the quote needs no query of its own.
   */
  promo: QuoteFees | null;
};

/**
 * Price and fees of a new payment. No price from any source fails the creation the same way as an
 * unreachable source (Unavailable `Oracle price unavailable`): the spec names no other error for it.
 * Gasless needs a stablecoin or a price from the index or the oracle; otherwise it silently
 * becomes Gas Tank mode (spec). Chains without a native coin in the registry (the service chains)
 * carry no gas fee.
 */
export async function quotePayment(
  deps: AppDeps,
  q: {
    chain: ActiveChain;
    token: ActiveToken;
    amountUnits: bigint;
    merchant: Merchant;
    gasless: boolean;
    payerCoversFee: boolean;
    customPriceUsd?: string;
  },
): Promise<Quote> {
  const price = await orUnavailable(
    resolveTokenPriceUsd({
      deps,
      chainId: q.chain.chainId,
      token: { address: q.token.address, symbol: q.token.symbol, kind: q.token.kind, oracleSymbol: q.token.oracleSymbol },
      customPriceUsd: q.customPriceUsd,
      cached: true,
    }),
  );
  if (!price) throw new Unavailable(PRICE_UNAVAILABLE);
  const gasless = q.gasless && price.source !== "custom";

  const agent = q.merchant.agent !== undefined ? q.merchant.agent : await agentTermsOf(deps.db.pool, q.merchant.id);
  let gasUsd18 = 0n;
  const nativePrice = await orUnavailable(resolveNativePriceUsd(deps, q.chain.chainId, undefined, { cached: true }));
  if (nativePrice) {
    const client = deps.clients.get(q.chain.chainId)!;
    // No provider of the chain answers (an outage, every one rate-limited): no gas price, no quote. The spec's 503
    // "retry after a few seconds"; nothing is written, so the merchant's retry (same Idempotency-Key) creates it.
    const [gasPriceWei, l1] = await Promise.all([cachedGasPrice(client), cachedL1Cost(client, q.chain)]).catch((e: unknown) => {
      log.warn({ chainId: q.chain.chainId, error: firstLine(e) }, "no gas price from the chain's RPC providers: creation answers 503");
      throw new Unavailable(PRICE_UNAVAILABLE, 5);
    });
    // Its L1 data: a fee on an OP-stack chain, extra L2 gas on Arbitrum (modules/pricing/l1-fee.ts).
    const gasUnits = (q.token.kind === "native" ? SWEEP_GAS_UNITS.native : SWEEP_GAS_UNITS.token) + l1.gasUnits;
    gasUsd18 = gasFeeUsd18({ gasUnits, gasPriceWei, nativePriceUsd18: nativePrice.priceUsd18, l1FeeWei: l1.feeWei });
  }
  const feesOf = (promo: boolean): QuoteFees => {
    const fees = computeFees({
      amountUnits: q.amountUnits,
      decimals: q.token.decimals,
      priceUsd18: price.priceUsd18,
      platformFeeBps: q.merchant.platformFeeBps,
      agentFeeBps: agent?.markupBps ?? 0,
      promo,
      gasFeeUsd18: gasUsd18,
      mode: feeModeOf({ gasless, payerCoversFee: q.payerCoversFee }),
    });
    // The payer must be able to send what is due: amount plus fees above uint256 could never be paid.
    if (fees.dueUnits > MAX_UINT256) throw new Invalid("Amount must be a positive number");
    return {
      promoApplied: promo,
      platformFeeUnits: fees.platformFeeUnits,
      agentFeeBps: fees.agentFeeBps,
      agentFeeUnits: fees.agentFeeUnits,
      gasFeeUnits: fees.gasFeeUnits,
      processingFeeUnits: fees.processingFeeUnits,
      gasTankFeeMicros: fees.gasTankFeeMicros,
      dueUnits: fees.dueUnits,
    };
  };
  return {
    priceUsd: price.priceUsd,
    priceSource: price.source,
    gasless,
    platformFeeBps: q.merchant.platformFeeBps,
    gasFeeUsd18: gasUsd18,
    priceUpdatedAt: price.updatedAt ?? null,
    agent,
    regular: feesOf(false),
    promo: hasPromotion(q.merchant) ? feesOf(true) : null,
  };
}
