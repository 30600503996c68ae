import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import { getAddress, isAddress, multicall3Abi, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { moneyBlock } from "../../chains/money-block.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import { formatAmount } from "../../core/money.js";
import { findToken } from "../../chains/runtime.js";
import { fundRecoveries } from "./schema.js";
import { isTransportError, readContractMetadata, storedTokenMetadata, storeTokenMetadata } from "../pricing/index.js";
import { isBlocked, type FundsScreening } from "./funds-screening.js";
import type { PaymentRow } from "./types.js";

/**
 * Unexpected funds: what sits on a payment's address that no step of the payment will move.
 * - ERC-20 balances from the indexer (transfers in minus transfers out of the address, any token): every
 *   token other than the payment's, in any state; the payment's own token once the payment is final.
 * - The native coin (RPC balance: it emits no log) by the same rule: in any state on an ERC-20 payment's
 *   address (an `expired` payment that received nothing never becomes final), once final on a native one.
 * The merchant recovers them to the committed payout (modules/payments/recover.ts, settled by
 * modules/settlement/recover.ts); an entry stays listed, with units "0", once its recovery is done.
 */

/** Statuses after which the service moves nothing from the address by itself (no transition leaves them). */
export const FINAL_STATUSES: readonly string[] = ["completed", "withdrawn", "failed", "cancelled"];

/** Recoveries still in flight: at most one per (payment, token). */
export const OPEN_RECOVERY_STATUSES = ["requested", "signed", "sent", "mined"] as const;

export type RecoveryView = {
  recoveryId: string;
  /** requested | signed | sent | mined | recovered | failed */
  status: string;
  transactionHash: string | null;
  /** What the payout received (from the indexed Swept event), once `recovered`. */
  recoveredAmount: string | null;
  recoveredUnits: string | null;
  /** The fee the sweep paid out of the funds, in smallest units (recovery-fee.ts), once signed. */
  feeUnits: string | null;
  /** The fee debited from the Gas Tank instead, USDT decimal, once signed. */
  gasTankFee: string | null;
  error: string | null;
  /** Unix ms. */
  requestedAt: number;
};

export type UnexpectedFunds = {
  /** Token contract (checksummed); the zero address for the native coin. */
  token: Address;
  symbol: string | null;
  decimals: number | null;
  /** Decimal string; null when the token's decimals cannot be read. */
  amount: string | null;
  /** Smallest units, as a string. */
  units: string;
  /** Something is left, no recovery of it is in flight, and sanctions screening does not hold it (docs/sanctions.md). */
  recoverable: boolean;
  /** The latest recovery of this token, if any. */
  recovery: RecoveryView | null;
};

/** What the computation needs of a payment. */
export type PaymentRef = Pick<
  PaymentRow,
  "id" | "chain_id" | "recipient_address" | "token_address" | "token_symbol" | "token_decimals" | "status"
>;

type Deps = Pick<AppDeps, "db" | "chains" | "clients">;

const lower = (a: string) => a.toLowerCase() as Hex;
const key = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

/** Whether funds of `token` on the payment's address are unexpected (outside the payment's own settlement). */
export function countsAsUnexpected(p: Pick<PaymentRef, "token_address" | "status">, token: string): boolean {
  return FINAL_STATUSES.includes(p.status) || lower(token) !== lower(p.token_address);
}

/**
 * Indexed ERC-20 balances of the payments' addresses, per token: one grouped query over the transfer view
 * for the whole page (transfers in, minus transfers out: sweeps, recoveries). Keyed by `chainId:address`.
 */
export async function indexedBalances(
  deps: Pick<AppDeps, "db">,
  refs: PaymentRef[],
  token?: string,
): Promise<Map<string, Map<Hex, bigint>>> {
  const out = new Map<string, Map<Hex, bigint>>();
  if (refs.length === 0) return out;
  const t = deps.db.views.transfer;
  const chains = [...new Set(refs.map((p) => p.chain_id))];
  const addresses = [...new Set(refs.map((p) => lower(p.recipient_address)))];
  const only = token ? eq(t.token, lower(token)) : undefined;
  const { orm } = deps.db;
  const flows = unionAll(
    orm
      .select({
        chainId: t.chainId,
        address: sql<Hex>`${t.to}`.as("address"),
        token: t.token,
        amount: sql<string>`${t.amount}`.as("amount"),
      })
      .from(t)
      .where(and(inArray(t.chainId, chains), inArray(t.to, addresses), only)),
    orm
      .select({
        chainId: t.chainId,
        address: sql<Hex>`${t.from}`.as("address"),
        token: t.token,
        amount: sql<string>`-${t.amount}`.as("amount"),
      })
      .from(t)
      .where(and(inArray(t.chainId, chains), inArray(t.from, addresses), only)),
  ).as("flows");
  const rows = await orm
    .select({ chainId: flows.chainId, address: flows.address, token: flows.token, units: sql<string>`sum(${flows.amount})` })
    .from(flows)
    .groupBy(flows.chainId, flows.address, flows.token)
    .catch((e: unknown) => {
      // Before the indexer first publishes its views there is nothing indexed: the list must still answer.
      if ((e as { code?: string }).code === "42P01") return [];
      throw e;
    });
  for (const r of rows) {
    const k = key(r.chainId, r.address);
    const m = out.get(k) ?? new Map<Hex, bigint>();
    m.set(r.token, BigInt(r.units));
    out.set(k, m);
  }
  return out;
}

/** Canonical Multicall3, for a chain this process does not run (chains/runtime.ts names each chain's). */
const MULTICALL3: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** Chains found without Multicall3 (this process): balances are read one by one there. */
const noMulticall = new Set<number>();
const RPC_BUDGET_MS = 3_000;

class NoAnswer extends Error {}

/** `p`, or NoAnswer after `ms`: a slow RPC must not hold the payment list. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Native balances of addresses on one chain: one Multicall3 `getEthBalance` batch where the chain has it. */
export async function nativeBalances(
  deps: Pick<AppDeps, "chains">,
  client: PublicClient,
  chainId: number,
  addresses: Address[],
): Promise<bigint[]> {
  if (addresses.length === 0) return [];
  if (!noMulticall.has(chainId)) {
    const multicall = deps.chains.find((c) => c.chainId === chainId)?.multicall3 ?? MULTICALL3;
    try {
      return await client.multicall({
        multicallAddress: multicall,
        allowFailure: false,
        contracts: addresses.map((a) => ({ address: multicall, abi: multicall3Abi, functionName: "getEthBalance", args: [a] }) as const),
      });
    } catch (e) {
      if (isTransportError(e)) throw e;
      noMulticall.add(chainId);
    }
  }
  return Promise.all(addresses.map((address) => client.getBalance({ address })));
}

/**
 * Native balances of the page's addresses where the native coin counts as unexpected (ERC-20 payments, final
 * native ones), keyed by `chainId:address`; a chain whose RPC fails is left out.
 */
async function unexpectedNativeBalances(deps: Deps, refs: PaymentRef[]): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  const byChain = new Map<number, Address[]>();
  for (const p of refs)
    if (countsAsUnexpected(p, zeroAddress) && isAddress(p.recipient_address))
      byChain.set(p.chain_id, [...(byChain.get(p.chain_id) ?? []), p.recipient_address as Address]);
  await Promise.all(
    [...byChain].map(async ([chainId, addresses]) => {
      const client = deps.clients.get(chainId);
      if (!client) return;
      try {
        const balances = await within(nativeBalances(deps, client, chainId, addresses), RPC_BUDGET_MS);
        addresses.forEach((a, i) => out.set(key(chainId, a), balances[i]!));
      } catch (e) {
        logger("unexpected-funds").warn({ chainId, error: firstLine(e) }, "reading native balances failed");
      }
    }),
  );
  return out;
}

