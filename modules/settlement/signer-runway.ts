import { getAddress, type Address } from "viem";
import type { Config } from "../../core/config.js";
import type { AppDeps } from "../../core/deps.js";
import { agentPayoutAccount } from "../agents/index.js";
import { bridgeAuthority } from "../bridge/index.js";
import { runwayBlocks, SPEND_SAMPLE, spendRate, windowBlocksOf } from "./runway.js";
import { settlerAccount } from "./shared.js";

/**
 * What a signer sends: `settler` (settlement sweeps, recoveries), `vault-sweeper` (Vault sweeps: always the settler's
 * account), `agent-payouts` (agents' withdrawals: AGENT_PAYOUT_PRIVATE_KEY, else the settler's), `bridge-authority`
 * (cancels of unfilled cross-chain orders, with BRIDGE_API_URL: BRIDGE_AUTHORITY_PRIVATE_KEY, else the settler's).
 */
export type SignerRole = "settler" | "vault-sweeper" | "agent-payouts" | "bridge-authority";

/** An account the service sends transactions from, with what it sends. */
export type ServiceSigner = { address: Address; roles: SignerRole[] };

const signersByConfig = new WeakMap<object, ServiceSigner[]>();

/**
 * Every account the service signs transactions with, once each (a key shared by several roles is one signer), from the
 * configuration alone (no network: a remote signer is named by SIGNER_ADDRESS). Empty when no key is configured.
 *
 * @example serviceSigners(deps.config) // [{ address: "0x7099…", roles: ["settler", "vault-sweeper", "agent-payouts"] }]
 */
export function serviceSigners(config: Config): ServiceSigner[] {
  let out = signersByConfig.get(config);
  if (out) return out;
  out = [];
  const add = (address: Address, ...roles: SignerRole[]) => {
    const a = getAddress(address);
    const known = out!.find((s) => s.address === a);
    if (known) known.roles.push(...roles);
    else out!.push({ address: a, roles });
  };
  const attempt = <T>(f: () => T): T | null => {
    try {
      return f();
    } catch {
      return null; // that role has no key here: this process does not send for it
    }
  };
  const settler = attempt(() => settlerAccount({ config }));
  if (settler) add(settler.address, "settler", "vault-sweeper");
  const payout = attempt(() => agentPayoutAccount(config));
  if (payout) add(payout.address, "agent-payouts");
  const authority = config.BRIDGE_API_URL ? attempt(() => bridgeAuthority(config)) : null;
  if (authority) add(authority.address, "bridge-authority");
  signersByConfig.set(config, out);
  return out;
}

/** Roles whose transactions record their gas (settlements, vault_sweeps): the signer's spending rate is known. */
const recordsGas = (roles: SignerRole[]) => roles.includes("settler") || roles.includes("vault-sweeper");

export type SignerRunway = {
  chainId: number;
  /** Checksummed. */
  signer: Address;
  roles: SignerRole[];
  /** Native balance in wei (null: it could not be read: the chain's RPC did not answer). */
  balanceWei: bigint | null;
  /**
   * Gas paid in wei over `spendBlocks` blocks: the signer's settlement and Vault sweep transactions mined (or reverted)
   * in the window. Null when unknown: a signer whose transactions do not record their gas (agent withdrawals, bridge
   * cancels), or the chain's head could not be read.
   */
  spentWei: bigint | null;
  /** The blocks the spend is over: the window (one hour of blocks), fewer when the signer sent more than is read. */
  spendBlocks: bigint;
  /** Blocks the balance lasts at that rate; null when nothing was spent (no rate) or the spend is unknown. */
  runwayBlocks: bigint | null;
  /** Nonces this signer signed on the chain whose no version has mined yet (tx_versions). */
  pendingTransactions: number;
};

type SpendRow = {
  chain_id: number;
  signer: string;
  n: number;
  spent: string;
  oldest: string | null;
  reaches_back: boolean;
  pending: number;
};

/**
 * Each signer's runway on each chain (GET /api/health's `settlement`, /metrics): one balance read per signer and chain,
 * the chain's head (`heads`, when the caller has read it; else one read per chain), and one SQL statement for every
 * signer's spend and pending transactions. Spend: each signer's latest SPEND_SAMPLE settlements and Vault sweeps by
 * nonce (unique indexes on (chain_id, signer, nonce)), those mined within the chain's last hour of blocks. A chain
 * whose head or balance cannot be read is listed with what is unknown as null. Throws when the database does not answer.
 *
 * @example
 * const [r] = await signerRunways(deps); // { chainId: 137, signer: "0x…", balanceWei: 10n ** 18n, runwayBlocks: 52000n, … }
 */
