import fs from "node:fs";
import { getAddress, type Address } from "viem";
import { sanctionsOracleAbi } from "../../abis/SanctionsOracle.js";
import { moneyBlock } from "../../chains/money-block.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine } from "../../core/log.js";

// The sanctions sources of a chain (docs/sanctions.md): an on-chain oracle with `isSanctioned(address) returns (bool)`
// (the interface of Chainalysis's oracle; contracts/SanctionsOracle.sol on local chains) and address list files
// (SANCTIONS_LIST_FILE for every chain, SANCTIONS_LIST_FILE_<chainId> for one). A source answers which of some
// addresses it flags, or throws SourceUnavailable: the caller decides what an outage means (SANCTIONS_FAIL_MODE).

/** A source that could not answer (RPC down, no contract at the oracle's address, a list file missing or malformed). */
export class SourceUnavailable extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
  }
}

export type SanctionsSource = {
  /** `oracle:<address>` or `list:<path>`: recorded with every hold. */
  name: string;
  kind: "oracle" | "list";
  /** The lowercase addresses of `addresses` (lowercase) this source flags; throws SourceUnavailable. */
  check(addresses: string[]): Promise<Set<string>>;
};

/** Oracle answers kept per process (LRU), and per source the time before which a failed one is not asked again. */
type State = {
  cache: Map<string, { flagged: boolean; at: number }>;
  downUntil: Map<string, number>;
  lists: Map<string, { mtimeMs: number; size: number; flagged?: Set<string>; error?: string }>;
};
const states = new WeakMap<object, State>();
/** Most oracle answers remembered per process. */
const CACHE_MAX = 10_000;
/** After an oracle failed, it is asked again this much later (ms): an outage costs one call per chain, not one per pass. */
export const ORACLE_RETRY_MS = 5_000;

function stateOf(deps: Pick<AppDeps, "db">): State {
  let s = states.get(deps.db);
  if (!s) states.set(deps.db, (s = { cache: new Map(), downUntil: new Map(), lists: new Map() }));
  return s;
}

/** The configured sources of a chain, oracle first. None: nothing is screened on that chain. */
export function sourcesFor(deps: Pick<AppDeps, "db" | "config" | "clients" | "now">, chain: ActiveChain): SanctionsSource[] {
  const out: SanctionsSource[] = [];
  if (chain.sanctionsOracle) out.push(oracleSource(deps, chain, chain.sanctionsOracle));
  for (const file of [deps.config.SANCTIONS_LIST_FILE, chain.sanctionsListFile]) if (file) out.push(listSource(deps, file));
  return out;
}

function oracleSource(deps: Pick<AppDeps, "db" | "config" | "clients" | "now">, chain: ActiveChain, oracle: Address): SanctionsSource {
  const name = `oracle:${oracle.toLowerCase()}`;
  const state = stateOf(deps);
  const ttl = deps.config.SANCTIONS_CACHE_TTL_MS;
  return {
    name,
    kind: "oracle",
    async check(addresses) {
      const now = deps.now();
      const flagged = new Set<string>();
      const ask: string[] = [];
      for (const a of new Set(addresses)) {
        const key = `${chain.chainId}:${name}:${a}`;
        const hit = state.cache.get(key);
        if (hit && ttl > 0 && now - hit.at < ttl) {
          state.cache.delete(key); // most recently used last
          state.cache.set(key, hit);
          if (hit.flagged) flagged.add(a);
        } else ask.push(a);
      }
      if (!ask.length) return flagged;
      const down = state.downUntil.get(`${chain.chainId}:${name}`) ?? 0;
      if (now < down) throw new SourceUnavailable(name, "did not answer a moment ago; asked again shortly");
      let answers: boolean[];
      try {
        answers = await isSanctioned(deps, chain, oracle, ask as Address[]);
      } catch (e) {
        state.downUntil.set(`${chain.chainId}:${name}`, now + ORACLE_RETRY_MS);
        throw new SourceUnavailable(name, firstLine(e));
      }
      state.downUntil.delete(`${chain.chainId}:${name}`);
      for (const [i, a] of ask.entries()) {
        if (answers[i]) flagged.add(a);
        if (ttl > 0) {
          state.cache.set(`${chain.chainId}:${name}:${a}`, { flagged: answers[i]!, at: now });
          if (state.cache.size > CACHE_MAX) state.cache.delete(state.cache.keys().next().value!);
        }
      }
      return flagged;
    },
  };
}

/**
 * `isSanctioned` of each address: one Multicall3 batch (the chain's), an address the batch could not read asked
 * alone. Throws when any answer is missing (no contract at `oracle`, a revert, the RPC down): never a guess.
 */
async function isSanctioned(
  deps: Pick<AppDeps, "db" | "clients">,
  chain: ActiveChain,
  oracle: Address,
  addresses: Address[],
): Promise<boolean[]> {
  const client = deps.clients.get(chain.chainId);
  if (!client) throw new Error(`no RPC client for chain ${chain.chainId}`);
  // A lagging provider answers "latest" with an older oracle (an address listed since not flagged yet): pinned, it
  // fails there and another answers.
  const blockNumber = await moneyBlock(deps.db, client, chain.chainId);
  const read = (a: Address) =>
    client.readContract({ address: oracle, abi: sanctionsOracleAbi, functionName: "isSanctioned", args: [a], blockNumber });
  if (addresses.length === 1) return [await read(getAddress(addresses[0]!))];
  const results = await client.multicall({
    contracts: addresses.map(
      (a) => ({ address: oracle, abi: sanctionsOracleAbi, functionName: "isSanctioned", args: [getAddress(a)] }) as const,
    ),
    multicallAddress: chain.multicall3,
    allowFailure: true,
    blockNumber,
  });
  const out: boolean[] = [];
  for (const [i, r] of results.entries()) out.push(r.status === "success" ? r.result : await read(getAddress(addresses[i]!)));
  return out;
}

/**
 * An address list file: one address a line, anything after `#` a comment, blank lines ignored. Read again whenever
 * its modification time or size changes. A file that is missing, unreadable or has a line that is not an address is
 * unavailable as a whole (a typo must not silently drop a listed address).
 */
function listSource(deps: Pick<AppDeps, "db">, file: string): SanctionsSource {
  const name = `list:${file}`;
  const state = stateOf(deps);
  return {
    name,
    kind: "list",
    async check(addresses) {
      const list = loadList(state, file);
      if (list.error !== undefined) throw new SourceUnavailable(name, list.error);
      return new Set(addresses.filter((a) => list.flagged!.has(a)));
    },
  };
}

function loadList(state: State, file: string): { flagged?: Set<string>; error?: string } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (e) {
    return { error: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? firstLine(e)})` };
  }
  const known = state.lists.get(file);
  if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known;
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    return { error: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? firstLine(e)})` };
  }
  const parsed = parseSanctionsList(text);
  const entry = { mtimeMs: stat.mtimeMs, size: stat.size, ...parsed };
  state.lists.set(file, entry);
  return entry;
}

/** The lowercase addresses of a list file's text, or the first line that is not an address. */
export function parseSanctionsList(text: string): { flagged?: Set<string>; error?: string } {
  const flagged = new Set<string>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.split("#")[0]!.trim();
    if (!line) continue;
    if (!/^0x[0-9a-fA-F]{40}$/.test(line)) return { error: `line ${i + 1} is not an address` };
    flagged.add(line.toLowerCase());
  }
  return { flagged };
}
