import { z } from "zod";
import { PAYMENT_STATUSES } from "../../modules/payments/index.js";
import { BridgeRef } from "./schemas-bridge.js";
import { address, decimal, txHash, unixMs, units, uuid } from "./schemas-common.js";

// Hand-written zod schemas of the payment responses (modules/payments/serialize.ts, verify.ts, withdraw.ts,
// recover.ts, public-view.ts; modules/gas-tank/view.ts; modules/pricing/lookups.ts). The request schemas (bodies
// and queries) are not here: the document takes them from the modules themselves (components.ts ROUTE_SCHEMAS).

export const PaymentStatus = z.enum(PAYMENT_STATUSES);

export const CreatePaymentResponse = z.object({
  url: z.string().meta({
    description: "The payment page `{app_url}/pay/<paymentId>`",
    examples: ["https://pay.example/pay/3d3f1c9a-8f4e-4a57-b9f1-0d6c4b1e2a10"],
  }),
  paymentId: uuid.meta({ description: "Extension: the new payment's id (the last segment of `url`)" }),
  expiresAt: unixMs.meta({
    description: "Extension: when the link expires, Unix ms (the request's `expiresAt`, else 24 hours after creation)",
  }),
  amountDue: decimal.meta({
    description: "Extension: what the payer is asked to send, in the token: `amount`, plus the fees in payer-covers-fee mode",
    examples: ["25"],
  }),
});

const recovery = z.object({
  recoveryId: uuid,
  status: z.enum(["requested", "signed", "sent", "mined", "recovered", "failed"]),
  transactionHash: txHash.nullable(),
  recoveredAmount: z.string().nullable(),
  recoveredUnits: z.string().nullable(),
  feeUnits: z
    .string()
    .nullable()
    .meta({ description: "The fee the sweep paid out of the funds (smallest units), once signed; docs/unexpected-funds.md" }),
  gasTankFee: z.string().nullable().meta({ description: "The fee debited from the Gas Tank instead (USDT), once signed" }),
  error: z.string().nullable(),
  requestedAt: unixMs,
});

export const UnexpectedFunds = z
  .object({
    token: address.meta({ description: "Token contract (checksummed); the zero address for the native coin" }),
    symbol: z.string().nullable(),
    decimals: z.number().int().nullable(),
    amount: z.string().nullable(),
    units,
    recoverable: z.boolean(),
    recovery: recovery.nullable(),
  })
  .meta({ description: "Extension (docs/unexpected-funds.md): funds on the payment's address that the payment will never move" });

export const Payment = z
  .object({
    paymentId: uuid,
    orderId: z.string().max(100),
    description: z.string().nullable(),
    status: PaymentStatus,
    createdAt: unixMs,
    completedAt: unixMs.nullable(),
    expiresAt: unixMs.nullable(),
    chainId: z.string().meta({ description: "Network id, a string in the list output", examples: ["137"] }),
    token: z.object({ address, symbol: z.string(), decimals: z.number().int() }),
    amount: decimal,
    receivedAmount: decimal,
    merchant: address,
    recipientAddress: address,
    transaction: z.object({ hash: txHash, blockNumber: z.number().int().nullable(), confirmations: z.number().int() }).nullable(),
    settlementTransactionHash: txHash.nullable().meta({ description: "Extension: the settlement sweep" }),
    fees: z.object({
      platformFee: decimal,
      gasFee: decimal,
      processingFee: decimal,
      totalFee: decimal.meta({ description: "Every fee the merchant is charged: platform, agent, gas and processing" }),
      feePercentage: z.number(),
      agentFee: decimal.meta({ description: "Extension: the referring agent's markup, 0 without an agent or under the promotion" }),
    }),
    gasless: z.boolean(),
    payerCoversFee: z.boolean(),
    blockConfirmations: z.number().int().meta({ description: "Extension: confirmations required" }),
    terminal: z.object({ terminalId: z.string(), code: z.string(), name: z.string() }).nullable(),
    priceSource: z.enum(["indexer", "trusted_oracle", "custom", "stablecoin"]).nullable(),
    unexpectedFunds: z.array(UnexpectedFunds),
    bridge: BridgeRef,
  })
  .meta({ description: "A payment record, list output" });

