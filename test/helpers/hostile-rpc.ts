import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A hostile JSON-RPC provider for tests: an HTTP proxy in front of a real node (Anvil) that fails, mode by mode, the way
 * real providers do: 429 with Retry-After, a gateway's 502/503 page, requests never answered, a node N blocks behind
 * the chain, a node of another chain, a refused port. One instance is one provider; `log` says what each request got.
 *
 *   const rpc = await startHostileRpc({ upstream: anvil.rpcUrl });
 *   await rpc.setMode({ kind: "lag", blocks: 10 }); // eth_blockNumber is head - 10, newer blocks, txs and logs unseen
 */
export type HostileMode =
  | { kind: "ok" }
  | { kind: "rate_limit"; retryAfterS: number } // HTTP 429, Retry-After, a -32005 JSON-RPC error per request
  | { kind: "error_5xx"; status?: number } // 502 (default) or another status, with a gateway's HTML page
  | { kind: "hang" } // never answers; hung requests are answered under the next mode (dropped if it is `down`)
  | { kind: "lag"; blocks: number } // a node whose head is `blocks` behind the upstream head
  | { kind: "wrong_chain"; chainId: number } // eth_chainId / net_version name another chain
  | { kind: "down" }; // the port refuses connections (open ones are cut); any other mode listens on it again
export type HostileAnswer = "forwarded" | "lagged" | "wrong_chain" | "429" | "5xx" | "hang";
/** One JSON-RPC request (one per element of a batch). `lagged`: the lag mode changed the request or its answer. */
export type HostileLogEntry = { at: number; method: string; block?: string; client?: string; answered: HostileAnswer };
export type HostileRpc = {
  /** `http://127.0.0.1:<port>`, the same port for the proxy's whole life. */
  url: string;
  label: string;
  /** Applies to requests from now on; resolves once a `down` port is closed or a downed one listens again. */
  setMode(m: HostileMode): Promise<void>;
  mode(): HostileMode;
  log: HostileLogEntry[];
  close(): Promise<void>;
};

type Req = { jsonrpc?: string; id?: unknown; method: string; params?: unknown[] };
type Res = { jsonrpc: "2.0"; id: unknown; result?: unknown; error?: { code: number; message: string } };
type Filter = { fromBlock?: string; toBlock?: string; blockHash?: string };

/** Where the block argument is: state reads (an unknown block is an error) and block reads (an unknown block is null). */
const at = (i: number, ...methods: string[]) => Object.fromEntries(methods.map((m) => [m, i]));
const STATE_ARG = {
  ...at(1, "eth_getBalance", "eth_getCode", "eth_getTransactionCount", "eth_call", "eth_estimateGas", "eth_createAccessList"),
  ...at(2, "eth_getStorageAt", "eth_getProof"),
};
const BLOCK_ARG = at(
  0,
  "eth_getBlockByNumber",
  "eth_getBlockReceipts",
  "eth_getBlockTransactionCountByNumber",
  "eth_getTransactionByBlockNumberAndIndex",
);
const TAGS = new Set(["latest", "pending", "safe", "finalized", "earliest"]);

const hex = (n: bigint) => `0x${n.toString(16)}`;
const ok = (id: unknown, result: unknown): Res => ({ jsonrpc: "2.0", id, result });
const fail = (id: unknown, code: number, message: string): Res => ({ jsonrpc: "2.0", id, error: { code, message } });

function blockArg(r: Req | undefined): string | undefined {
  if (r?.method === "eth_getLogs" || r?.method === "eth_newFilter") {
    const f = (r.params?.[0] ?? {}) as Filter;
    return f.blockHash ?? `${f.fromBlock ?? "latest"}..${f.toBlock ?? "latest"}`;
  }
  const i = r ? (STATE_ARG[r.method] ?? BLOCK_ARG[r.method] ?? (r.method === "eth_feeHistory" ? 1 : undefined)) : undefined;
  const b = i === undefined ? undefined : r?.params?.[i];
  return b === undefined ? undefined : typeof b === "string" ? b : JSON.stringify(b);
}

