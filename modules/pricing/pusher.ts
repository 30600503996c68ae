import { encodeFunctionData, zeroAddress, type Hex, type PublicClient } from "viem";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import { CHAINS } from "../../chains/registry.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { isReceiptNotFound, type TxSender } from "../../chains/tx-sender.js";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import { formatPrice18 } from "../../core/money.js";
import { withTransaction } from "../../db/client.js";
import { feedCheckOf, readChainlinkPrice } from "./chainlink.js";
import { normalizeOracleSymbol, OracleUnavailableError, readOracleAt } from "./oracle.js";
import { priceIndexFromConfig, type PriceIndexClient } from "./price-index.js";
import { transitionPush, type PushStatus } from "./push-transition.js";

// The price pusher keeps our own PriceOracle fresh where no Chainlink feed prices a symbol (the service chains; any
// symbol without a feed): each pass reads every kept symbol from its source (a Chainlink feed on any served chain,
// checked as for a quote, else the price index) and the oracle, and sets, in one `setPrices`, those that moved more
// than PRICE_PUSHER_DEVIATION_BPS or are older than PRICE_PUSHER_HEARTBEAT_S by the chain's clock. A symbol whose
// source has no price now is left as it is: it goes stale, and stale is unavailable (oracleMaxAgeS), never a guess.
// The transaction goes through the transaction sender (stored signed before broadcast, followed to the end); one at a
// time per chain, so a push that waits is replaced at higher fees, never raced by a second.

const log = logger("price-pusher");

type Deps = Pick<AppDeps, "db" | "config" | "chains" | "clients" | "now">;

/** What a pass did on a chain: the prices it set (symbol -> 18-decimal USD), or why it set none. */
export type PushPass =
  | { status: "pushed"; prices: Record<string, string>; sources: Record<string, string>; txHash: Hex }
  | { status: "waiting"; txHash: Hex }
  | { status: "fresh" }
  | { status: "no_oracle" };

type PushRow = { id: string; status: PushStatus; signer: string; nonce: number; tx_hash: Hex; raw_tx: Hex; block_number: string | null };

/**
 * Every symbol the pusher keeps: PRICE_PUSHER_SYMBOLS, else each registry symbol that is not a stablecoin (native coins
 * and tokens: what the oracle prices gas and payments with). Normalized (upper case, USDT0 -> USDT).
 */
export function pushedSymbols(config: Pick<AppDeps["config"], "PRICE_PUSHER_SYMBOLS">): string[] {
  const listed = config.PRICE_PUSHER_SYMBOLS?.split(",") ?? [
    ...CHAINS.flatMap((c) => [
      ...(c.native ? [c.native.oracleSymbol] : []),
      ...c.tokens.filter((t) => t.kind === "token").map((t) => t.oracleSymbol),
    ]),
  ];
  return [...new Set(listed.map(normalizeOracleSymbol).filter(Boolean))].sort();
}

/**
 * A symbol's price from the pusher's sources, 18 decimals: a served chain's Chainlink feed (trusted only as a quote
 * would trust it), else the price index (a native coin by its coin id, a registry token by its address on a covered
 * chain). Null when no source has one now.
 */
export async function pusherSourcePrice(
  deps: Deps,
  symbol: string,
  index: PriceIndexClient | null,
): Promise<{ price18: bigint; source: string } | null> {
  for (const chain of deps.chains) {
    const client = deps.clients.get(chain.chainId);
    if (!client || !chain.priceFeeds?.[symbol]) continue;
    try {
      const p = await readChainlinkPrice(client, chain, symbol, feedCheckOf(deps.config));
      if (p) return { price18: p.priceRaw, source: `chainlink:${chain.chainId}` };
    } catch (e) {
      if (!(e instanceof OracleUnavailableError)) throw e;
    }
  }
  if (!index) return null;
  const listings = CHAINS.filter((c) => c.priceIndexed).flatMap((c) => [
    ...(c.native?.oracleSymbol === symbol ? [{ chainId: c.chainId, address: zeroAddress as string }] : []),
    ...c.tokens
      .filter((t) => t.kind === "token" && t.address && t.oracleSymbol === symbol)
      .map((t) => ({ chainId: c.chainId, address: t.address! })),
  ]);
  for (const l of listings) {
    const r = await index.tokenPrice(l.chainId, l.address);
    if (r.status === "ok") return { price18: r.value.priceUsd18, source: "index" };
  }
  return null;
}