export const PaymentPage = z.object({
  data: z.array(Payment),
  nextCursor: z.string().nullable().meta({ description: "The `cursor` of the next page; null on the last" }),
  hasMore: z.boolean(),
});

export const PaymentItem = z.object({ data: Payment }).meta({ description: "Extension: one payment, as an item of the list" });

export const Verification = z.object({
  valid: z.literal(true),
  verified: z.boolean().meta({ description: "The hash is valid AND the payment is completed" }),
  payment: z.object({
    paymentId: uuid,
    orderId: z.string(),
    status: PaymentStatus,
    amount: decimal,
    receivedAmount: decimal,
    token: address,
    chainId: z.number().int(),
    merchant: address,
    transactionHash: txHash.nullable(),
    completedAt: unixMs.optional().meta({ description: "Only when completed" }),
  }),
});

export const Balance = z.object({
  balance: z.string().meta({ description: "Gas Tank balance in USDT, 6 decimals", examples: ["12.500000"] }),
  depositAddresses: z
    .array(z.object({ chainId: z.number().int(), address, tokens: z.array(z.object({ symbol: z.string(), address })) }))
    .meta({ description: "Extension: where to fund the Gas Tank, per chain" }),
});

export const PromoStatus = z.object({
  freeTransactions: z.object({ eligible: z.boolean(), used: z.number().int(), remaining: z.number().int() }),
});

export const Withdrawal = z.object({
  paymentId: uuid,
  status: z.literal("withdraw_request").meta({
    description: "The payment's status after the request; `withdrawing` once the settler has signed the sweep",
  }),
  receivedAmount: decimal,
});
export const Cancellation = z.object({ paymentId: uuid, status: z.literal("cancelled") });
export const FundRecovery = z.object({
  recoveryId: uuid,
  paymentId: uuid,
  token: address,
  status: z.string(),
  amount: z.string().nullable(),
  units,
  payout: address,
});
export const withResult = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), error: z.null(), data });

export const PublicPaymentView = z
  .object({
    paymentId: uuid,
    merchantName: z.string().meta({ description: "Who is paid: the merchant's business name (extension)" }),
    status: PaymentStatus,
    stage: z.enum(["awaiting_payment", "processing", "completed", "expired", "closed"]),
    chainId: z.number().int(),
    chainName: z.string(),
    token: z.object({ address, symbol: z.string(), decimals: z.number().int() }),
    amountDue: decimal,
    amount: decimal,
    receivedAmount: decimal,
    remainingAmount: decimal,
    confirmations: z
      .object({ count: z.number().int(), required: z.number().int() })
      .optional()
      .meta({ description: "Only while `waiting_for_confirmation`: the depth reached and the payment's `blockConfirmations`" }),
    recipientAddress: address,
    expiresAt: unixMs,
    serverTime: unixMs,
    description: z.string().nullable(),
    orderId: z.string(),
    paymentUri: z.string().meta({ description: "EIP-681 URI of what is still to pay" }),
    redirectUrl: z.string().nullable(),
  })
  .meta({ description: "What the payer page shows (modules/payments/public-view.ts)" });

// ---- public lookups (modules/pricing/lookups.ts) ----

export const TokenPrice = z.object({
  chainId: z.number().int(),
  address: address.meta({ description: "Lowercased" }),
  symbol: z.string().nullable(),
  priceUsd: z.string(),
  source: z.enum(["indexer", "trusted_oracle"]),
  timestamp: z.string().meta({ description: "ISO 8601", examples: ["2026-01-01T00:00:00.000Z"] }),
});
export const TokenMetadata = z.object({
  name: z.string().nullable(),
  symbol: z.string().nullable(),
  decimals: z.number().int(),
  logo: z.string().nullable(),
  hasIndexerPrice: z.boolean(),
  priceUsd: z.string().optional(),
  address,
  chainId: z.number().int(),
});
export const OraclePrice = z.object({
  symbol: z.string(),
  priceRaw: z.string().meta({ description: "Integer with 18 decimals of precision" }),
  priceUsd: z.string(),
  decimals: z.literal(18),
});
