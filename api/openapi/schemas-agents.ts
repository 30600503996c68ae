import { z } from "zod";
import { MERCHANT_TYPES, type MerchantType } from "../../modules/merchants/index.js";
import { address, decimal, txHash, unixMs, uuid } from "./schemas-common.js";
import { WITHDRAWAL_STATUSES } from "../../modules/agents/index.js";

// Hand-written zod schemas of the /v1/agent answers (modules/agents/agents.ts, earnings.ts, withdrawals.ts;
// docs/agents.md). The request bodies are the modules' own (modules/agents/bodies.ts, in components.ts ROUTE_SCHEMAS).

const chainId = z
  .string()
  .regex(/^\d+$/)
  .meta({ description: "Network id, as a string", examples: ["137"] });
const bps = z.number().int().min(0).max(10_000);

// ---- answers ----

export const Agent = z
  .object({
    agentId: uuid.meta({ description: "The agent's merchant account id" }),
    referralCode: z
      .string()
      .regex(/^[2-9A-HJKMNP-Z]{10}$/)
      .meta({ description: "Given to merchants at sign-up (case-insensitive)", examples: ["7KQ2MZP9XD"] }),
    markupBps: bps.meta({ description: "The agent's markup, in basis points of the requested amount", examples: [50] }),
    markupCapBps: bps.meta({ description: "The highest markup the operator allows this agent", examples: [100] }),
    platformShareBps: bps.meta({ description: "The agent's share of its referred merchants' platform fees", examples: [3000] }),
    payoutAddress: address.nullable().meta({ description: "Where withdrawals are paid; null until the agent sets it" }),
  })
  .meta({ description: "An agent's terms and settings (docs/agents.md)" });

export const AgentBalance = z
  .object({
    chainId: chainId.meta({ description: 'Network id, as a string; "0" for the USD balance', examples: ["137"] }),
    currency: z.string().meta({
      description: "Token address, lowercase (the zero address: the native coin), or `usd` (USDT micros: Gas Tank payments' fees)",
      examples: ["0xc2132d05d31c914a87c6611c10748aeb04b58e8f", "usd"],
    }),
    symbol: z.string().meta({ examples: ["USDT", "USD"] }),
    decimals: z.number().int(),
    markup: decimal.meta({ description: "Earned as markup", examples: ["1.25"] }),
    platformShare: decimal.meta({ description: "Earned as a share of platform fees", examples: ["0.3"] }),
    withdrawn: decimal.meta({ description: "Withdrawn, less withdrawals that failed", examples: ["0"] }),
    available: decimal.meta({ description: "What a withdrawal would take now", examples: ["1.55"] }),
  })
  .meta({ description: "Earnings of one chain and currency, decimal strings (exact)" });

export const AgentWithBalances = Agent.extend({ balances: z.array(AgentBalance) }).meta({
  description: "An agent's terms and settings, and its balances per chain and currency",
});

export const ReferredMerchant = z
  .object({
    merchantId: uuid,
    name: z.string(),
    merchantType: z.enum(Object.keys(MERCHANT_TYPES) as [MerchantType, ...MerchantType[]]),
    createdAt: unixMs,
    completedPayments: z.number().int().min(0),
    volume: z
      .array(z.object({ chainId, token: address, symbol: z.string(), amount: decimal }))
      .meta({ description: "Completed volume per chain and token (requested amounts) while referred by this agent" }),
    earnings: z.array(z.object({ chainId, currency: z.string(), symbol: z.string(), amount: decimal })).meta({
      description: "What this merchant's completed payments earned the agent (markup and share), per chain and currency (`usd`: chain 0)",
    }),
  })
  .meta({ description: "A merchant the agent referred" });

export const ReferredMerchantList = z.object({ data: z.array(ReferredMerchant) });

export const AgentWithdrawal = z
  .object({
    withdrawalId: uuid,
    chainId,
    token: address.meta({ description: "Token paid (checksummed); the zero address for the native coin" }),
    symbol: z.string(),
    amount: decimal,
    to: address.meta({ description: "The payout address at the time of the request" }),
    status: z.enum(WITHDRAWAL_STATUSES).meta({
      description:
        "`requested` → `signed` → `sent` → `mined` → `paid` once final, or `reverted` → `failed` once final (the amount returns to the balance)",
    }),
    transactionHash: txHash.nullable(),
    error: z.string().nullable().meta({
      description:
        "Why a `requested` withdrawal waits (for example the payout wallet holds less of the token than the amount) or why it `failed`; null otherwise",
    }),
    nextAttemptAt: unixMs
      .nullable()
      .meta({ description: "When a waiting withdrawal is tried again; null unless `requested` after a failure" }),
    createdAt: unixMs,
  })
  .meta({ description: "A withdrawal of an agent's earnings to its payout address" });

export const AgentWithdrawalList = z.object({
  data: z.array(AgentWithdrawal).meta({ description: "Newest first, at most 100" }),
});