export async function startHostileRpc(opts: { upstream: string; label?: string }): Promise<HostileRpc> {
  let current: HostileMode = { kind: "ok" };
  let closed = false;
  const log: HostileLogEntry[] = [];
  const hung = new Set<() => void>();
  /** Filter logs fetched from upstream above the lagging head: handed out by a later poll, once the head reaches them. */
  const held = new Map<string, unknown[]>();
  let ids = 0;

  const call = async (r: Req): Promise<Res> => {
    const res = await fetch(opts.upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...r, jsonrpc: "2.0" }),
    });
    return (await res.json()) as Res;
  };
  const upstream = async <T>(method: string, params: unknown[]): Promise<T> => {
    const r = await call({ id: `hostile-${++ids}`, method, params });
    if (r.error) throw new Error(`upstream ${method}: ${r.error.message}`);
    return r.result as T;
  };
  let headCache: { at: number; head: Promise<bigint> } | undefined;
  const head = () => {
    if (headCache && Date.now() - headCache.at < 100) return headCache.head;
    const entry = { at: Date.now(), head: upstream<string>("eth_blockNumber", []).then(BigInt) };
    entry.head.catch(() => headCache === entry && (headCache = undefined));
    return (headCache = entry).head;
  };
  const hashNumber = async (hash: string) => {
    const block = await upstream<{ number: string } | null>("eth_getBlockByHash", [hash, false]);
    return block ? BigInt(block.number) : undefined;
  };
  /** A block argument as a node whose head is `top` reads it (undefined: a hash upstream does not know either). */
  const numberOf = async (b: unknown, top: bigint): Promise<bigint | undefined> => {
    if (b === undefined || b === "latest" || b === "pending") return top;
    if (b === "earliest") return 0n;
    if (b === "safe" || b === "finalized") {
      const block = await upstream<{ number: string } | null>("eth_getBlockByNumber", [b, false]);
      return block && BigInt(block.number) < top ? BigInt(block.number) : top;
    }
    if (typeof b === "string") return b.length === 66 ? hashNumber(b) : BigInt(b);
    const o = (b ?? {}) as { blockNumber?: string; blockHash?: string };
    return o.blockNumber ? BigInt(o.blockNumber) : o.blockHash ? hashNumber(o.blockHash) : undefined;
  };

  /** Filter polls: logs above `top` are held back until a poll whose head has reached them (no lag: all handed out). */
  const poll = async (r: Req, top?: bigint): Promise<[Res, boolean]> => {
    const res = await call(r);
    if (!Array.isArray(res.result)) return [res, false];
    const changes = r.method === "eth_getFilterChanges";
    const all = [...((changes && held.get(String(r.params?.[0]))) || []), ...res.result] as { blockNumber?: string }[];
    const late = (x: { blockNumber?: string }) => top !== undefined && typeof x?.blockNumber === "string" && BigInt(x.blockNumber) > top;
    if (changes) held.set(String(r.params?.[0]), all.filter(late));
    const seen = all.filter((x) => !late(x));
    return [{ ...res, result: seen }, seen.length !== res.result.length];
  };

  /** One request as a node `blocks` behind the upstream head answers it; true if the lag changed anything. */
  const lagged = async (r: Req, blocks: number): Promise<[Res, boolean]> => {
    const upHead = await head();
    const top = upHead > BigInt(blocks) ? upHead - BigInt(blocks) : 0n;
    const p = [...(r.params ?? [])];
    const m = r.method;
    if (m === "eth_blockNumber") return [ok(r.id, hex(top)), true];
    const i = STATE_ARG[m] ?? BLOCK_ARG[m];
    if (i !== undefined) {
      const n = await numberOf(p[i], top);
      if (n !== undefined && n > top) return [m in STATE_ARG ? fail(r.id, -32000, "header not found") : ok(r.id, null), true];
      if (n === undefined || !(p[i] === undefined || TAGS.has(p[i] as string))) return [await call(r), false];
      p[i] = hex(n);
      return [await call({ ...r, params: p }), true];
    }
    if (m === "eth_getLogs") {
      const f = (p[0] ?? {}) as Filter;
      if (f.blockHash) {
        const n = await hashNumber(f.blockHash);
        return n !== undefined && n > top ? [fail(r.id, -32000, "unknown block"), true] : [await call(r), false];
      }
      const from = (await numberOf(f.fromBlock, top)) ?? 0n;
      if (from > top) return [ok(r.id, []), true];
      const to = (await numberOf(f.toBlock, top)) ?? top;
      const clamped = { ...f, fromBlock: hex(from), toBlock: hex(to < top ? to : top) };
      const changed = f.fromBlock !== clamped.fromBlock || f.toBlock !== clamped.toBlock;
      return [await call({ ...r, params: [clamped, ...p.slice(1)] }), changed];
    }
    if (m === "eth_getFilterChanges" || m === "eth_getFilterLogs") return poll(r, top);
    if (m === "eth_getTransactionReceipt" || m === "eth_getTransactionByHash" || m === "eth_getBlockByHash") {
      const res = await call(r);
      const got = res.result as { number?: string; blockNumber?: string } | null | undefined;
      const n = m === "eth_getBlockByHash" ? got?.number : got?.blockNumber;
      return typeof n === "string" && BigInt(n) > top ? [ok(r.id, null), true] : [res, false];
    }
    return [await call(r), false]; // eth_sendRawTransaction included: a lagging node still relays
  };

  const one = async (r: Req, mode: HostileMode): Promise<[Res, HostileAnswer]> => {
    if (mode.kind === "wrong_chain" && (r.method === "eth_chainId" || r.method === "net_version"))
      return [ok(r.id, r.method === "eth_chainId" ? hex(BigInt(mode.chainId)) : String(mode.chainId)), "wrong_chain"];
    if (mode.kind === "lag") {
      const [res, changed] = await lagged(r, mode.blocks);
      return [res, changed ? "lagged" : "forwarded"];
    }
    if (r.method === "eth_getFilterChanges" || r.method === "eth_getFilterLogs") return [(await poll(r))[0], "forwarded"];
    return [await call(r), "forwarded"];
  };

  const answer = async (body: string, client: string | undefined, res: http.ServerResponse) => {
    const at = Date.now();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(fail(null, -32700, "parse error")));
    }
    const batch = Array.isArray(parsed);
    const reqs = (batch ? parsed : [parsed]) as Req[];
    const note = (answered: HostileAnswer[]) =>
      reqs.forEach((r, i) =>
        log.push({ at, method: String(r?.method), block: blockArg(r), client, answered: answered[i] ?? answered[0]! }),
      );
    const mode = current;
    if (mode.kind === "hang" || mode.kind === "down") {
      note(["hang"]);
      const replay = () => void answer(body, client, res);
      hung.add(replay);
      res.on("close", () => hung.delete(replay));
      return;
    }
    if (mode.kind === "rate_limit") {
      note(["429"]);
      const errors = reqs.map((r) => fail(r?.id ?? null, -32005, "rate limit exceeded"));
      const headers = { "content-type": "application/json", "retry-after": String(mode.retryAfterS) };
      return res.writeHead(429, headers).end(JSON.stringify(batch ? errors : errors[0]));
    }
    if (mode.kind === "error_5xx") {
      note(["5xx"]);
      const status = mode.status ?? 502;
      const title = `${status} ${http.STATUS_CODES[status] ?? "Error"}`;
      const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
      return res.writeHead(status, { "content-type": "text/html" }).end(page);
    }
    try {
      const out = await Promise.all(reqs.map((r) => one(r, mode)));
      note(out.map(([, a]) => a));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(batch ? out.map(([r]) => r) : out[0]![0]));
    } catch (e) {
      res.writeHead(502, { "content-type": "text/plain" }).end(`${label}: upstream failed: ${(e as Error).message}`);
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const client = req.headers["x-chainpay-client"];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => void answer(Buffer.concat(chunks).toString(), Array.isArray(client) ? client.join(",") : client, res));
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(0);
  const label = opts.label ?? `hostile-rpc:${port}`;
  const shut = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections(); // keep-alive and hung connections too: callers see resets, then ECONNREFUSED
      hung.clear();
    });
  const relisten = async () => {
    // The port was ours a moment ago; retry briefly should another bind race us.
    for (let i = 0; ; i++) {
      try {
        return void (await listen(port));
      } catch (e) {
        if (i >= 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  let transition = Promise.resolve();

  return {
    url: `http://127.0.0.1:${port}`,
    label,
    log,
    mode: () => current,
    setMode(m) {
      current = m;
      transition = transition
        .catch(() => {})
        .then(async () => {
          if (closed) return;
          if (m.kind === "down" && server.listening) await shut();
          if (m.kind !== "down" && !server.listening) await relisten();
        });
      if (m.kind === "hang" || m.kind === "down") return transition;
      for (const replay of [...hung]) {
        hung.delete(replay);
        replay();
      }
      return transition;
    },
    async close() {
      closed = true;
      await transition.catch(() => {});
      if (server.listening) await shut();
      else hung.clear();
    },
  };
}
