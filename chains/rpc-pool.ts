import PQueue from "p-queue";
import { firstLine } from "../core/log.js";
import {
  BaseError,
  custom,
  http,
  HttpRequestError,
  RpcError,
  RpcRequestError,
  TimeoutError,
  type EIP1193RequestFn,
  type Transport,
} from "viem";

// Several JSON-RPC providers for one chain behind one viem transport. Real providers rate-limit (HTTP 429, JSON-RPC
// -32005), time out, answer 5xx, lag behind the head, and now and then answer for another chain; each is one of:
//   ok            answers, within `maxLagBlocks` of the highest head any provider reported
//   lagging       its head more than `maxLagBlocks` behind: not used while one that is not can answer
//   rate_limited  said 429 / -32005: left alone until its Retry-After (or a doubling backoff) has passed
//   failing       5xx, timeouts, refused connections: left alone for a doubling backoff
//   wrong_chain   answered another chain id: never used again by this process
// Reads go to the first usable provider in order (the operator's order: put the one you pay for first) and move on
// at a provider's fault; an answer of the node itself (a revert, "nonce too low") is the answer, not a fault. A signed
// transaction is the same bytes everywhere, so it is sent to every usable provider at once.

/** What the pool knows of one provider. `label` names it without secrets (scheme, host and port only). */
export type ProviderView = {
  index: number;
  label: string;
  state: ProviderState;
  head: bigint | null;
  lagBlocks: number | null;
  lastError: string | null;
  /** When a backoff ends (rate_limited, failing), ms since the epoch. */
  until: number | null;
  latencyMs: number | null;
  requests: number;
  errors: number;
  /** The provider reads go to now. */
  inUse: boolean;
};
export type ProviderState = "ok" | "lagging" | "rate_limited" | "failing" | "wrong_chain";
export type FaultKind = "rate_limited" | "server" | "timeout" | "network" | "wrong_chain" | "missing_block";

/** Called for every request to a provider: metrics (core/rpc-metrics.ts) and tests listen. */
export type RpcObserver = {
  request?(e: { chainId: number; provider: string; method: string; ms: number; fault: FaultKind | null }): void;
};

export type RpcPoolOptions = {
  chainId: number;
  urls: string[];
  /** Requests per second per provider (one number for all, or one per URL); 0 or absent: no limit. */
  maxRps?: number[];
  timeoutMs?: number;
  /** Blocks behind the highest head before a provider counts as lagging. */
  maxLagBlocks?: number;
  /** How often every provider's head (and now and then its chain id) is read while the pool is in use. */
  probeIntervalMs?: number;
  /** Headers sent with each request (an identifying User-Agent, an API key header). */
  headers?: Record<string, string>;
  observer?: RpcObserver;
  now?: () => number;
};

/** A provider's URL without what may be secret: the path and query often hold an API key, the user info a password. */
export function providerLabel(url: string, index: number): string {
  return `${index + 1}:${urlHost(url)}`;
}

/** A URL's host and port, nothing of its path or query (where providers put keys); `invalid-url` when it is none. */
export function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "invalid-url";
  }
}

/** Methods whose answer is the same whichever provider gives it once sent: broadcast to all. */
const BROADCAST = new Set(["eth_sendRawTransaction"]);
/**
 * Methods whose `null` means "not seen": from a lagging provider that is no answer (a mined transaction's receipt it
 * has not reached would read as dropped), so another is asked, and with none in sync the read fails (next pass).
 */
const NOT_SEEN_IS_NULL = new Set([
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getBlockReceipts",
]);
const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
/** A chain id check every this many probes (and at start): a provider re-pointed at another chain is caught. */
const CHAIN_ID_EVERY = 30;
/** How long the first request waits for the first probe (a provider that hangs must not hold the start). */
const FIRST_PROBE_WAIT_MS = 1_000;

type Provider = {
  index: number;
  label: string;
  url: string;
  request: EIP1193RequestFn;
  queue: PQueue | null;
  head: bigint | null;
  wrongChain: number | null;
  faultUntil: number;
  faultKind: FaultKind | null;
  backoffMs: number;
  lastError: string | null;
  latencyMs: number | null;
  requests: number;
  errors: number;
};

