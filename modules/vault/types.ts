/** A vault as stored (`vault_configs`), for the modules that act on it (config, users, deposits, sweeps). */
export type Vault = {
  /** `vault_configs.id`: internal, never shown. */
  id: string;
  /** Random, URL-safe, public (`GET /vault/v1/business/{publicId}/tokens`). */
  publicId: string;
  merchantId: string;
  /** The API key the vault was created with and is reached through (one vault per key). */
  apiKeyId: string;
  businessName: string;
  /** Checksummed: where sweeps pay, minus the fee. */
  walletAddress: string;
  /** 0-100 (0-1%); 25 unless the operator registered another. */
  feeBps: number;
  /** Checksummed custom fee recipient; null = the deployment's FEE_RECIPIENT. */
  feeRecipient: string | null;
  feeRegisteredAt: number | null;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
};

/** A token a vault accepts. */
export type VaultToken = {
  chainId: number;
  /** Checksummed. */
  tokenAddress: string;
  tokenSymbol: string;
  /** Read from the contract when the token was enabled (the 0.001-token minimum needs it). */
  decimals: number;
};

/** `VaultConfiguration` of the spec: the `data` of every /vault/v1/config response. */
export type VaultConfiguration = {
  publicId: string;
  businessName: string;
  walletAddress: string;
  feeBps: number;
  isActive: boolean;
  enabledTokens: { chainId: number; tokenSymbol: string; tokenAddress: string }[];
};

/** An entry of the public `GET /vault/v1/business/{publicId}/tokens`. */
export type SupportedToken = { chainId: number; symbol: string; address: string };

/** Vault networks (spec "Vault users and deposits"). */
export const VAULT_ACTIVE_CHAINS: readonly number[] = [11155111, 777177];
export const VAULT_COMING_SOON_CHAINS: readonly number[] = [777178, 1, 137, 56];

/** The spec's default fee (0.25%) and the operator's range (0-1%). */
export const DEFAULT_VAULT_FEE_BPS = 25;
export const MAX_VAULT_FEE_BPS = 100;

export const BUSINESS_NAME_MAX = 100;
export const TOKEN_SYMBOL_MAX = 20;
/** Tokens one vault may enable (bounds every listing and the public route). */
export const MAX_VAULT_TOKENS = 50;
