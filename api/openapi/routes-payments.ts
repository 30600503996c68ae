import { zeroAddress } from "viem";
import { ORDER_IN_FLIGHT } from "../../modules/bridge/index.js";
import { BRIDGE_OFF, bridgeHoldingsQuery, bridgeQuoteQuery, ORDER_OF_ANOTHER, SOLANA_OFF } from "../../modules/bridge/index.js";
import { cannotCancelIn, HAS_FUNDS, HAS_UNCOUNTED_FUNDS } from "../../modules/payments/index.js";
import { listPaymentsQuery, tooManyDecimals } from "../../modules/payments/index.js";
import { PAYMENT_STATUSES } from "../../modules/payments/index.js";
import { SANCTIONS_HELD_MESSAGE } from "../../modules/payments/index.js";
import { verifyQuery } from "../../modules/payments/index.js";
import { oraclePriceQuery, tokenMetadataQuery, tokenPriceQuery } from "../../modules/pricing/index.js";
import { BAD_JSON, fail, NOT_JSON, TOO_LARGE, TOO_MANY, UNAUTHORIZED, type Operation } from "./operation.js";

// Payments, the Gas Tank balance, the promotion and the public lookups (api/routes/payments.ts, tokens.ts,
// web/pay/page.ts), with the spec's messages (spec "Endpoints").

const paymentId = { paymentId: { description: "The payment id", example: "3d3f1c9a-8f4e-4a57-b9f1-0d6c4b1e2a10" } };

const BRIDGE_DOWN = [fail(503, BRIDGE_OFF), fail(503, "No bridge route available"), fail(503, "Bridge unavailable")];

/** Cross-chain payment from the payer page (api/routes/bridge.ts, docs/bridge.md): public, the payment id is the capability. */
const BRIDGE_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/payments/{paymentId}/bridge/quote",
    tag: "Extensions",
    summary: "Cross-chain quote for the payer",
    description:
      "What paying the rest of the payment from another network and token costs (exact output: the recipient gets what the payment still needs). With `payer`, also the order transaction to send, and the order is recorded as quoted.",
    auth: "public",
    extension: true,
    pathParams: paymentId,
    query: bridgeQuoteQuery,
    responses: [{ status: 200, description: "The quote", schema: "BridgeQuote" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "srcChainId and srcToken are required"),
        fail(400, "srcChainId must be a number"),
        fail(400, "Invalid source token address"),
        fail(400, "Invalid payer address"),
        fail(400, "Source and destination networks must differ"),
        fail(400, "Token not supported by the bridge"),
        fail(400, "Payment token not supported by the bridge"),
        fail(400, "Amount too small to bridge"),
        fail(404, "Payment not found"),
        fail(409, "Payment is not awaiting payment"),
        fail(409, "Payment has expired"),
        fail(409, ORDER_IN_FLIGHT),
        fail(409, ORDER_OF_ANOTHER),
        TOO_MANY,
        ...BRIDGE_DOWN,
        fail(503, SOLANA_OFF),
      ],
    },
    rateLimit:
      "30 requests a minute per address (with POST /payments/{paymentId}/bridge/orders); quotes the bridge provider is asked for: 10 a minute per payment (429) and the service's provider budget (503 `Bridge unavailable` with Retry-After)",
  },
  {
    method: "post",
    path: "/payments/{paymentId}/bridge/orders",
    tag: "Extensions",
    summary: "Report the payer's cross-chain transaction",
    description:
      "The orders the transaction created (quoted for this payment) become `created` and the payment's `expiresAt` moves 15 minutes later, once per order. 409 while the bridge has not indexed the transaction: retry.",
    auth: "public",
    extension: true,
    pathParams: paymentId,
    body: { schema: "BridgeOrderRequest", required: true, example: { txHash: `0x${"5c".repeat(32)}` } },
    responses: [{ status: 200, description: "The payment's orders", schema: "BridgeOrders" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "txHash is required"),
        fail(400, "Invalid transaction hash"),
        BAD_JSON,
        fail(400, "Transaction created no bridge order for this payment"),
        fail(404, "Payment not found"),
        fail(409, "No bridge order found in this transaction yet"),
        TOO_LARGE,
        NOT_JSON,
        TOO_MANY,
        ...BRIDGE_DOWN,
      ],
    },
    rateLimit:
      "30 requests a minute per address (with GET /payments/{paymentId}/bridge/quote); the service's provider budget (503 `Bridge unavailable` with Retry-After)",
  },
  {
    method: "get",
    path: "/payments/{paymentId}/bridge/holdings",
    tag: "Extensions",
    summary: "A Solana payer's balances",
    description:
      "What a Solana wallet holds of the tokens the payer page offers, and SOL for fees, read by the service (a Wallet Standard wallet has no read API, and the service's Solana RPC stays private). Open payments only.",
    auth: "public",
    extension: true,
    pathParams: paymentId,
    query: bridgeHoldingsQuery,
    responses: [{ status: 200, description: "The balances", schema: "BridgeHoldings" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "srcChainId must be 7565164"),
        fail(400, "owner is required"),
        fail(400, "Invalid owner address"),
        fail(404, "Payment not found"),
        fail(409, "Payment is not awaiting payment"),
        TOO_MANY,
        fail(503, SOLANA_OFF),
      ],
    },
    rateLimit: "30 requests a minute per address (with the other bridge routes)",
  },
  {
    method: "get",
    path: "/payments/{paymentId}/bridge/orders",
    tag: "Extensions",
    summary: "The payment's cross-chain orders",
    description: "What the payer page polls to follow an order: created, fulfilled, claimed_unlock; or cancel_sent, cancelled (refunded).",
    auth: "public",
    extension: true,
    pathParams: paymentId,
    responses: [{ status: 200, description: "The payment's orders", schema: "BridgeOrders" }],
    errors: { shape: "plain", list: [fail(404, "Payment not found")] },
  },
];