/** Whether the oracle's `current` price (null: none) should be set to `next`, `ageS` after it was last set. */
export function needsPush(current: bigint | null, next: bigint, ageS: number, rule: { deviationBps: number; heartbeatS: number }): boolean {
  if (current === null || current === 0n) return true;
  if (ageS >= rule.heartbeatS) return true;
  const gap = next > current ? next - current : current - next;
  return gap * 10_000n > BigInt(rule.deviationBps) * current;
}

/**
 * One pass of the pusher on a chain (the processor runs it every PRICE_PUSHER_INTERVAL_MS): follows the push in flight,
 * and sends a new one when a kept symbol moved or aged past its rule. `sender` signs with the oracle's owner key.
 *
 * @example
 * await pushOraclePrices(deps, chain, txSender({ db, chain, client, account: pusherAccount })); // { status: "pushed", prices: { ETH: "3012000000000000000000" }, ... }
 */
export async function pushOraclePrices(
  deps: Deps,
  chain: ActiveChain,
  sender: TxSender,
  opts: { priceIndex?: PriceIndexClient | null } = {},
): Promise<PushPass> {
  const client = deps.clients.get(chain.chainId);
  if (!chain.oracle || !client) return { status: "no_oracle" };
  const open = await followPushes(deps, chain, client, sender);
  if (open) return { status: "waiting", txHash: open.tx_hash };

  const index = opts.priceIndex !== undefined ? opts.priceIndex : priceIndexFromConfig(deps.config);
  const rule = { deviationBps: deps.config.PRICE_PUSHER_DEVIATION_BPS ?? 50, heartbeatS: deps.config.PRICE_PUSHER_HEARTBEAT_S ?? 3600 };
  const prices: Record<string, string> = {};
  const sources: Record<string, string> = {};
  for (const symbol of pushedSymbols(deps.config)) {
    const [next, current] = await Promise.all([
      pusherSourcePrice(deps, symbol, index),
      readOracleAt(client, chain.chainId, chain.oracle, symbol),
    ]);
    if (!next) continue;
    const ageS = current ? (current.readAt.getTime() - current.updatedAt.getTime()) / 1000 : Infinity;
    if (!needsPush(current?.priceRaw ?? null, next.price18, ageS, rule)) continue;
    prices[symbol] = next.price18.toString();
    sources[symbol] = next.source;
  }
  const symbols = Object.keys(prices);
  if (!symbols.length) return { status: "fresh" };

  const oracle = chain.oracle.toLowerCase();
  const tx = await sender.sendTransaction({
    to: chain.oracle,
    data: encodeFunctionData({ abi: priceOracleAbi, functionName: "setPrices", args: [symbols, symbols.map((s) => BigInt(prices[s]!))] }),
    // Another replica's push in flight (it holds the same signer's lock): this pass sends nothing.
    claim: async (c) =>
      (await c.query(`SELECT 1 FROM oracle_pushes WHERE chain_id = $1 AND status IN ('signed', 'sent')`, [chain.chainId])).rowCount === 0,
    record: async (c, t) => {
      await c.query(
        `INSERT INTO oracle_pushes (chain_id, oracle, prices, sources, signer, nonce, tx_hash, raw_tx) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [chain.chainId, oracle, JSON.stringify(prices), JSON.stringify(sources), t.from, t.nonce, t.hash, t.rawTx],
      );
    },
    sent: async (t) => {
      await withTransaction(deps.db, async (c) => {
        const { rows } = await c.query<{ id: string }>(`SELECT id FROM oracle_pushes WHERE tx_hash = $1`, [t.hash]);
        if (rows[0]) await transitionPush(c, rows[0].id, { from: ["signed"], to: "sent", now: deps.now() });
      });
    },
  });
  if (!tx) return { status: "fresh" };
  log.info(
    {
      chainId: chain.chainId,
      txHash: tx.hash,
      prices: Object.fromEntries(symbols.map((s) => [s, formatPrice18(BigInt(prices[s]!))])),
      sources,
    },
    "oracle prices pushed",
  );
  return { status: "pushed", prices, sources, txHash: tx.hash };
}

/**
 * Follows this chain's pushes: an open one (signed, sent) through the sender's reconcile (mined, reverted, dropped, or
 * the same bytes again at higher fees); a mined one younger than the chain's finality is read again, and one a re-org
 * took away is `sent` again. Returns the push still open, if any.
 */
async function followPushes(deps: Deps, chain: ActiveChain, client: PublicClient, sender: TxSender): Promise<PushRow | null> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const { rows } = await deps.db.pool.query<PushRow>(
    `SELECT id, status, signer, nonce, tx_hash, raw_tx, block_number::text FROM oracle_pushes
      WHERE chain_id = $1 AND (status IN ('signed', 'sent') OR (status = 'mined' AND block_number > $2)) ORDER BY nonce`,
    [chain.chainId, (head - BigInt(chain.finalityBlocks)).toString()],
  );
  if (!rows.length) return null;
  const move = (id: string, from: PushStatus[], to: PushStatus, set?: Parameters<typeof transitionPush>[2]["set"]) =>
    withTransaction(deps.db, (c) => transitionPush(c, id, { from, to, set, now: deps.now() }));

  for (const r of rows.filter((r) => r.status === "mined")) {
    try {
      await client.getTransactionReceipt({ hash: r.tx_hash });
    } catch (e) {
      if (!isReceiptNotFound(e)) continue; // unknown now: next pass
      await move(r.id, ["mined"], "sent", { blockNumber: null });
      r.status = "sent";
    }
  }

  const open = rows.filter((r) => r.status === "signed" || r.status === "sent");
  const waiting: PushRow[] = [];
  await sender.reconcile(
    open.map((r) => ({ ...r, hash: r.tx_hash, rawTx: r.raw_tx, from: r.signer })),
    async (r, outcome) => {
      if (outcome.status === "mined") {
        await move(r.id, ["signed", "sent"], "mined", {
          blockNumber: outcome.receipt.blockNumber.toString(),
          txHash: outcome.receipt.transactionHash,
        });
      } else if (outcome.status === "reverted") {
        // Our own oracle reverts a push only when the key is not its owner (or a price does not fit): an operator's fix.
        log.error(
          { chainId: chain.chainId, txHash: r.hash, signer: r.signer },
          "price push reverted: is PRICE_PUSHER_PRIVATE_KEY the PriceOracle's owner?",
        );
        await move(r.id, ["signed", "sent"], "reverted", { error: `setPrices reverted in block ${outcome.receipt.blockNumber}` });
      } else if (outcome.status === "dropped") {
        await move(r.id, ["signed", "sent"], "dropped", { error: "its nonce went to another transaction: nothing set" });
      } else {
        if (r.status === "signed") await move(r.id, ["signed"], "sent");
        waiting.push(r);
      }
    },
  );
  return waiting[0] ?? null;
}

export type PushState = { chainId: number; lastPushAt: Date | null; lastTxHash: string | null; open: boolean; error: string | null };

/** Each chain's last push (mined) and whether one is in flight, for health and metrics. */
export async function pushStates(deps: Pick<AppDeps, "db" | "chains">): Promise<PushState[]> {
  const { rows } = await deps.db.pool.query<{
    chain_id: number;
    last_at: Date | null;
    last_tx: string | null;
    open: boolean;
    error: string | null;
  }>(
    `SELECT chain_id,
            max(updated_at) FILTER (WHERE status = 'mined') AS last_at,
            (array_agg(tx_hash ORDER BY updated_at DESC) FILTER (WHERE status = 'mined'))[1] AS last_tx,
            bool_or(status IN ('signed', 'sent')) AS open,
            (array_agg(error ORDER BY created_at DESC))[1] AS error
       FROM oracle_pushes GROUP BY chain_id`,
  );
  const byChain = new Map(rows.map((r) => [r.chain_id, r]));
  return deps.chains
    .filter((c) => c.oracle)
    .map((c) => {
      const r = byChain.get(c.chainId);
      return {
        chainId: c.chainId,
        lastPushAt: r?.last_at ?? null,
        lastTxHash: r?.last_tx ?? null,
        open: r?.open ?? false,
        error: r?.error ?? null,
      };
    });
}
