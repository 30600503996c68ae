import type { PublicClient } from "viem";
import { mockV3AggregatorAbi } from "../../abis/MockV3Aggregator.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine, logger } from "../../core/log.js";
import { normalizeOracleSymbol, OracleUnavailableError, type OraclePrice } from "./oracle.js";

// Chainlink price feeds (AggregatorV3Interface.latestRoundData) where the chain has one for the symbol (the registry's
// `priceFeeds`, PRICE_FEED_<chainId>_<SYMBOL>). A feed's answer is used only when it can be trusted now; otherwise the
// price is unavailable (creation answers 503 `Oracle price unavailable`), never a guess:
//   - answer > 0, and answeredInRound >= roundId (deprecated by Chainlink, harmless);
//   - updatedAt no older than the feed's heartbeat plus `marginS`, by the chain's own clock (the latest block's time);
//   - on an L2 with a sequencer uptime feed: the sequencer up (answer 0) for longer than `sequencerGraceS` (Chainlink's
//     example: 3600 s), so prices that could not be updated while it was down are not taken for current.
// The answer's decimals (8 for USD feeds) are scaled to 18 exactly.

const log = logger("chainlink");
/** Per client (each process's and each test's chains are their own), per feed. */
const decimalsOf = new WeakMap<PublicClient, Map<string, Promise<number>>>();

export type FeedCheck = { marginS: number; sequencerGraceS: number };

/** The configuration's feed checks (CHAINLINK_HEARTBEAT_MARGIN_S, SEQUENCER_GRACE_S): the same for a quote and the pusher. */
export function feedCheckOf(config: Pick<AppDeps["config"], "CHAINLINK_HEARTBEAT_MARGIN_S" | "SEQUENCER_GRACE_S">): FeedCheck {
  return { marginS: config.CHAINLINK_HEARTBEAT_MARGIN_S ?? 60, sequencerGraceS: config.SEQUENCER_GRACE_S ?? 3600 };
}

/**
 * The feed price of `symbol` on `chain`, 18 decimals; null when the chain has no feed for it. Throws
 * OracleUnavailableError when the feed (or the sequencer) cannot be read or trusted now.
 *
 * @example
 * const p = await readChainlinkPrice(client, chain, "ETH", { marginS: 60, sequencerGraceS: 3600 }); // { priceRaw, updatedAt, ... } | null
 */
export async function readChainlinkPrice(
  client: PublicClient,
  chain: ActiveChain,
  symbol: string,
  check: FeedCheck,
): Promise<OraclePrice | null> {
  const key = normalizeOracleSymbol(symbol);
  const feed = chain.priceFeeds?.[key];
  if (!feed) return null;
  const fail = (why: string, cause?: unknown): never => {
    log.warn({ chainId: chain.chainId, symbol: key, feed: feed.address, why }, "Chainlink price not used");
    throw new OracleUnavailableError(`Chainlink ${key}/USD on chain ${chain.chainId}: ${why}`, chain.chainId, { cause });
  };
  let block: Awaited<ReturnType<PublicClient["getBlock"]>>;
  let round: readonly [bigint, bigint, bigint, bigint, bigint];
  let sequencer: readonly [bigint, bigint, bigint, bigint, bigint] | null = null;
  let decimals: number;
  try {
    block = await client.getBlock({ blockTag: "latest" });
    // One state for all three reads: the block whose time the ages are counted from.
    const at = { blockNumber: block.number! };
    [round, sequencer, decimals] = await Promise.all([
      client.readContract({ address: feed.address, abi: mockV3AggregatorAbi, functionName: "latestRoundData", ...at }),
      chain.sequencerFeed
        ? client.readContract({ address: chain.sequencerFeed, abi: mockV3AggregatorAbi, functionName: "latestRoundData", ...at })
        : null,
      feedDecimals(client, feed.address),
    ]);
  } catch (e) {
    return fail(`read failed: ${firstLine(e)}`, e);
  }
  const now = block.timestamp;
  if (sequencer) {
    const [, down, startedAt] = sequencer;
    if (down !== 0n) return fail("the L2 sequencer is down");
    if (now - startedAt <= BigInt(check.sequencerGraceS))
      return fail(`the L2 sequencer came back ${now - startedAt} s ago (grace ${check.sequencerGraceS} s)`);
  }
  const [roundId, answer, , updatedAt, answeredInRound] = round;
  if (answer <= 0n) return fail(`answer ${answer} is not a price`);
  if (answeredInRound < roundId) return fail(`round ${roundId} not answered (answered in ${answeredInRound})`);
  const age = now - updatedAt;
  if (age > BigInt(feed.heartbeatS + check.marginS))
    return fail(`stale: updated ${age} s ago, heartbeat ${feed.heartbeatS} s (+${check.marginS} s margin)`);
  const priceRaw = decimals <= 18 ? answer * 10n ** BigInt(18 - decimals) : answer / 10n ** BigInt(decimals - 18);
  if (priceRaw <= 0n) return fail(`answer ${answer} rounds to 0 at 18 decimals`);
  return {
    symbol: key,
    priceRaw,
    updatedAt: new Date(Number(updatedAt) * 1000),
    chainId: chain.chainId,
    readAt: new Date(Number(now) * 1000),
  };
}

/** A feed's decimals, read once per process (they never change for a proxy's aggregator). */
function feedDecimals(client: PublicClient, address: `0x${string}`): Promise<number> {
  const key = address.toLowerCase();
  let known = decimalsOf.get(client);
  if (!known) decimalsOf.set(client, (known = new Map()));
  let d = known.get(key);
  if (!d) {
    d = client.readContract({ address, abi: mockV3AggregatorAbi, functionName: "decimals" }).then(Number);
    d.catch(() => known.delete(key));
    known.set(key, d);
  }
  return d;
}
