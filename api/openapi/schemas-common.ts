import { z } from "zod";
import type { ErrorBody } from "../errors.js";

// Hand-written zod schemas of what no route validates with a zod schema: shared pieces and the error bodies of
// api/errors.ts. They document the responses only; nothing here checks a request.

export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .meta({ description: "EVM address: `0x` + 40 hex characters", examples: ["0x8ba1f109551bD432803012645Ac136ddd64DBA72"] });
export const txHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
export const uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/);
export const unixMs = z.number().int().meta({ description: "Unix ms" });
export const decimal = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .meta({ description: "Human-readable decimal", examples: ["12.5"] });
export const units = z
  .string()
  .regex(/^\d+$/)
  .meta({ description: "Smallest token units (integer as a string)", examples: ["12500000"] });

// ---- error bodies, one per route family (api/errors.ts `errorBody`) ----

export const PlainError = z
  .object({ error: z.string() })
  .meta({ description: "`{error}`: POST /payments, /tokens/*, /oracle/price, /balance, /auth/*, /v1/agent*" });
export const CodedError = z
  .object({ error: z.string(), code: z.string().meta({ examples: ["invalid_query", "unauthorized", "internal_error"] }) })
  .meta({ description: "`{error, code}`: GET /v1/payments" });
export const ResultError = z
  .object({ success: z.literal(false), error: z.string(), data: z.null() })
  .meta({ description: "`{success: false, error, data: null}`: /v1/webhooks*, withdraw, cancel and recover" });
export const VerifyError = z
  .object({ valid: z.literal(false), verified: z.literal(false), error: z.string() })
  .meta({ description: "`{valid: false, verified: false, error}`: GET /payments/verify" });
export const VaultError = z
  .object({ success: z.literal(false), error: z.string() })
  .meta({ description: "`{success: false, error}`: /vault/v1/*" });

/** The schema of each family's error body, and the body itself with a message (the examples of the document). */
export const ERROR_SCHEMAS: Record<ErrorBody, z.ZodType> = {
  plain: PlainError,
  coded: CodedError,
  result: ResultError,
  verify: VerifyError,
  vault: VaultError,
};

// ---- misc extension routes ----

export const LoginResponse = z.object({ success: z.literal(true), merchantId: uuid, expiresAt: unixMs });
export const LogoutResponse = z.object({ success: z.literal(true) });