/**
 * Why a request failed, as far as the provider is concerned: a fault of the provider (try another), or null when the
 * node answered (the caller's answer, whichever provider gives it).
 */
export function faultOf(e: unknown): { kind: FaultKind; retryAfterMs: number | null } | null {
  if (e instanceof BaseError && e.walk((x) => x instanceof TimeoutError)) return { kind: "timeout", retryAfterMs: null };
  // The HTTP answer behind the error (viem keeps a non-2xx status and its headers on it, JSON-RPC body or not).
  const httpish =
    e instanceof BaseError
      ? (e.walk((x) => x instanceof HttpRequestError || x instanceof RpcRequestError) as HttpRequestError | RpcRequestError | null)
      : null;
  const status = httpish?.status;
  const retryAfter = retryAfterMs(httpish?.headers?.get("retry-after") ?? null);
  const rpc =
    e instanceof BaseError
      ? (e.walk((x) => x instanceof RpcRequestError || x instanceof RpcError) as RpcError | RpcRequestError | null)
      : null;
  const msg = `${(e as BaseError).details ?? ""} ${rpc?.details ?? ""} ${(e as Error).message ?? ""}`;
  if (status === 429 || rpc?.code === -32005 || (rpc && /rate limit|too many requests|exceeded.*(quota|limit)/i.test(msg))) {
    const data = (rpc as { data?: { retryAfter?: unknown } } | null)?.data;
    return { kind: "rate_limited", retryAfterMs: retryAfter ?? (typeof data?.retryAfter === "number" ? data.retryAfter * 1000 : null) };
  }
  // No status: refused, reset or unreadable. Any other non-2xx (5xx, a 401 of a revoked key, ...) is the provider's.
  if (httpish instanceof HttpRequestError) return { kind: status === undefined ? "network" : "server", retryAfterMs: null };
  if (status !== undefined && status >= 400) return { kind: "server", retryAfterMs: null };
  if (rpc) {
    // A pinned read the provider cannot answer yet (it lags): another may.
    if (/header not found|unknown block|block not found|missing trie node|BlockOutOfRange/i.test(msg))
      return { kind: "missing_block", retryAfterMs: null };
    if (rpc.code === -32603 && /internal error|upstream|backend/i.test(msg)) return { kind: "server", retryAfterMs: null };
    // The node's own answer (a revert, "nonce too low", ...).
    return null;
  }
  // Anything else is not the node's answer.
  return { kind: "network", retryAfterMs: null };
}

/** `Retry-After` as seconds or an HTTP date, in ms (null when absent or unreadable). */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export type RpcPool = {
  transport: Transport;
  chainId: number;
  providers(): ProviderView[];
  /**
   * Reads every provider's chain id now: throws naming each one that answers for another chain; answers the labels of
   * those that did not answer (providers come and go: the probe checks them again later).
   */
  verifyChainIds(): Promise<{ unreachable: string[] }>;
  /**
   * One probe of every provider now: its head, and every 30th time its chain id. Requests start one by themselves
   * when the last is older than `probeIntervalMs`, so a pool nobody uses asks nothing (no timers to stop).
   */
  probe(): Promise<void>;
};

/**
 * The transport of a chain's public client over `urls`, with per-provider budgets, backoff and head tracking.
 *
 * @example
 * const pool = rpcPool({ chainId: 137, urls: ["https://polygon.example/KEY", "https://backup.example"] });
 * const client = createPublicClient({ transport: pool.transport });
 */