export const PAYMENT_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/payments",
    tag: "Payments",
    summary: "Create a payment link",
    description:
      "Returns the URL of the payment page and, as extensions, the payment's `paymentId`, `expiresAt` and `amountDue`. Checks run in the spec's order: the body's shape (`Invalid form data`), the addresses, the network, the amount, then the API key. A positive amount with more fraction digits than the token has is refused with its own message (an extension: `Amount must have at most N decimal places`, N the token's decimals); any other bad amount is the spec's `Amount must be a positive number`.",
    auth: "key",
    body: {
      schema: "CreatePaymentRequest",
      required: true,
      example: {
        merchant: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        chainId: "137",
        token: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
        amount: "25.00",
        orderId: "A-1001",
        description: "Order A-1001",
        redirectUrl: "https://shop.example/thanks",
      },
    },
    responses: [{ status: 200, description: "The payment page URL (and the extension fields)", schema: "CreatePaymentResponse" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "Invalid form data"),
        fail(400, "Invalid Merchant address format"),
        fail(400, "Invalid Token address format"),
        fail(400, "Invalid network selected"),
        fail(400, "Amount must be a positive number"),
        fail(400, tooManyDecimals(6)),
        fail(400, tooManyDecimals(18)),
        UNAUTHORIZED,
        TOO_LARGE,
        TOO_MANY,
        fail(503, "Oracle price unavailable"),
        fail(500, "Failed to create payment"),
      ],
    },
    rateLimit: "100 requests a minute per merchant",
  },
  {
    method: "get",
    path: "/v1/payments",
    tag: "Payments",
    summary: "List payments",
    description: "Newest first, cursor pagination: walk pages with `cursor = nextCursor` until `hasMore` is false.",
    auth: "key-or-session",
    query: listPaymentsQuery,
    responses: [{ status: 200, description: "A page of payments", schema: "PaymentPage" }],
    errors: {
      shape: "coded",
      list: [
        fail(400, "limit must be an integer between 1 and 100", { code: "invalid_query" }),
        fail(400, `status must be one of ${PAYMENT_STATUSES.join(", ")}`, { code: "invalid_query" }),
        fail(400, "createdAfter must be an ISO 8601 date-time or Unix ms", { code: "invalid_query" }),
        fail(400, "createdBefore must be >= createdAfter", { code: "invalid_query" }),
        fail(400, "cursor is not a nextCursor of this list", { code: "invalid_query" }),
        fail(401, "Unauthorized", { code: "unauthorized" }),
        fail(500, "Internal server error", { code: "internal_error" }),
      ],
    },
  },
  {
    method: "get",
    path: "/v1/payments/{paymentId}",
    tag: "Extensions",
    summary: "Get one payment",
    description:
      "One of the merchant's payments, with exactly the fields of an item of `GET /v1/payments`, as `{data}`; errors in the list's `{error, code}` body. Another merchant's payment, an unknown id and a malformed id are all 404 `Payment not found`.",
    auth: "key-or-session",
    extension: true,
    pathParams: paymentId,
    responses: [{ status: 200, description: "The payment", schema: "PaymentItem" }],
    errors: {
      shape: "coded",
      list: [
        fail(401, "Unauthorized", { code: "unauthorized" }),
        fail(404, "Payment not found", { code: "not_found" }),
        fail(500, "Internal server error", { code: "internal_error" }),
      ],
    },
  },
  {
    method: "get",
    path: "/payments/verify",
    tag: "Payments",
    summary: "Verify a redirect",
    description:
      "No authentication: the hash is the proof. `valid`: the hash matches; `verified`: valid AND the payment is completed. Trust a redirect only when `verified` is true.",
    auth: "public",
    query: verifyQuery,
    responses: [{ status: 200, description: "The hash matches", schema: "Verification" }],
    errors: {
      shape: "verify",
      list: [fail(400, "Missing payment ID"), fail(400, "Missing hash"), fail(400, "Invalid hash"), fail(404, "Payment not found")],
    },
  },
  {
    method: "post",
    path: "/v1/payments/{paymentId}/withdraw",
    tag: "Extensions",
    summary: "Withdraw a partial payment",
    description:
      "A pending or expired payment with less than due received becomes `withdraw_request`; the settler takes it when it next runs (`withdrawing` once the sweep is signed, then `withdrawn`) and sweeps what arrived to the merchant, with no fee.",
    auth: "key",
    extension: true,
    pathParams: paymentId,
    responses: [{ status: 200, description: "Withdrawal requested", schema: "WithdrawalResult" }],
    errors: {
      shape: "result",
      list: [
        fail(401, "Unauthorized", { shape: "plain" }),
        fail(404, "Payment not found"),
        fail(409, "Payment has no partial payment to withdraw"),
        fail(409, ORDER_IN_FLIGHT),
      ],
    },
  },
  {
    method: "post",
    path: "/v1/payments/{paymentId}/cancel",
    tag: "Extensions",
    summary: "Cancel a payment that received nothing",
    description:
      "A `pending` payment with nothing received becomes `cancelled` (final), with the extension event `payment.cancelled`. Its address stays watched: funds sent later are listed in `unexpectedFunds` and recoverable.",
    auth: "key",
    extension: true,
    pathParams: paymentId,
    responses: [{ status: 200, description: "Cancelled", schema: "CancellationResult" }],
    errors: {
      shape: "result",
      list: [
        fail(401, "Unauthorized", { shape: "plain" }),
        fail(404, "Payment not found"),
        fail(409, HAS_FUNDS),
        fail(409, ORDER_IN_FLIGHT),
        fail(409, HAS_UNCOUNTED_FUNDS),
        ...PAYMENT_STATUSES.filter((st) => st !== "pending").map((st) => fail(409, cannotCancelIn(st))),
      ],
    },
  },
  {
    method: "post",
    path: "/v1/payments/{paymentId}/recover",
    tag: "Extensions",
    summary: "Recover unexpected funds",
    description:
      "Sends another token (or a token arrived after the payment is final) to the payout address (docs/unexpected-funds.md). Funds that sanctions screening holds, or that the operator rejected, are refused with 409 (docs/sanctions.md); the senders of what a recovery moves are screened before it is signed, and a flagged one holds it (`requested`, with `error`) for the operator.",
    auth: "key",
    extension: true,
    pathParams: paymentId,
    body: { schema: "RecoverFundsRequest", required: true, example: { token: zeroAddress } },
    responses: [{ status: 200, description: "The recovery (a new one, or the one already in flight)", schema: "FundRecoveryResult" }],
    errors: {
      shape: "result",
      list: [
        fail(401, "Unauthorized", { shape: "plain" }),
        fail(400, "Invalid token address format"),
        BAD_JSON,
        fail(404, "Payment not found"),
        fail(409, "No unexpected funds to recover in this token"),
        fail(409, SANCTIONS_HELD_MESSAGE),
        TOO_LARGE,
        NOT_JSON,
        TOO_MANY,
        fail(503, "Chain RPC unavailable"),
      ],
    },
    rateLimit: "10 requests a minute per merchant",
  },
  {
    method: "get",
    path: "/balance",
    tag: "Account",
    summary: "Gas Tank balance",
    description: "USDT with 6 decimals; beyond the spec, where to fund it.",
    auth: "key",
    responses: [{ status: 200, description: "The balance", schema: "Balance" }],
    errors: { shape: "plain", list: [UNAUTHORIZED, TOO_MANY] },
    rateLimit: "60 requests a minute per merchant",
  },
  {
    method: "get",
    path: "/promo-status",
    tag: "Account",
    summary: "Free-fee promotion status",
    auth: "key",
    responses: [{ status: 200, description: "The promotion", schema: "PromoStatus" }],
    errors: { shape: "plain", list: [UNAUTHORIZED] },
  },
  {
    method: "get",
    path: "/tokens/price",
    tag: "Public lookups",
    summary: "Token price",
    description: "The price index provider by chain and address, then the on-chain oracle by symbol (only when `symbol` is given).",
    auth: "public",
    query: tokenPriceQuery,
    responses: [{ status: 200, description: "The price", schema: "TokenPrice" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "chainId and address are required"),
        fail(400, "chainId must be a number"),
        fail(400, "Invalid token address"),
        fail(404, "Price not available for this token"),
        fail(500, "Failed to fetch token price"),
      ],
    },
  },
  {
    method: "get",
    path: "/tokens/metadata",
    tag: "Public lookups",
    summary: "Token metadata",
    description: "The price index provider, with an on-chain contract read as fallback.",
    auth: "public",
    query: tokenMetadataQuery,
    responses: [{ status: 200, description: "The token", schema: "TokenMetadata" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, "chainId and address are required"),
        fail(400, "chainId must be a number"),
        fail(400, "Invalid token address"),
        fail(400, "Cannot read token contract"),
        fail(500, "Failed to fetch token metadata"),
      ],
    },
  },
  {
    method: "get",
    path: "/oracle/price",
    tag: "Public lookups",
    summary: "Oracle price of a symbol",
    auth: "public",
    query: oraclePriceQuery,
    responses: [{ status: 200, description: "The price", schema: "OraclePrice" }],
    errors: {
      shape: "plain",
      list: [fail(400, "Symbol parameter is required"), fail(404, "Price not available for FOO"), fail(500, "Failed to fetch price")],
    },
  },
  {
    method: "get",
    path: "/payments/{paymentId}/status",
    tag: "Extensions",
    summary: "Payer view of a payment",
    description: "Public (the random payment id is the only capability): what the hosted payer page polls.",
    auth: "public",
    extension: true,
    ipLimited: false,
    pathParams: paymentId,
    responses: [{ status: 200, description: "The payer's view", schema: "PublicPaymentView" }],
    errors: { shape: "plain", list: [fail(404, "Payment not found")] },
  },
  ...BRIDGE_OPERATIONS,
];