const component = z.object({ ok: z.boolean(), error: z.string().optional() });
export const HealthResponse = z
  .object({
    status: z.enum(["ok", "degraded"]),
    issues: z.array(z.string()).meta({ description: "One line per failing component" }),
    database: component.extend({ latencyMs: z.number().optional() }),
    chains: z.array(component.extend({ chainId: z.number().int(), name: z.string(), latestBlock: z.number().int().optional() })),
    rpc: z
      .array(
        z.object({
          chainId: z.number().int(),
          ok: z.boolean().meta({ description: "false when any of the chain's providers is not `ok`" }),
          providers: z.array(
            z.object({
              provider: z
                .string()
                .meta({ description: "`<n>:<host[:port]>`: its place in RPC_URL_<chainId> and its host, never a path or key" }),
              state: z.enum(["ok", "lagging", "rate_limited", "failing", "wrong_chain"]),
              inUse: z.boolean().meta({ description: "Reads go to this one now" }),
              head: z.number().int().nullable(),
              lagBlocks: z.number().int().nullable().meta({ description: "Behind the highest head among the chain's providers" }),
              latencyMs: z.number().int().nullable(),
              requests: z.number().int(),
              errors: z.number().int(),
              lastError: z.string().nullable(),
              until: z.string().nullable().meta({ description: "When its backoff ends (rate_limited, failing), ISO 8601" }),
            }),
          ),
        }),
      )
      .nullable()
      .meta({ description: "Each chain's JSON-RPC providers as this process sees them (docs/real-chain.md)" }),
    prices: z
      .array(
        z.object({
          chainId: z.number().int(),
          symbol: z.string().meta({ description: "The chain's native coin: gas fees are converted with its price" }),
          ok: z.boolean().meta({ description: "false when the price is unavailable: creations that need it answer 503" }),
          status: z.enum(["ok", "unavailable", "none"]),
          source: z.enum(["indexer", "trusted_oracle", "custom", "stablecoin"]).nullable(),
          priceUsd: z.string().nullable(),
          updatedAt: unixMs
            .nullable()
            .meta({ description: "When the price was set (a Chainlink feed's or the PriceOracle's updatedAt, or the index read)" }),
          ageS: z.number().int().nullable(),
          error: z.string().nullable(),
        }),
      )
      .meta({ description: "Each chain's native coin price as a quote would get it now (docs/real-chain.md#prices-on-a-real-network)" }),
    pricePusher: z
      .array(
        z.object({
          chainId: z.number().int(),
          lastPushAt: unixMs.nullable().meta({ description: "When its last setPrices was mined (null: never)" }),
          lastTxHash: z.string().nullable(),
          inFlight: z.boolean().meta({ description: "A push is signed or sent and not mined yet" }),
          lastError: z.string().nullable().meta({ description: "Why the latest push did not set its prices (reverted, dropped)" }),
        }),
      )
      .nullable()
      .meta({ description: "The price pusher's pushes to each chain's own PriceOracle; null without PRICE_PUSHER_PRIVATE_KEY" }),
    indexer: z.object({
      ready: z.boolean(),
      maxLagMs: z.number().int(),
      chains: z.array(
        z.object({
          chainId: z.number().int(),
          indexedBlock: z.number().int().nullable(),
          latestBlock: z.number().int().nullable(),
          lagBlocks: z.number().int().nullable(),
          lagMs: z.number().int().nullable(),
          ok: z.boolean(),
        }),
      ),
    }),
    processors: z.array(
      z.object({ name: z.string(), lastRunAt: unixMs, ok: z.boolean(), staleAfterMs: z.number().int(), lastError: z.string().nullable() }),
    ),
    agentPayouts: z
      .object({
        ok: z.boolean().meta({ description: "false when a withdrawal failed to send twice in a row" }),
        waiting: z.number().int().meta({ description: "Agent withdrawals not sent yet (`requested`)" }),
        stuck: z.number().int().meta({ description: "Of those, the ones that failed to send twice or more" }),
        oldestRequestedAt: unixMs.nullable(),
        lastError: z.string().nullable().meta({ description: "Why the latest one could not be sent, e.g. what the payout wallet lacks" }),
      })
      .nullable()
      .meta({ description: "Agent withdrawals waiting for the payout wallet (docs/agents.md); null when the database does not answer" }),
    settlement: z
      .array(
        z.object({
          chainId: z.number().int(),
          ok: z.boolean().meta({
            description:
              "false: a transaction at the fee cap, a wait longer than SETTLEMENT_STALL_MS, or a signer short of gas (`signers[].ok`)",
          }),
          pendingTransactions: z.number().int().meta({ description: "Nonces signed whose no version has mined yet" }),
          oldestPendingAgeMs: z.number().int().nullable(),
          atFeeCap: z.boolean().meta({ description: "A pending transaction needs more than MAX_FEE_PER_GAS_GWEI_<chainId>: it waits" }),
          unsettledPayments: z.number().int().meta({ description: "Paid payments not yet swept (those awaiting gas not counted)" }),
          oldestUnsettledAgeMs: z.number().int().nullable(),
          signers: z
            .array(
              z.object({
                address: z.string().meta({ description: "The account (checksummed)" }),
                roles: z
                  .array(z.enum(["settler", "vault-sweeper", "agent-payouts", "bridge-authority"]))
                  .meta({ description: "What it sends: one key may serve several roles" }),
                balanceWei: z
                  .string()
                  .nullable()
                  .meta({ description: "Native balance in wei (decimal string); null when the chain's RPC did not answer" }),
                spentWei: z.string().nullable().meta({
                  description:
                    "Gas paid over `spendBlocks` by its settlement and Vault sweep transactions, in wei; null when unknown (a signer whose gas is not recorded: agent withdrawals, bridge cancels)",
                }),
                spendBlocks: z.number().int().meta({ description: "The blocks the spend is over: the chain's last hour of blocks" }),
                runwayBlocks: z.number().int().nullable().meta({
                  description: "Blocks the balance pays for at that spending; null when nothing was spent (or the spend is unknown)",
                }),
                pendingTransactions: z
                  .number()
                  .int()
                  .meta({ description: "Its nonces signed on this chain whose no version has mined yet" }),
                ok: z.boolean().meta({
                  description:
                    "false: runwayBlocks under SIGNER_RUNWAY_MIN_BLOCKS, or a balance of 0 while its transactions (or paid payments) wait",
                }),
              }),
            )
            .nullable()
            .meta({ description: "The accounts the service sends transactions from and the gas each has left; null when not read" }),
        }),
      )
      .nullable()
      .meta({ description: "What waits for the settler on each chain (docs/real-chain.md); null when the database does not answer" }),
  })
  .meta({ description: "Every component of the service; 503 `degraded` names each failing one in `issues`" });

export const GraphqlRequest = z.object({
  query: z.string().meta({ examples: ["{ balance { balance } }"] }),
  variables: z.record(z.string(), z.unknown()).nullable().optional(),
  operationName: z.string().nullable().optional(),
});
export const GraphqlGetQuery = z.object({
  query: z.string().meta({ examples: ["{ balance { balance } }"] }),
  variables: z.string().optional().meta({ description: "JSON text of an object" }),
  operationName: z.string().optional(),
});
export const GraphqlResponse = z
  .object({
    data: z.record(z.string(), z.unknown()).nullable().optional(),
    errors: z
      .array(
        z.object({
          message: z.string(),
          path: z.array(z.union([z.string(), z.number()])).optional(),
          extensions: z.object({ code: z.string(), http: z.number().int().optional() }).optional(),
        }),
      )
      .optional(),
  })
  .meta({ description: "GraphQL over HTTP response (docs/graphql.md)" });
