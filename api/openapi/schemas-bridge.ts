import { z } from "zod";
import { BRIDGE_ORDER_STATUSES } from "../../modules/bridge/index.js";
import { PROVIDER_ORDER_STATUSES } from "../../modules/bridge/index.js";
import { address, decimal, txHash, unixMs, units, uuid } from "./schemas-common.js";

// Hand-written zod schemas of the cross-chain answers (modules/bridge/orders.ts quoteView, orderView, refs.ts).

const orderId = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .meta({ description: "The bridge's order id (lowercase)" });
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

const side = z.object({ address: z.string(), symbol: z.string(), decimals: z.number().int(), amount: decimal, units });

export const BridgeQuote = z
  .object({
    paymentId: uuid,
    orderId: orderId.nullable().meta({ description: "The order `tx` creates; null without `payer` (an estimation)" }),
    srcChainId: z.number().int(),
    srcToken: side
      .extend({ operatingExpenseUnits: units.nullable() })
      .meta({ description: "What the payer gives (approve `units` for `tx.allowanceTarget ?? tx.to`), operating expenses included" }),
    dstChainId: z.number().int(),
    dstToken: side.meta({ description: "What the payment's recipient gets: exactly what the payment still needs" }),
    refund: side.meta({
      description:
        "What the payer gets back if the order is cancelled (DLN's srcChainTokenOut): the input, or for a pre-swapped input the reserve asset (usually USDC) it becomes; `fixFee` is refunded too",
    }),
    preSwap: z.boolean().meta({ description: "The input is swapped to `refund`'s token before the order is created" }),
    fixFee: units.meta({ description: "Flat protocol fee in the source chain's native coin (wei), part of `tx.value`" }),
    estimatedFulfillmentSeconds: z.number().nullable(),
    tx: z
      .discriminatedUnion("kind", [
        z.object({
          kind: z.literal("evm"),
          to: z.string(),
          data: hex,
          value: units,
          allowanceTarget: z.string().nullable(),
          allowanceValue: units.nullable(),
        }),
        z.object({
          kind: z.literal("solana"),
          data: hex.meta({
            description: "0x-hex of an unsigned VersionedTransaction with a fresh blockhash: the wallet signs and sends it",
          }),
        }),
      ])
      .nullable()
      .meta({ description: "The transaction the payer sends on the source chain; null without `payer`" }),
    expiresAt: unixMs.meta({ description: "The payment's expiry; moves 15 minutes later when the order is reported" }),
    quoteAgeMs: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: "How old the quote is (ms): the same question within 15 s is answered from the service's cache" }),
  })
  .meta({ description: "A cross-chain quote for what the payment still needs (docs/bridge.md)" });

export const BridgeOrder = z.object({
  orderId,
  status: z.enum(BRIDGE_ORDER_STATUSES),
  providerStatus: z.enum(PROVIDER_ORDER_STATUSES).nullable(),
  srcChainId: z.number().int(),
  srcToken: z.string().meta({ description: "An EVM address, or a Solana mint (base58)" }),
  srcUnits: units,
  payer: z.string().meta({ description: "An EVM address, or a Solana key (base58)" }),
  dstChainId: z.number().int(),
  dstToken: address,
  takeUnits: units,
  createTxHash: z.string().nullable().meta({ description: "The payer's transaction: an EVM hash, or a Solana signature (base58)" }),
  cancelTxHash: txHash.nullable(),
  reportedAt: unixMs.nullable(),
  refund: z
    .object({
      token: z.string(),
      symbol: z.string(),
      decimals: z.number().int(),
      units,
      amount: decimal,
      feeUnits: units.meta({ description: "The creation fee refunded too, in the source chain's native coin" }),
      to: z.string().nullable().meta({ description: "The cancel's beneficiary (the payer), once a cancel was sent" }),
    })
    .nullable()
    .meta({ description: "What a cancel returns on the source, recorded from the quote" }),
});

export const BridgeOrders = z
  .object({ paymentId: uuid, expiresAt: unixMs, orders: z.array(BridgeOrder) })
  .meta({ description: "The payment's cross-chain orders, newest first, and its expiry" });

export const BridgeRef = z
  .object({
    orderId,
    srcChainId: z.number().int(),
    srcToken: z.string().meta({ description: "An EVM address, or a Solana mint (base58)" }),
    status: z.enum(BRIDGE_ORDER_STATUSES),
    refund: z
      .object({ token: z.string(), symbol: z.string(), amount: decimal, to: z.string().nullable() })
      .optional()
      .meta({ description: "Once the order is being cancelled: what the payer gets back on the source (may be another token than sent)" }),
  })
  .nullable()
  .meta({ description: "Extension (docs/bridge.md): the cross-chain order the payer placed (the latest), or null" });

export const BridgeHoldings = z
  .object({
    native: z.object({ symbol: z.literal("SOL"), decimals: z.number().int(), units }),
    tokens: z.array(z.object({ mint: z.string(), symbol: z.string(), decimals: z.number().int(), units })),
  })
  .meta({ description: "A Solana payer's balances of the tokens offered (and SOL for fees), in smallest units" });
