import type { Address, PublicClient } from "viem";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, Invalid, NotFound } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { withTransaction, type Db } from "../../db/client.js";
import { toVault, vaultByPublicId, type VaultRow } from "./config-access.js";
import { parseWalletAddress } from "./config-parse.js";
import { MAX_VAULT_FEE_BPS, VAULT_ACTIVE_CHAINS, type Vault } from "./types.js";

// What only the operator does (the CLI, `npm run cli -- vault …`): register a business's fee and fee
// recipient, and bind a vault to another API key of its merchant (after the key was revoked or rolled).

const VAULT_NOT_FOUND = "Vault not found";

/** What the operator sees of a vault (the fee recipient included, which the API does not show). */
export function operatorView(v: Vault) {
  return {
    publicId: v.publicId,
    merchantId: v.merchantId,
    apiKeyId: v.apiKeyId,
    businessName: v.businessName,
    walletAddress: v.walletAddress,
    feeBps: v.feeBps,
    feeRecipient: v.feeRecipient ?? "default (FEE_RECIPIENT)",
    feeRegisteredAt: v.feeRegisteredAt === null ? null : new Date(v.feeRegisteredAt).toISOString(),
    isActive: v.isActive,
  };
}

function parseFeeBps(v: string | number): number {
  const n = typeof v === "number" ? v : /^\d{1,3}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > MAX_VAULT_FEE_BPS) throw new Invalid(`feeBps must be an integer from 0 to ${MAX_VAULT_FEE_BPS}`);
  return n;
}

/**
 * Registers a business's custom fee: `feeBps` 0-100 (0-1%) and optionally a fee recipient (`"default"` goes
 * back to the deployment's FEE_RECIPIENT; absent keeps the current one). Applies to sweeps planned from now on.
 * The recipient must be allow-listed on each chain's factory (`setFeeRecipient`), or sweeps with a fee revert:
 * with `clients`, the answer says, per vault chain served, whether it is.
 */
export async function setVaultFee(
  deps: Pick<AppDeps, "db" | "now"> & Partial<Pick<AppDeps, "chains" | "clients">> & { config?: { FEE_RECIPIENT?: string } },
  input: { publicId: string; feeBps: string | number; recipient?: string },
) {
  const feeBps = parseFeeBps(input.feeBps);
  let recipient: Address | null | undefined;
  if (input.recipient === "default") recipient = null;
  else if (input.recipient !== undefined) {
    try {
      recipient = parseWalletAddress(input.recipient);
    } catch {
      throw new Invalid("recipient must be an EVM address (not the zero address) or `default`");
    }
  }
  const { rows } = await deps.db.pool.query<VaultRow>(
    `UPDATE vault_configs SET fee_bps = $2, fee_recipient = CASE WHEN $3 THEN $4 ELSE fee_recipient END,
            fee_registered_at = $5, updated_at = $5
      WHERE public_id = $1 RETURNING *`,
    [input.publicId, feeBps, recipient !== undefined, recipient ?? null, new Date(deps.now())],
  );
  if (!rows[0]) throw new NotFound(VAULT_NOT_FOUND);
  const vault = toVault(rows[0]);
  const effective = (vault.feeRecipient ?? deps.config?.FEE_RECIPIENT) as Address | undefined;
  const allowListed: Record<string, boolean | "unknown"> = {};
  if (effective && deps.chains && deps.clients)
    for (const chain of deps.chains.filter((c) => VAULT_ACTIVE_CHAINS.includes(c.chainId) && c.factory))
      allowListed[chain.chainId] = await isFeeRecipient(deps.clients.get(chain.chainId), chain.factory!, effective);
  return { ...operatorView(vault), feeRecipientAllowListed: allowListed };
}

async function isFeeRecipient(client: PublicClient | undefined, factory: Address, who: Address): Promise<boolean | "unknown"> {
  if (!client) return "unknown";
  return client
    .readContract({ address: factory, abi: walletFactoryAbi, functionName: "isFeeRecipient", args: [who] })
    .catch(() => "unknown" as const);
}

/**
 * Binds a vault to another API key of the same merchant (not revoked, without a vault of its own): the way
 * back to managing a vault whose key was revoked or rolled. Deposits and sweeps never depended on the key.
 */
export async function rebindVault(deps: { db: Db; now: () => number }, input: { publicId: string; apiKeyId: string }) {
  if (!isUuid(input.apiKeyId)) throw new Invalid("apiKeyId must be an API key id (uuid)");
  return withTransaction(deps.db, async (client) => {
    const vault = await vaultByPublicId(client, input.publicId);
    if (!vault) throw new NotFound(VAULT_NOT_FOUND);
    const key = await client.query<{ merchant_id: string; revoked_at: Date | null }>(
      `SELECT merchant_id, revoked_at FROM api_keys WHERE id = $1`,
      [input.apiKeyId],
    );
    if (!key.rows[0] || key.rows[0].merchant_id !== vault.merchantId) throw new NotFound("API key not found for this vault's merchant");
    if (key.rows[0].revoked_at) throw new Conflict("That API key is revoked");
    const taken = await client.query(`SELECT 1 FROM vault_configs WHERE api_key_id = $1 AND id <> $2`, [input.apiKeyId, vault.id]);
    if (taken.rowCount) throw new Conflict("That API key already has a vault");
    const { rows } = await client.query<VaultRow>(`UPDATE vault_configs SET api_key_id = $2, updated_at = $3 WHERE id = $1 RETURNING *`, [
      vault.id,
      input.apiKeyId,
      new Date(deps.now()),
    ]);
    return operatorView(toVault(rows[0]!));
  });
}

/** The vaults of a merchant (one per API key that created one). */
export async function listMerchantVaults(db: Db, merchantId: string) {
  if (!isUuid(merchantId)) throw new NotFound("Merchant not found");
  const { rows } = await db.pool.query<VaultRow>(`SELECT * FROM vault_configs WHERE merchant_id = $1 ORDER BY created_at`, [merchantId]);
  return rows.map((r) => operatorView(toVault(r)));
}