/** The latest recovery of each (payment, token) of the page: payment id -> token -> recovery. */
async function latestRecoveries(deps: Pick<AppDeps, "db">, paymentIds: string[]): Promise<Map<string, Map<Hex, RecoveryView>>> {
  const r = fundRecoveries;
  const rows = await deps.db.orm
    .selectDistinctOn([r.paymentId, r.token])
    .from(r)
    .where(inArray(r.paymentId, paymentIds))
    .orderBy(r.paymentId, r.token, desc(r.createdAt));
  const out = new Map<string, Map<Hex, RecoveryView>>();
  for (const x of rows) {
    const m = out.get(x.paymentId) ?? new Map<Hex, RecoveryView>();
    m.set(x.token as Hex, {
      recoveryId: x.id,
      status: x.status,
      transactionHash: x.txHash,
      recoveredAmount: null,
      recoveredUnits: x.recoveredUnits,
      feeUnits: x.feeUnits,
      gasTankFee: x.gasTankFeeMicros === null ? null : formatAmount(BigInt(x.gasTankFeeMicros), 6),
      error: x.error,
      requestedAt: x.createdAt.getTime(),
    });
    out.set(x.paymentId, m);
  }
  return out;
}

export type Meta = { symbol: string | null; decimals: number | null };

/**
 * Symbol and decimals of each (chain, token): the registry, a payment of the page in that token, the
 * `token_metadata` table, then the contract (read once, within a time budget, and stored).
 */
async function metadataOf(deps: Deps, wanted: { chainId: number; token: Hex }[], refs: PaymentRef[]): Promise<Map<string, Meta>> {
  const out = new Map<string, Meta>();
  for (const p of refs) out.set(key(p.chain_id, p.token_address), { symbol: p.token_symbol, decimals: p.token_decimals });
  const missing: { chainId: number; token: Hex }[] = [];
  for (const w of wanted) {
    const k = key(w.chainId, w.token);
    if (out.has(k)) continue;
    const chain = deps.chains.find((c) => c.chainId === w.chainId);
    const known = chain && findToken(chain, w.token);
    if (known) out.set(k, { symbol: known.symbol, decimals: known.decimals });
    else if (w.token === zeroAddress) out.set(k, { symbol: null, decimals: 18 });
    else missing.push(w);
  }
  if (missing.length === 0) return out;
  const stored = await storedTokenMetadata(deps.db, missing);
  for (const s of stored) out.set(key(s.chainId, s.address), { symbol: s.symbol, decimals: s.decimals });
  await Promise.all(
    missing
      .filter((w) => !out.has(key(w.chainId, w.token)))
      .map(async (w) => {
        const client = deps.clients.get(w.chainId);
        if (!client) return;
        let meta: Meta;
        try {
          const read = await within(readContractMetadata(client, w.token), RPC_BUDGET_MS);
          meta = { symbol: read.symbol, decimals: read.decimals };
        } catch (e) {
          // The RPC did not answer: try again next time. The contract answered, but not as an ERC-20: remember that.
          if (isTransportError(e) || e instanceof NoAnswer) return;
          meta = { symbol: null, decimals: null };
        }
        out.set(key(w.chainId, w.token), meta);
        await storeTokenMetadata(deps.db, { chainId: w.chainId, address: w.token, symbol: meta.symbol, decimals: meta.decimals });
      }),
  );
  return out;
}

/**
 * The unexpected funds of each payment of a page (REST list, GraphQL): one grouped query over the indexed
 * transfers, one over the recoveries, one Multicall3 batch per chain for the native coin,
 * and metadata reads only for tokens never seen before. Every payment gets an entry (an empty array when none).
 */
