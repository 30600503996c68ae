import { agentWithdrawalBody, updateAgentBody } from "../../modules/agents/index.js";
import type { z } from "zod";
import { bridgeHoldingsQuery, bridgeOrderBody, bridgeQuoteQuery } from "../../modules/bridge/index.js";
import { eventsQuery } from "../../modules/events/index.js";
import { loginForm } from "../../modules/merchants/index.js";
import { underpaymentToleranceBody } from "../../modules/merchants/index.js";
import { listPaymentsQuery } from "../../modules/payments/index.js";
import { recoverFundsBody } from "../../modules/payments/index.js";
import { createPaymentBody } from "../../modules/payments/index.js";
import { verifyQuery } from "../../modules/payments/index.js";
import { oraclePriceQuery, tokenMetadataQuery, tokenPriceQuery } from "../../modules/pricing/index.js";
import { createVaultBody, updateVaultBody } from "../../modules/vault/index.js";
import { tokenToEnableBody, tokenToRemoveBody } from "../../modules/vault/index.js";
import { vaultDepositsQuery } from "../../modules/vault/index.js";
import { createVaultUserBody, vaultUserQuery } from "../../modules/vault/index.js";
import { regenerateVaultWebhookBody } from "../../modules/vault/index.js";
import { putWebhookBody, regenerateSecretBody } from "../../modules/webhooks/index.js";
import { deliveriesQuery } from "../../modules/webhooks/index.js";
import { putVaultWebhookBody } from "../../modules/webhooks/index.js";
import * as agents from "./schemas-agents.js";
import * as bridge from "./schemas-bridge.js";
import * as common from "./schemas-common.js";
import * as events from "./schemas-events.js";
import * as pay from "./schemas-payments.js";
import * as settings from "./schemas-settings.js";
import * as hooks from "./schemas-webhooks.js";
import * as vault from "./schemas-vault.js";

type RouteSchema = { schema: z.ZodType; validator: string; notes: Record<string, string> };

const WEBHOOK_URL = "HTTPS only, at most 2000 characters, no credentials, not a loopback, private or reserved address";
const VAULT_CHAIN = "A JSON number; vault chains: 11155111, 777177 (777178, 1, 137, 56: coming soon)";

/**
 * The schemas the routes validate with, imported from their modules (never copied): every request body and query
 * of the API but GraphQL's. The document's component of each is `z.toJSONSchema` of that very object, `x-validator`
 * names where it lives (a query's parameters name it too), and `notes` only add property descriptions (spec
 * "Endpoints", docs/webhooks.md, docs/vault.md) to the converted schema. Checks JSON Schema cannot state (a URL's
 * target, an address checksum, duplicates, the messages and their order) run in the modules, with the same schema.
 */
