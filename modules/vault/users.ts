import { getAddress, isAddress, type Address } from "viem";
import { z } from "zod";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { firstIssue, objectError } from "../../core/zod-issues.js";
import { computeWalletAddress, vaultSalt } from "../../chains/deposit-address.js";
import { withTransaction } from "../../db/client.js";
import { reassignAddress, registerAddress, watchedOwner } from "../addresses/index.js";
import type { Caller } from "../merchants/index.js";
import { findVaultToken, vaultOfCaller } from "./config-access.js";
import { MAX_CHAIN_ID, NOT_AN_OBJECT, parseVaultBody, vaultChainIdField } from "./config-parse.js";
import { VAULT_ACTIVE_CHAINS } from "./types.js";

// Vault users: POST /vault/v1/users hands out a user's deposit address, GET /vault/v1/users reports what the user
// deposited. An address is the factory's CREATE2 wallet of (vaultSalt(externalUserId, wallet), payout = wallet),
// so it is the same for every token and chain of one (user, wallet) and can pay only that wallet.

/** `data` of POST /vault/v1/users (spec "Deposit address"). */
export type VaultDepositAddress = { depositAddress: Address; externalUserId: string; chainId: number; tokenSymbol: string; isNew: boolean };

/** `data` of GET /vault/v1/users (spec "User info"), plus `tokenAddress` (extension: the token the totals count). */
export type VaultUserInfo = {
  externalUserId: string;
  depositAddress: Address;
  chainId: number;
  tokenSymbol: string;
  /** Smallest token units. */
  totalDeposited: string;
  depositCount: number;
  /** Unix ms; null before the first deposit. */
  lastDepositAt: number | null;
  tokenAddress: Address;
};

type UserRow = {
  id: string;
  vault_id: string;
  external_user_id: string;
  chain_id: number;
  business_wallet: string;
  address: string;
  token_address: string;
  token_symbol: string;
};

const CONTROL = /\p{Cc}/u;
/** `externalUserId` is at most 100 characters (the spec's recommendation, enforced). */
export const EXTERNAL_USER_ID_MAX = 100;
const USER_ID_TOO_LONG = `externalUserId must be at most ${EXTERNAL_USER_ID_MAX} characters`;

/**
 * `externalUserId`: a non-blank string of at most 100 characters (UTF-16 units), no control characters (it reaches
 * webhooks and logs); kept as given (not trimmed).
 */
export const externalUserIdField = z
  .string({ error: (iss) => (iss.input == null ? "externalUserId is required" : "externalUserId must be a string") })
  .refine((s) => s.trim() !== "", "externalUserId is required")
  .max(EXTERNAL_USER_ID_MAX, USER_ID_TOO_LONG)
  .refine((s) => s.length <= EXTERNAL_USER_ID_MAX, USER_ID_TOO_LONG)
  .refine((s) => !CONTROL.test(s), "externalUserId must not contain control characters");

/** `tokenAddress`: `0x` + 40 hex characters (mixed case must be a valid checksum); the output is checksummed. */
const tokenAddressField = z
  .string({ error: (iss) => (iss.input == null ? "tokenAddress is required" : "Invalid token address") })
  .min(1, "tokenAddress is required")
  .regex(/^0x[0-9a-fA-F]{40}$/, "Invalid token address")
  .refine((s) => isAddress(s), "Invalid token address")
  .transform((s) => getAddress(s));

/** POST /vault/v1/users `{externalUserId, chainId, tokenAddress}`; unknown fields are reported after these three. */
export const createVaultUserBody = z.strictObject(
  { externalUserId: externalUserIdField, chainId: vaultChainIdField, tokenAddress: tokenAddressField },
  { error: objectError(NOT_AN_OBJECT) },
);

const CHAIN_ID_MESSAGE = "chainId must be a positive integer number";
/** GET /vault/v1/users `?externalUserId=…[&chainId=…][&tokenAddress=…]` (query strings), checked in that order. */
export const vaultUserQuery = z.object({
  externalUserId: externalUserIdField,
  chainId: z
    .string({ error: CHAIN_ID_MESSAGE })
    .regex(/^[1-9]\d{0,9}$/, CHAIN_ID_MESSAGE)
    .refine((s) => Number(s) <= MAX_CHAIN_ID, CHAIN_ID_MESSAGE)
    .transform(Number)
    .optional(),
  tokenAddress: tokenAddressField.optional(),
});

/**
 * POST /vault/v1/users `{externalUserId, chainId, tokenAddress}`: the user's deposit address on that chain for the
 * vault's current wallet. Checks: the key and its vault (401, 404), the body (400: user id, chain, token address),
 * the chain served and the token enabled for this vault there (400), the vault active (409). The address is
 * registered for indexing in the transaction that records the user, before it is returned. `isNew` is true the
 * first time for this (user, wallet, chain); asking again returns the same address (and makes `tokenAddress` the
 * token GET /vault/v1/users reports).
 */