export function rpcPool(opts: RpcPoolOptions): RpcPool {
  const now = opts.now ?? Date.now;
  const timeout = opts.timeoutMs ?? 10_000;
  const maxLag = BigInt(opts.maxLagBlocks ?? 3);
  const providers: Provider[] = opts.urls.map((url, index) => {
    const rps = opts.maxRps?.[index] ?? opts.maxRps?.[0] ?? 0;
    return {
      index,
      label: providerLabel(url, index),
      url,
      request: http(url, { retryCount: 0, timeout, fetchOptions: opts.headers ? { headers: opts.headers } : undefined })({
        retryCount: 0,
      }).request,
      queue: rps > 0 ? new PQueue({ intervalCap: rps, interval: 1000, carryoverConcurrencyCount: true }) : null,
      head: null,
      wrongChain: null,
      faultUntil: 0,
      faultKind: null,
      backoffMs: 0,
      lastError: null,
      latencyMs: null,
      requests: 0,
      errors: 0,
    };
  });
  const highest = () =>
    providers.reduce<bigint | null>((h, p) => (p.wrongChain === null && p.head !== null && (h === null || p.head > h) ? p.head : h), null);
  const stateOf = (p: Provider): ProviderState => {
    if (p.wrongChain !== null) return "wrong_chain";
    if (p.faultUntil > now()) return p.faultKind === "rate_limited" ? "rate_limited" : "failing";
    const top = highest();
    if (top !== null && p.head !== null && top - p.head > maxLag) return "lagging";
    return "ok";
  };

  async function call(p: Provider, method: string, params: unknown): Promise<unknown> {
    const started = now();
    p.requests++;
    const run = () => p.request({ method, params } as never);
    try {
      const result = await (p.queue ? p.queue.add(run, { throwOnTimeout: true }) : run());
      const ms = now() - started;
      p.latencyMs = p.latencyMs === null ? ms : Math.round(p.latencyMs * 0.8 + ms * 0.2);
      p.backoffMs = 0;
      // An answer ends a failure at once (the probe asks failing providers); a rate limit lasts its Retry-After.
      if (p.faultKind !== "rate_limited" || p.faultUntil <= now()) {
        p.faultKind = null;
        p.faultUntil = 0;
      }
      if ((method === "eth_blockNumber" || method === "eth_getBlockByNumber") && result) noteHead(p, method, result);
      opts.observer?.request?.({ chainId: opts.chainId, provider: p.label, method, ms, fault: null });
      return result;
    } catch (e) {
      const fault = faultOf(e);
      opts.observer?.request?.({ chainId: opts.chainId, provider: p.label, method, ms: now() - started, fault: fault?.kind ?? null });
      if (fault && fault.kind !== "missing_block") {
        p.errors++;
        p.backoffMs = Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, p.backoffMs * 2));
        p.faultKind = fault.kind;
        p.faultUntil = now() + (fault.retryAfterMs ?? p.backoffMs);
        p.lastError = `${fault.kind}: ${firstLine(e)}`;
      }
      throw e;
    }
  }
  function noteHead(p: Provider, method: string, result: unknown) {
    const n =
      method === "eth_blockNumber"
        ? typeof result === "string" && BigInt(result)
        : typeof (result as { number?: unknown }).number === "string" && BigInt((result as { number: string }).number);
    if (typeof n === "bigint" && (p.head === null || n > p.head)) p.head = n;
  }

  /**
   * Usable providers, best first: in sync with a known head, in the operator's order; then those whose head is not
   * known yet; then lagging ones (only when nothing else answers).
   */
  function candidates(): Provider[] {
    const states = providers.map((p) => ({ p, state: stateOf(p) }));
    const inState = (state: ProviderState, head?: "known" | "unknown") =>
      states.filter((s) => s.state === state && (head === undefined || (s.p.head !== null) === (head === "known"))).map((s) => s.p);
    const usable = [...inState("ok", "known"), ...inState("ok", "unknown"), ...inState("lagging")];
    if (usable.length > 0) return usable;
    // Every provider is backing off: the one whose backoff ends first is tried anyway (never a wrong chain).
    const waiting = providers.filter((p) => p.wrongChain === null).sort((a, b) => a.faultUntil - b.faultUntil);
    return waiting.slice(0, 1);
  }

  let lastProbe = -Infinity;
  const probeEvery = opts.probeIntervalMs ?? 2_000;
  let firstProbe: Promise<void> | undefined;
  const request: EIP1193RequestFn = (async ({ method, params }: { method: string; params?: unknown }) => {
    if (!firstProbe) firstProbe = probe();
    else if (now() - lastProbe >= probeEvery) void probe();
    // The first request of a pool with a choice waits (a moment at most) for every provider's head: a lagging one
    // is known before anything is read from it.
    if (providers.length > 1) await Promise.race([firstProbe, sleep(FIRST_PROBE_WAIT_MS)]);
    if (BROADCAST.has(method)) return broadcast(method, params);
    const tried = new Set<Provider>();
    let last: unknown = new Error(`chain ${opts.chainId}: no RPC provider to ask`);
    // Each usable provider once; with a single provider, up to three tries (what a lone http transport retried).
    const attempts = Math.max(3, providers.length);
    for (let i = 0; i < attempts; i++) {
      const p = candidates().find((c) => !tried.has(c)) ?? (providers.length === 1 ? providers[0] : undefined);
      if (!p || p.wrongChain !== null) break;
      tried.add(p);
      try {
        const result = await call(p, method, params);
        if (result === null && NOT_SEEN_IS_NULL.has(method) && stateOf(p) === "lagging") {
          last = new Error(
            `chain ${opts.chainId}: ${method} found nothing at provider ${p.label}, which lags; no provider in sync answered`,
          );
          continue;
        }
        return result;
      } catch (e) {
        last = e;
        if (!faultOf(e)) throw e;
        if (providers.length === 1) await sleep(Math.min(1_000, 150 * 2 ** i));
      }
    }
    throw last;
  }) as EIP1193RequestFn;

  async function broadcast(method: string, params: unknown) {
    const targets = candidates();
    const results = await Promise.allSettled(targets.map((p) => call(p, method, params)));
    const ok = results.find((r) => r.status === "fulfilled");
    if (ok) return (ok as PromiseFulfilledResult<unknown>).value;
    // The node's own answer (underpriced, nonce too low, ...) says more than a provider's fault.
    const answered = results.find((r) => r.status === "rejected" && !faultOf(r.reason));
    throw (
      ((answered ?? results[0]) as PromiseRejectedResult | undefined)?.reason ?? new Error(`chain ${opts.chainId}: no RPC provider to ask`)
    );
  }

  let probes = 0;
  async function probe() {
    lastProbe = now();
    const checkChain = probes++ % CHAIN_ID_EVERY === 0;
    await Promise.all(
      providers
        // A failing provider is probed too (one cheap read), so it is used again as soon as it answers.
        .filter((p) => p.wrongChain === null && (p.faultUntil <= now() || p.faultKind !== "rate_limited"))
        .map(async (p) => {
          if (checkChain) await checkChainId(p).catch(() => {});
          if (p.wrongChain === null && (p.faultUntil <= now() || p.faultKind !== "rate_limited"))
            await call(p, "eth_blockNumber", []).catch(() => {});
        }),
    );
  }
  async function checkChainId(p: Provider) {
    const id = Number(BigInt((await call(p, "eth_chainId", [])) as string));
    if (id !== opts.chainId) {
      p.wrongChain = id;
      p.lastError = `wrong_chain: answers for chain ${id}, not ${opts.chainId}`;
      opts.observer?.request?.({ chainId: opts.chainId, provider: p.label, method: "eth_chainId", ms: 0, fault: "wrong_chain" });
    }
  }

  return {
    chainId: opts.chainId,
    transport: custom({ request }, { retryCount: 0, key: "rpc-pool", name: `RPC pool of chain ${opts.chainId}` }),
    providers: () => {
      const top = highest();
      const first = candidates()[0];
      return providers.map((p) => ({
        index: p.index,
        label: p.label,
        state: stateOf(p),
        head: p.head,
        lagBlocks: top !== null && p.head !== null ? Number(top - p.head) : null,
        lastError: p.lastError,
        until: p.faultUntil > now() ? p.faultUntil : null,
        latencyMs: p.latencyMs,
        requests: p.requests,
        errors: p.errors,
        inUse: p === first,
      }));
    },
    async verifyChainIds() {
      const wrong: string[] = [];
      const unreachable: string[] = [];
      await Promise.all(
        providers.map(async (p) => {
          try {
            await checkChainId(p);
          } catch {
            unreachable.push(p.label);
            return;
          }
          if (p.wrongChain !== null) wrong.push(`RPC provider ${p.label} of chain ${opts.chainId} answers for chain ${p.wrongChain}`);
        }),
      );
      if (wrong.length) throw new Error(`${wrong.join("; ")}: fix RPC_URL_${opts.chainId}`);
      return { unreachable };
    },
    probe,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
