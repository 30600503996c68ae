import { z } from "zod";
import { LISTED_DEPOSIT_STATUSES } from "../../modules/vault/index.js";
import { VAULT_SUBSCRIPTIONS } from "../../modules/webhooks/index.js";
import { address, txHash, unixMs, units, uuid } from "./schemas-common.js";

// Hand-written zod schemas of the answers of /vault/v1/* (modules/vault/config-access.ts, users.ts,
// serialize-deposit.ts; docs/vault.md, docs/vault-deposits.md). The request bodies and queries are the modules' own
// (components.ts ROUTE_SCHEMAS).

export const VaultConfiguration = z.object({
  publicId: z.string().meta({ examples: ["vlt_zxJAUipWIvqzfAFrmQNLzA"] }),
  businessName: z.string(),
  walletAddress: address,
  feeBps: z.number().int().min(0).max(100).meta({ description: "Default 25 (0.25%)" }),
  isActive: z.boolean(),
  enabledTokens: z.array(z.object({ chainId: z.number().int(), tokenSymbol: z.string(), tokenAddress: address })),
});

export const VaultWebhook = z.object({
  id: uuid,
  url: z.string(),
  events: z.array(z.enum(VAULT_SUBSCRIPTIONS)),
  isActive: z.boolean(),
  secret: z.string().nullable().meta({ description: "`whsec_…`: whole on creation and regeneration, masked otherwise" }),
  createdAt: unixMs,
  updatedAt: unixMs,
});

export const VaultDepositAddress = z.object({
  depositAddress: address,
  externalUserId: z.string(),
  chainId: z.number().int(),
  tokenSymbol: z.string(),
  isNew: z.boolean().meta({ description: "True (status 201) the first time for this user, wallet and chain" }),
});

export const VaultUserInfo = z.object({
  externalUserId: z.string(),
  depositAddress: address,
  chainId: z.number().int(),
  tokenSymbol: z.string(),
  totalDeposited: units,
  depositCount: z.number().int(),
  lastDepositAt: unixMs.nullable(),
  tokenAddress: address.meta({ description: "Extension" }),
});

export const VaultDeposit = z.object({
  depositId: uuid,
  externalUserId: z.string(),
  amount: units,
  fee: units,
  netAmount: units,
  chainId: z.number().int(),
  tokenSymbol: z.string(),
  status: z.enum(LISTED_DEPOSIT_STATUSES).meta({
    description:
      "The spec's `detected`, `processing`, `completed`, `failed`, and the extension `held`: its sender failed sanctions screening; no deposit of its (address, token) is swept until the operator releases it (docs/sanctions.md)",
  }),
  depositTxHash: txHash.nullable(),
  processTxHash: txHash.nullable(),
  createdAt: unixMs,
  processedAt: unixMs.nullable(),
  tokenAddress: address.meta({ description: "Extension" }),
  depositAddress: address.meta({ description: "Extension" }),
  hold: z.enum(["below_minimum", "token_not_enabled"]).nullable().meta({ description: "Extension: why a deposit is not swept by itself" }),
});
export const VaultDepositList = z.object({ deposits: z.array(VaultDeposit), total: z.number().int() });

export const PublicVaultTokens = z.object({ tokens: z.array(z.object({ chainId: z.number().int(), symbol: z.string(), address })) });

export const withVault = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });
