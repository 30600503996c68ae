import { getAddress, type Address, type PublicClient } from "viem";
import { moneyBlock } from "../../chains/money-block.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";

// Who sent native coin to an address (docs/sanctions.md, "Who is screened"). The coin emits no log, so the blocks
// where the address's balance grew are found by bisection over historical balances (the balance of an address
// nothing has swept since `from` only grows), and the `from` of those blocks' transactions that sent coin straight to
// the address is a sender. The search starts at the block of the subject's creation (the payment's `created_at`,
// found from block timestamps, SANCTIONS_NATIVE_LOOKBACK_BLOCKS earlier for clock differences), or after the last
// sweep of the coin from the address: the address was never shown before that, so nothing before it is missed.
// What cannot be attributed is returned as `unidentified`: coin already there at the start, or coin that arrived
// without a transaction to the address (a contract's internal transfer). Needs the node's state back to the start
// (an archive node, or a node whose state window covers it); a failed read throws.

export type NativeSenders = {
  /** Lowercase addresses. */
  senders: string[];
  /** What arrived without an identifiable sender, one line each (empty: every wei is attributed). */
  unidentified: string[];
};

/** RPC calls one search may take (balances and blocks); past it the search gives up (throws). */
const NATIVE_MAX_CALLS = 200;
/** Block headers read to find the creation block (once per address and process). */
const HEADER_MAX_CALLS = 80;
/** The newest blocks are searched again on the next call (a re-org may have replaced them). */
const REORG_MARGIN = 64n;
/** Searches remembered per process (each up to its settled block), so a re-screen reads only the new blocks. */
const MEMO_MAX = 5_000;

type Found = { block: bigint; senders: string[]; unidentified?: string };
type Memo = { upTo: bigint; found: Found[]; before?: string };
const memos = new WeakMap<object, Map<string, Memo>>();
const starts = new WeakMap<object, Map<string, bigint>>();

function mapOf<T>(store: WeakMap<object, Map<string, T>>, owner: object): Map<string, T> {
  let m = store.get(owner);
  if (!m) store.set(owner, (m = new Map()));
  return m;
}

/**
 * The senders of the native coin on `address` since `since` (the subject's creation time), or since block
 * `fromBlock` when that is later (the block of the last sweep of the coin from the address). Throws when the chain
 * cannot be read (no state that far back, the RPC down, more than NATIVE_MAX_CALLS calls).
 */
export async function nativeSenders(
  deps: Pick<AppDeps, "db" | "clients" | "config">,
  chain: ActiveChain,
  q: { address: string; since: Date; fromBlock?: bigint },
): Promise<NativeSenders> {
  const client = deps.clients.get(chain.chainId);
  if (!client) throw new Error(`no RPC client for chain ${chain.chainId}`);
  const address = getAddress(q.address);
  // Searched up to the indexer's block at least (the deposit a payment was counted on is in it): a lagging provider's
  // "latest" would end the search before that deposit. Its reads are pinned: it fails there and another answers.
  const head = await moneyBlock(deps.db, client, chain.chainId);
  const created = await creationBlock(deps, chain, client, address, q.since, head);
  const lo = q.fromBlock !== undefined && q.fromBlock > created ? q.fromBlock : created;
  const memoKey = `${chain.chainId}:${address.toLowerCase()}:${lo}`;
  const cache = mapOf(memos, deps.db);
  const memo = cache.get(memoKey);
  const search = balanceSearch(client, address);

  let from = lo;
  let found: Found[] = [];
  let before: string | undefined;
  if (memo && memo.upTo >= lo && memo.upTo <= head) {
    from = memo.upTo;
    found = [...memo.found];
    before = memo.before;
  } else {
    const start = await search.balanceAt(lo);
    if (start > 0n) before = `${start} wei was already on the address at block ${lo}, where the search starts`;
  }
  for (const { block, increase } of await search.blocksWhereBalanceGrew(from, head)) {
    search.spend();
    const b = await client.getBlock({ blockNumber: block, includeTransactions: true });
    const senders: string[] = [];
    let direct = 0n;
    for (const tx of b.transactions)
      if (tx.to && tx.to.toLowerCase() === address.toLowerCase() && tx.value > 0n) {
        senders.push(tx.from.toLowerCase());
        direct += tx.value;
      }
    found.push({
      block,
      senders,
      unidentified:
        direct < increase
          ? `block ${block}: ${increase - direct} wei arrived without a transaction to the address (a contract's internal transfer)`
          : undefined,
    });
  }
  const settled = head > REORG_MARGIN ? head - REORG_MARGIN : 0n;
  if (settled >= from) {
    if (cache.size >= MEMO_MAX) cache.delete(cache.keys().next().value!);
    cache.delete(memoKey);
    cache.set(memoKey, { upTo: settled, found: found.filter((f) => f.block <= settled), before });
  }
  return {
    senders: [...new Set(found.flatMap((f) => f.senders))],
    unidentified: [...(before ? [before] : []), ...found.flatMap((f) => (f.unidentified ? [f.unidentified] : []))],
  };
}

/**
 * The block where the search for `address` starts: the newest block whose timestamp is at or before `since`, less
 * SANCTIONS_NATIVE_LOOKBACK_BLOCKS (the app's clock and the chain's may differ). Found by galloping back from the
 * head over block headers (kept by any node), then bisection; remembered per address.
 */
async function creationBlock(
  deps: Pick<AppDeps, "db" | "config">,
  chain: ActiveChain,
  client: PublicClient,
  address: Address,
  since: Date,
  head: bigint,
): Promise<bigint> {
  const cache = mapOf(starts, deps.db);
  const key = `${chain.chainId}:${address.toLowerCase()}:${since.getTime()}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const target = BigInt(Math.floor(since.getTime() / 1000));
  let calls = 0;
  const timeOf = async (n: bigint) => {
    if (++calls > HEADER_MAX_CALLS)
      throw new Error(`finding the block of ${since.toISOString()} needed more than ${HEADER_MAX_CALLS} calls`);
    return (await client.getBlock({ blockNumber: n })).timestamp;
  };
  let at: bigint;
  if ((await timeOf(head)) <= target) at = head;
  else {
    // timeOf(hi) > target; gallop back until timeOf(lo) <= target (or block 0).
    let hi = head;
    let lo = head;
    let step = 1n;
    for (;;) {
      lo = hi > step ? hi - step : 0n;
      if ((await timeOf(lo)) <= target || lo === 0n) break;
      hi = lo;
      step *= 2n;
    }
    while (hi - lo > 1n) {
      const m = (lo + hi) / 2n;
      if ((await timeOf(m)) <= target) lo = m;
      else hi = m;
    }
    at = lo;
  }
  const back = BigInt(deps.config.SANCTIONS_NATIVE_LOOKBACK_BLOCKS);
  const start = at > back ? at - back : 0n;
  if (cache.size >= MEMO_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, start);
  return start;
}

/** Historical balances of one address, memoised, with a budget of RPC calls. */
function balanceSearch(client: PublicClient, address: Address) {
  const known = new Map<bigint, bigint>();
  let calls = 0;
  const spend = () => {
    if (++calls > NATIVE_MAX_CALLS) throw new Error(`native sender search of ${address} needed more than ${NATIVE_MAX_CALLS} RPC calls`);
  };
  const balanceAt = async (block: bigint) => {
    let b = known.get(block);
    if (b === undefined) {
      spend();
      known.set(block, (b = await client.getBalance({ address, blockNumber: block })));
    }
    return b;
  };
  /** Blocks in (lo, hi] where the balance is above the block before's, with the increase (the balance only grows). */
  const blocksWhereBalanceGrew = async (lo: bigint, hi: bigint) => {
    const out: { block: bigint; increase: bigint }[] = [];
    const walk = async (a: bigint, b: bigint) => {
      if (b <= a) return;
      const [ba, bb] = [await balanceAt(a), await balanceAt(b)];
      if (ba === bb) return;
      if (b - a === 1n) {
        if (bb > ba) out.push({ block: b, increase: bb - ba });
        return;
      }
      const m = (a + b) / 2n;
      await walk(a, m);
      await walk(m, b);
    };
    await walk(lo, hi);
    return out;
  };
  return { balanceAt, blocksWhereBalanceGrew, spend };
}
