import { randomBytes, randomUUID } from "node:crypto";
import { zeroAddress } from "viem";
import type { NewPaymentRow, QuoteFees } from "../../modules/payments/index.js";

const fees = (promo: boolean): QuoteFees => ({
  promoApplied: promo,
  platformFeeUnits: promo ? 0n : 1_000n,
  agentFeeBps: 0,
  agentFeeUnits: 0n,
  gasFeeUnits: 10n,
  processingFeeUnits: 0n,
  gasTankFeeMicros: 0n,
  dueUnits: 100_000n,
});

/**
 * A new payment's row as create.ts computes it (insert-batch.ts, insert-one.ts), for `merchantId`, with a promotion
 * when `promo` (the merchant's plan has one), its own order id and recipient, and `over` on top.
 */
export function newPaymentRow(merchantId: string, over: Partial<NewPaymentRow> = {}, promo = true): NewPaymentRow {
  const id = randomUUID();
  return {
    id,
    merchantId,
    orderId: `order-${id}`,
    description: null,
    chainId: 777177,
    tokenAddress: zeroAddress,
    tokenSymbol: "ETH",
    tokenDecimals: 18,
    amountUnits: 100_000n,
    merchantAddress: `0x${randomBytes(20).toString("hex")}`,
    recipientAddress: `0x${randomBytes(20).toString("hex")}`,
    salt: `0x${randomBytes(32).toString("hex")}`,
    redirectUrl: null,
    blockConfirmations: 1,
    gasless: false,
    payerCoversFee: false,
    customPriceUsd: null,
    priceUsd: "2000",
    gasFeeUsd18: 0n,
    priceUpdatedAt: null,
    priceSource: "oracle",
    platformFeeBps: 100,
    agentId: null,
    agentShareBps: 0,
    terminalCode: null,
    expiresAt: new Date(Date.now() + 86_400_000),
    createdAt: new Date(),
    regular: fees(false),
    promo: promo ? fees(true) : null,
    // Distinct, so a statement that takes one for the other is caught.
    tolerance: { regular: 7n, promo: promo ? 5n : null },
    idempotency: null,
    ...over,
  };
}