export const ROUTE_SCHEMAS = {
  CreatePaymentRequest: {
    schema: createPaymentBody,
    validator: "modules/payments/validate-create.ts createPaymentBody",
    notes: {
      merchant: "EVM address that receives the funds",
      chainId: "A supported chain id, as a string (a JSON integer is read as one)",
      token: "Token contract address; the zero address for the native coin",
      amount: "Positive decimal, human-readable (`12.5`)",
      orderId: "Merchant reference, at most 100 characters",
      description: "At most 200 characters",
      redirectUrl:
        "http(s) URL, at most 2000 characters; the payer comes back with `service`, `success` and `hash` (verify with GET /payments/verify)",
      expiresAt: "Unix ms, in the future; the payer sees a countdown",
      blockConfirmations: "Default 1, at most 100",
      gasless: "Default false; only for stablecoins or tokens with a known price, otherwise silently false (Gas Tank mode)",
      payerCoversFee: "Default false",
      customPriceUsd: "USD price per token (decimal, at most 18 fraction digits), used when no automatic price source has one",
    },
  },
  ListPaymentsQuery: {
    schema: listPaymentsQuery,
    validator: "modules/payments/list.ts listPaymentsQuery",
    notes: {
      limit: "Page size, an integer from 1 to 100 (default 100)",
      cursor: "Opaque: the `nextCursor` of the previous page; omitted on the first request",
      status: "One of the 13 payment statuses",
      createdAfter: "ISO 8601 or Unix ms: inclusive lower bound on `createdAt`",
      createdBefore: "ISO 8601 or Unix ms: inclusive upper bound on `createdAt`, not before `createdAfter`",
      orderId: "Exact, case-sensitive match",
    },
  },
  VerifyQuery: {
    schema: verifyQuery,
    validator: "modules/payments/verify.ts verifyQuery",
    notes: { id: "The payment id (the redirect's `service` parameter)", hash: "The redirect's `hash` parameter" },
  },
  RecoverFundsRequest: {
    schema: recoverFundsBody,
    validator: "modules/payments/recover.ts recoverFundsBody",
    notes: { token: "Token contract, or the zero address for the native coin" },
  },
  TokenPriceQuery: {
    schema: tokenPriceQuery,
    validator: "modules/pricing/lookups.ts tokenPriceQuery",
    notes: {
      chainId: "Network id, decimal digits",
      address: "Token contract (zero address: the native coin)",
      symbol: "Token symbol, needed for the oracle fallback",
    },
  },
  TokenMetadataQuery: {
    schema: tokenMetadataQuery,
    validator: "modules/pricing/lookups.ts tokenMetadataQuery",
    notes: { chainId: "Network id, decimal digits", address: "Token contract (zero address: the native coin)" },
  },
  OraclePriceQuery: {
    schema: oraclePriceQuery,
    validator: "modules/pricing/lookups.ts oraclePriceQuery",
    notes: { symbol: "Case-insensitive; `USDT0` is read as `USDT`" },
  },
  BridgeQuoteQuery: {
    schema: bridgeQuoteQuery,
    validator: "modules/bridge/orders.ts bridgeQuoteQuery",
    notes: {
      srcChainId: "The network the payer pays from (decimal digits; Solana is DLN's 7565164); not the payment's",
      srcToken: "Token the payer gives (the zero address: the native coin; on Solana the SPL mint, base58)",
      payer: "The payer's wallet (an EVM address, or a Solana key in base58): with it, the answer carries the order transaction",
    },
  },
  BridgeHoldingsQuery: {
    schema: bridgeHoldingsQuery,
    validator: "modules/bridge/orders.ts bridgeHoldingsQuery",
    notes: { srcChainId: "7565164 (Solana, DLN's id)", owner: "The payer's Solana key (base58)" },
  },
  BridgeOrderRequest: {
    schema: bridgeOrderBody,
    validator: "modules/bridge/orders.ts bridgeOrderBody",
    notes: { txHash: "The payer's transaction on the source chain that created the order: an EVM hash, or a Solana signature (base58)" },
  },
  LoginRequest: {
    schema: loginForm,
    validator: "modules/merchants/sessions.ts loginForm",
    notes: { email: "The account's e-mail", password: "The account's password" },
  },

  PutWebhookRequest: {
    schema: putWebhookBody,
    validator: "modules/webhooks/config.ts putWebhookBody",
    notes: {
      url: WEBHOOK_URL,
      events: "Default on creation: `payment.completed`, `payment.withdrawn`; unchanged on update when omitted",
      isActive: "Default true on creation; unchanged on update when omitted",
      legacy: "Extension: a webhook without a secret, signed with the API key of this request",
    },
  },
  RegenerateSecretRequest: {
    schema: regenerateSecretBody,
    validator: "modules/webhooks/config.ts regenerateSecretBody",
    notes: { action: "Other fields are ignored" },
  },
  EventsQuery: {
    schema: eventsQuery,
    validator: "modules/events/feed.ts eventsQuery",
    notes: {
      limit: "Page size, an integer from 1 to 100 (default 100)",
      after: "Opaque: the `nextCursor` of the previous page (from the oldest event kept when omitted), or `now`: the end of the feed",
    },
  },
  DeliveriesQuery: {
    schema: deliveriesQuery,
    validator: "modules/webhooks/deliveries.ts deliveriesQuery",
    notes: {
      limit: "An integer from 1 to 100 (default 50)",
      cursor: "The `nextCursor` of the previous page",
      status: "Delivery status",
      paymentId: "Only this payment's deliveries",
      event: "Only this event",
    },
  },

  CreateVaultRequest: {
    schema: createVaultBody,
    validator: "modules/vault/config.ts createVaultBody",
    notes: {
      businessName: "Trimmed, at most 100 characters",
      walletAddress: "Where sweeps pay, minus the fee; not the zero address; mixed case must be a valid EIP-55 checksum",
      enabledTokens: `At most 50, no duplicates; each as POST /vault/v1/config/tokens (chainId: ${VAULT_CHAIN})`,
    },
  },
  UpdateVaultRequest: {
    schema: updateVaultBody,
    validator: "modules/vault/config.ts updateVaultBody",
    notes: {
      businessName: "Trimmed, at most 100 characters",
      walletAddress: "Applies to addresses handed out from then on",
      isActive: "False: no new deposit addresses",
    },
  },
  TokenToEnable: {
    schema: tokenToEnableBody,
    validator: "modules/vault/config-parse.ts tokenToEnableBody",
    notes: { chainId: VAULT_CHAIN, token: "ERC-20 contract (not the zero address)", tokenSymbol: "Trimmed, at most 20 characters" },
  },
  TokenToRemove: {
    schema: tokenToRemoveBody,
    validator: "modules/vault/config-parse.ts tokenToRemoveBody",
    notes: { chainId: "A JSON number", token: "An enabled token" },
  },
  VaultWebhookRequest: {
    schema: putVaultWebhookBody,
    validator: "modules/webhooks/vault-config.ts putVaultWebhookBody",
    notes: {
      url: WEBHOOK_URL,
      events: "Default on creation: `deposit.*`; unchanged on update when omitted",
      isActive: "Default true on creation; unchanged on update when omitted",
    },
  },
  VaultWebhookRegenerate: {
    schema: regenerateVaultWebhookBody,
    validator: "modules/vault/webhooks.ts regenerateVaultWebhookBody",
    notes: { action: "No body, `{}` or `{action: 'regenerate-secret'}`" },
  },
  CreateVaultUserRequest: {
    schema: createVaultUserBody,
    validator: "modules/vault/users.ts createVaultUserBody",
    notes: {
      externalUserId: "Stable, opaque user id: at most 100 characters, no control characters",
      chainId: VAULT_CHAIN,
      tokenAddress: "A token enabled for the vault on that chain",
    },
  },
  VaultUserQuery: {
    schema: vaultUserQuery,
    validator: "modules/vault/users.ts vaultUserQuery",
    notes: {
      externalUserId: "The user's id",
      chainId: "Extension: the user's address on this chain",
      tokenAddress: "Extension: the token the totals count (default: the latest POST's)",
    },
  },
  VaultDepositsQuery: {
    schema: vaultDepositsQuery,
    validator: "modules/vault/deposits.ts vaultDepositsQuery",
    notes: { limit: "1-100, default 50", status: "Deposit status", externalUserId: "Only this user's deposits" },
  },
  UpdateAgentRequest: {
    schema: updateAgentBody,
    validator: "modules/agents/bodies.ts updateAgentBody",
    notes: {
      markupBps: "Whole basis points from 0 to the agent's `markupCapBps` (above it: 400 with the cap in the message); new payments only",
      payoutAddress: "Where withdrawals are paid: an EVM address, not the zero address; stored checksummed",
    },
  },
  AgentWithdrawalRequest: {
    schema: agentWithdrawalBody,
    validator: "modules/agents/bodies.ts agentWithdrawalBody",
    notes: {
      chainId: "A supported chain id, as a string",
      token:
        'The token whose balance is withdrawn (the zero address: the native coin); with `balance: "usd"`, the chain\'s 6-decimal USDT or USDC it is paid in',
      balance: "`token` (default): what was earned in `token` on `chainId`; `usd`: the USD balance (Gas Tank payments' fees)",
    },
  },
  UnderpaymentToleranceRequest: {
    schema: underpaymentToleranceBody,
    validator: "modules/merchants/underpayment-tolerance.ts underpaymentToleranceBody",
    notes: {
      bps: "Required: whole basis points of the amount due, 0 to 500 (5 %); the share is rounded down to the smallest unit",
      amounts:
        "Absolute tolerances, at most one per chain and token (`chainId` string, `token` of the chain's registry, `amount` a positive decimal in that token); omitted: none",
    },
  },
} satisfies Record<string, RouteSchema>;