export async function unexpectedFundsOf(
  deps: Deps,
  refs: PaymentRef[],
  screening: FundsScreening,
): Promise<Map<string, UnexpectedFunds[]>> {
  const out = new Map<string, UnexpectedFunds[]>(refs.map((p) => [p.id, []]));
  if (refs.length === 0) return out;
  const [tokens, native, recoveries, blocked] = await Promise.all([
    indexedBalances(deps, refs),
    unexpectedNativeBalances(deps, refs),
    latestRecoveries(
      deps,
      refs.map((p) => p.id),
    ),
    // Funds sanctions screening holds (or the operator rejected) cannot be recovered: recover answers 409.
    screening.blockedFunds(
      deps.db.pool,
      refs.map((p) => p.id),
    ),
  ]);

  type Entry = { p: PaymentRef; token: Hex; units: bigint; recovery: RecoveryView | undefined };
  const entries: Entry[] = [];
  for (const p of refs) {
    const k = key(p.chain_id, p.recipient_address);
    const balances = new Map(tokens.get(k) ?? []);
    const nativeBalance = native.get(k);
    if (nativeBalance !== undefined) balances.set(zeroAddress, nativeBalance);
    const recovered = recoveries.get(p.id) ?? new Map<Hex, RecoveryView>();
    const listed = [...balances].filter(([token, units]) => units > 0n && countsAsUnexpected(p, token)).map(([token]) => token);
    // A token recovered (or being recovered) stays listed, with what is left of it.
    for (const token of new Set([...listed, ...recovered.keys()])) {
      const left = balances.get(token) ?? 0n;
      entries.push({ p, token, units: left > 0n && countsAsUnexpected(p, token) ? left : 0n, recovery: recovered.get(token) });
    }
  }

  const meta = await metadataOf(
    deps,
    entries.map((e) => ({ chainId: e.p.chain_id, token: e.token })),
    refs,
  );
  for (const e of entries) {
    const { symbol = null, decimals = null } = meta.get(key(e.p.chain_id, e.token)) ?? {};
    const open = e.recovery !== undefined && (OPEN_RECOVERY_STATUSES as readonly string[]).includes(e.recovery.status);
    const recovery = e.recovery && {
      ...e.recovery,
      recoveredAmount:
        e.recovery.recoveredUnits !== null && decimals !== null ? formatAmount(BigInt(e.recovery.recoveredUnits), decimals) : null,
    };
    out.get(e.p.id)!.push({
      token: getAddress(e.token),
      symbol,
      decimals,
      amount: decimals !== null ? formatAmount(BigInt(e.units), decimals) : null,
      units: e.units.toString(),
      recoverable: e.units > 0n && !open && !isBlocked(blocked, e.p.id, e.token),
      recovery: recovery ?? null,
    });
  }
  for (const list of out.values()) list.sort((a, b) => a.token.localeCompare(b.token));
  return out;
}

/** Symbol and decimals of one token of a payment's chain (as the list shows them). */
export async function tokenMetadataFor(deps: Deps, p: PaymentRef, token: Hex): Promise<Meta> {
  return (await metadataOf(deps, [{ chainId: p.chain_id, token }], [p])).get(key(p.chain_id, token)) ?? { symbol: null, decimals: null };
}

/** The recoverable balance of one token on one payment's address, read for a recovery request (RPC errors propagate). */
export async function recoverableUnits(deps: Deps, p: PaymentRef, token: Hex): Promise<bigint> {
  if (!countsAsUnexpected(p, token)) return 0n;
  if (token === zeroAddress) {
    const client = deps.clients.get(p.chain_id);
    if (!client) return 0n;
    // What the recovery sweeps and is charged on. A lagging provider answers "latest" with an older state (before the
    // last recovery's sweep, or before new funds): pinned, it fails there and another answers.
    return client.getBalance({ address: p.recipient_address as Address, blockNumber: await moneyBlock(deps.db, client, p.chain_id) });
  }
  const units = (await indexedBalances(deps, [p], token)).get(key(p.chain_id, p.recipient_address))?.get(token) ?? 0n;
  return units > 0n ? units : 0n;
}