export async function createVaultUser(
  deps: Pick<AppDeps, "db" | "chains" | "now">,
  caller: Caller,
  raw: unknown,
): Promise<VaultDepositAddress> {
  const vault = await vaultOfCaller(deps, caller);
  const { externalUserId, chainId, tokenAddress } = parseVaultBody(createVaultUserBody, raw, "user");
  const chain = deps.chains.find((c) => c.chainId === chainId);
  if (!chain?.factory) throw new Invalid(`Chain ${chainId} is not served by this deployment`);
  const token = await findVaultToken(deps.db.pool, vault.id, chainId, tokenAddress);
  if (!token) throw new Invalid(`Token ${tokenAddress} is not enabled for this vault on chain ${chainId}`);
  if (!vault.isActive) throw new Conflict("Vault is not active");

  const wallet = getAddress(vault.walletAddress);
  const salt = vaultSalt(externalUserId, wallet);
  const address = computeWalletAddress({ factory: chain.factory, implementation: chain.implementation, salt, payout: wallet });
  const now = new Date(deps.now());
  return withTransaction(deps.db, async (client) => {
    let row: { id: string; created: boolean };
    try {
      const { rows } = await client.query<{ id: string; created: boolean }>(
        `INSERT INTO vault_users (vault_id, merchant_id, external_user_id, chain_id, business_wallet, salt, address, token_address, token_symbol, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
         ON CONFLICT (vault_id, external_user_id, business_wallet, chain_id)
         DO UPDATE SET token_address = EXCLUDED.token_address, token_symbol = EXCLUDED.token_symbol, updated_at = EXCLUDED.updated_at
         RETURNING id, (xmax = 0) AS created`,
        [
          vault.id,
          vault.merchantId,
          externalUserId,
          chainId,
          wallet.toLowerCase(),
          salt,
          address.toLowerCase(),
          token.tokenAddress.toLowerCase(),
          token.tokenSymbol,
          now,
        ],
      );
      row = rows[0]!;
    } catch (e) {
      // Another vault with the same wallet already gave this user id its address: the address has one owner.
      if ((e as { constraint?: string }).constraint === "vault_users_chain_address_idx") throw addressTaken();
      throw e;
    }
    await registerAddress(client, { chainId, address, kind: "vault", ownerId: row.id, merchantId: vault.merchantId });
    // Registered earlier on this chain for this user's row of another chain (below): the row of this chain takes it.
    const siblings = await client.query<{ id: string }>(
      `SELECT id::text AS id FROM vault_users WHERE vault_id = $1 AND address = $2 AND id <> $3`,
      [vault.id, address.toLowerCase(), row.id],
    );
    await reassignAddress(client, { chainId, address, kind: "vault", fromOwnerIds: siblings.rows.map((r) => r.id), toOwnerId: row.id });
    if ((await watchedOwner(client, chainId, address)) !== row.id) throw addressTaken();
    // The same factory gives the same address on every chain it serves: a transfer there (before the user asks for
    // that chain) must be indexed and recorded too, so the address is watched on every vault chain served here with
    // that factory, owned by this row until the user's own row of that chain takes it. Never taken from another owner.
    for (const other of deps.chains) {
      if (other.chainId === chainId || !VAULT_ACTIVE_CHAINS.includes(other.chainId) || !other.factory) continue;
      const there = computeWalletAddress({ factory: other.factory, implementation: other.implementation, salt, payout: wallet });
      if (there !== address) continue;
      await registerAddress(client, { chainId: other.chainId, address, kind: "vault", ownerId: row.id, merchantId: vault.merchantId });
    }
    return { depositAddress: address, externalUserId, chainId, tokenSymbol: token.tokenSymbol, isNew: row.created };
  });
}

const addressTaken = () => new Conflict("This user's deposit address belongs to another vault using the same wallet");

/**
 * GET /vault/v1/users?externalUserId=…[&chainId=…][&tokenAddress=…]: the user's latest address (the one the latest
 * POST returned, on `chainId` when given) and, for that chain and token (`tokenAddress`, default the token of that
 * POST), the sum, count and time of the user's deposits on every address the user has had in this vault (a
 * wallet change gives a new address; the old one still counts). 404 `User not found`.
 */
export async function getVaultUser(
  deps: Pick<AppDeps, "db">,
  caller: Caller,
  query: Record<string, string | undefined>,
): Promise<VaultUserInfo> {
  const vault = await vaultOfCaller(deps, caller);
  const parsed = vaultUserQuery.safeParse(query);
  if (!parsed.success) throw new Invalid(firstIssue(parsed.error.issues, Object.keys(vaultUserQuery.shape)).message);
  const { externalUserId, chainId, tokenAddress: tokenFilter } = parsed.data;
  const args: unknown[] = [vault.id, externalUserId];
  const { rows } = await deps.db.pool.query<UserRow>(
    `SELECT * FROM vault_users WHERE vault_id = $1 AND external_user_id = $2 ${chainId ? `AND chain_id = $${args.push(chainId)}` : ""}
      ORDER BY updated_at DESC, created_at DESC LIMIT 1`,
    args,
  );
  const user = rows[0];
  if (!user) throw new NotFound("User not found");
  const token = (tokenFilter ?? user.token_address).toLowerCase();
  const { rows: totals } = await deps.db.pool.query<{ total: string; count: string; last: Date | null; symbol: string | null }>(
    `SELECT COALESCE(sum(d.amount), 0)::text AS total, count(*) AS count, max(d.created_at) AS last, max(d.token_symbol) AS symbol
       FROM vault_deposits d JOIN vault_users u ON u.id = d.vault_user_id
      WHERE u.vault_id = $1 AND u.external_user_id = $2 AND d.chain_id = $3 AND d.token_address = $4 AND d.status <> 'dropped'`,
    [vault.id, externalUserId, user.chain_id, token],
  );
  const t = totals[0]!;
  let symbol = token === user.token_address ? user.token_symbol : t.symbol;
  if (symbol === null) {
    const enabled = await findVaultToken(deps.db.pool, vault.id, user.chain_id, token);
    if (!enabled) throw new Invalid(`Token ${getAddress(token)} is not enabled for this vault on chain ${user.chain_id}`);
    symbol = enabled.tokenSymbol;
  }
  return {
    externalUserId,
    depositAddress: getAddress(user.address),
    chainId: user.chain_id,
    tokenSymbol: symbol,
    totalDeposited: t.total,
    depositCount: Number(t.count),
    lastDepositAt: t.last?.getTime() ?? null,
    tokenAddress: getAddress(token),
  };
}