/** Each route schema under its component name. */
const schemasOf = <T extends Record<string, RouteSchema>>(routes: T) =>
  Object.fromEntries(Object.entries(routes).map(([name, r]) => [name, r.schema])) as { [K in keyof T]: z.ZodType };

/** A route's own schema by component name, or undefined. */
export const routeSchema = (name: string): RouteSchema | undefined => (ROUTE_SCHEMAS as Record<string, RouteSchema>)[name];

/** The entry of a route's own schema (by identity), or undefined. */
export const routeSchemaOf = (schema: z.ZodType): RouteSchema | undefined =>
  Object.values(ROUTE_SCHEMAS as Record<string, RouteSchema>).find((r) => r.schema === schema);

/** Every named component schema: the routes' own (above) and the hand-written ones of api/openapi/schemas-*.ts. */
export const COMPONENTS = {
  ...schemasOf(ROUTE_SCHEMAS),

  PlainError: common.PlainError,
  CodedError: common.CodedError,
  ResultError: common.ResultError,
  VerifyError: common.VerifyError,
  VaultError: common.VaultError,

  CreatePaymentResponse: pay.CreatePaymentResponse,
  PaymentStatus: pay.PaymentStatus,
  Payment: pay.Payment,
  UnexpectedFunds: pay.UnexpectedFunds,
  PaymentPage: pay.PaymentPage,
  PaymentItem: pay.PaymentItem,
  Verification: pay.Verification,
  Balance: pay.Balance,
  PromoStatus: pay.PromoStatus,
  TokenPrice: pay.TokenPrice,
  TokenMetadata: pay.TokenMetadata,
  OraclePrice: pay.OraclePrice,
  Withdrawal: pay.Withdrawal,
  WithdrawalResult: pay.withResult(pay.Withdrawal),
  Cancellation: pay.Cancellation,
  CancellationResult: pay.withResult(pay.Cancellation),
  FundRecovery: pay.FundRecovery,
  FundRecoveryResult: pay.withResult(pay.FundRecovery),
  PublicPaymentView: pay.PublicPaymentView,
  BridgeQuote: bridge.BridgeQuote,
  BridgeOrders: bridge.BridgeOrders,
  BridgeHoldings: bridge.BridgeHoldings,

  WebhookConfig: hooks.WebhookConfig,
  WebhookConfigResult: pay.withResult(hooks.WebhookConfig),
  WebhookSecretResult: pay.withResult(hooks.WebhookSecret),
  DeletedResult: pay.withResult(hooks.Deleted),
  Delivery: hooks.Delivery,
  DeliveryResult: pay.withResult(hooks.Delivery),
  DeliveryPageResult: pay.withResult(hooks.DeliveryPage),
  DeliveryDetailResult: pay.withResult(hooks.DeliveryDetail),

  FeedEvent: events.FeedEvent,
  EventPage: events.EventPage,

  VaultConfiguration: vault.VaultConfiguration,
  VaultConfigurationResult: vault.withVault(vault.VaultConfiguration),
  VaultWebhook: vault.VaultWebhook,
  VaultWebhookResult: vault.withVault(vault.VaultWebhook),
  VaultDeletedResult: vault.withVault(hooks.Deleted),
  VaultDepositAddressResult: vault.withVault(vault.VaultDepositAddress),
  VaultUserInfoResult: vault.withVault(vault.VaultUserInfo),
  VaultDeposit: vault.VaultDeposit,
  VaultDepositResult: vault.withVault(vault.VaultDeposit),
  VaultDepositListResult: vault.withVault(vault.VaultDepositList),
  PublicVaultTokens: vault.PublicVaultTokens,

  Agent: agents.Agent,
  AgentBalance: agents.AgentBalance,
  AgentWithBalances: agents.AgentWithBalances,
  ReferredMerchant: agents.ReferredMerchant,
  ReferredMerchantList: agents.ReferredMerchantList,
  AgentWithdrawal: agents.AgentWithdrawal,
  AgentWithdrawalList: agents.AgentWithdrawalList,

  UnderpaymentTolerance: settings.UnderpaymentTolerance,

  LoginResponse: common.LoginResponse,
  LogoutResponse: common.LogoutResponse,
  HealthResponse: common.HealthResponse,
  GraphqlRequest: common.GraphqlRequest,
  GraphqlResponse: common.GraphqlResponse,
} satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof COMPONENTS;