export async function signerRunways(
  deps: Pick<AppDeps, "db" | "config" | "chains" | "clients">,
  opts: { heads?: Map<number, bigint> } = {},
): Promise<SignerRunway[]> {
  const signers = serviceSigners(deps.config);
  if (signers.length === 0) return [];
  const reads = await Promise.all(
    deps.chains.map(async (chain) => {
      const client = deps.clients.get(chain.chainId);
      // With the caller's heads, a chain missing from them did not answer: its balances are not asked either.
      const head = opts.heads ? (opts.heads.get(chain.chainId) ?? null) : ((await client?.getBlockNumber().catch(() => null)) ?? null);
      const balances = await Promise.all(
        signers.map((s) =>
          client && (head !== null || !opts.heads) ? client.getBalance({ address: s.address }).catch(() => null) : Promise.resolve(null),
        ),
      );
      return { chain, head, window: windowBlocksOf(chain.fees.blockTimeMs), balances };
    }),
  );

  const pairs = reads.flatMap((r) => signers.map((s, i) => ({ read: r, signer: s, balance: r.balances[i]! })));
  const { rows } = await deps.db.pool.query<SpendRow>(
    // Per (chain, signer): the latest SPEND_SAMPLE transactions of both tables by nonce (they share the signer's
    // nonces), their gas only where a receipt was recorded (mined, reverted; completed Vault sweeps), and the nonces
    // waiting in tx_versions (its partial index of pending versions).
    `SELECT q.chain_id, q.signer, s.n, s.spent::text AS spent, s.oldest::text AS oldest, s.reaches_back, p.pending
       FROM unnest($1::int[], $2::text[], $3::numeric[]) AS q(chain_id, signer, from_block)
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n,
               coalesce(sum(t.cost) FILTER (WHERE t.block_number > q.from_block), 0) AS spent,
               min(t.block_number) FILTER (WHERE t.block_number > q.from_block) AS oldest,
               coalesce(bool_or(t.block_number <= q.from_block), false) AS reaches_back
          FROM (
            (SELECT nonce, CASE WHEN status IN ('mined', 'reverted') THEN gas_used * effective_gas_price + coalesce(l1_fee, 0) END AS cost,
                    CASE WHEN status IN ('mined', 'reverted') THEN block_number END AS block_number
               FROM settlements WHERE chain_id = q.chain_id AND signer = q.signer ORDER BY nonce DESC LIMIT $4)
            UNION ALL
            (SELECT nonce, CASE WHEN status IN ('mined', 'completed', 'reverted') THEN gas_used * effective_gas_price END,
                    CASE WHEN status IN ('mined', 'completed', 'reverted') THEN block_number END
               FROM vault_sweeps WHERE chain_id = q.chain_id AND signer = q.signer ORDER BY nonce DESC LIMIT $4)
            ORDER BY nonce DESC LIMIT $4
          ) t
      ) s
      CROSS JOIN LATERAL (
        SELECT count(DISTINCT v.nonce)::int AS pending FROM tx_versions v
         WHERE v.chain_id = q.chain_id AND v.signer = q.signer AND v.outcome IS NULL
      ) p`,
    [
      pairs.map((p) => p.read.chain.chainId),
      pairs.map((p) => p.signer.address.toLowerCase()),
      pairs.map((p) => (p.read.head === null ? null : (p.read.head - p.read.window).toString())),
      SPEND_SAMPLE,
    ],
  );
  const byKey = new Map(rows.map((r) => [`${r.chain_id}:${r.signer}`, r]));

  return pairs.map(({ read, signer, balance }) => {
    const r = byKey.get(`${read.chain.chainId}:${signer.address.toLowerCase()}`);
    const known = read.head !== null && recordsGas(signer.roles) && r !== undefined;
    const spend = known
      ? spendRate(
          { spentWei: BigInt(r.spent), oldestBlock: r.oldest === null ? null : BigInt(r.oldest), reachesBack: r.reaches_back, count: r.n },
          read.head!,
          read.window,
        )
      : null;
    return {
      chainId: read.chain.chainId,
      signer: signer.address,
      roles: signer.roles,
      balanceWei: balance,
      spentWei: spend?.spentWei ?? null,
      spendBlocks: spend?.blocks ?? read.window,
      runwayBlocks: spend && balance !== null ? runwayBlocks(balance, spend) : null,
      pendingTransactions: r?.pending ?? 0,
    };
  });
}
