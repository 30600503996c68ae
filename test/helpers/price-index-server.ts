import http from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { NATIVE_COIN_IDS, PRICE_INDEX_PLATFORMS } from "../../modules/pricing/index.js";

/**
 * A local stand-in of the price index provider speaking the CoinGecko v3 subset the adapter uses
 * (lib/pricing/price-index.ts), on 127.0.0.1 and a free port. Point PRICE_API_URL at `url`.
 *
 * Prices are given as JSON number literals (strings) and written into the body verbatim, so a test
 * can serve `0.000012345678901234` or `1.2e-7` exactly as a real provider would.
 *
 *   const px = await startPriceIndexServer();
 *   px.setToken(137, "0xabc…", { price: "1.0001", name: "Foo", symbol: "foo", decimals: 18, logo: "https://…" });
 *   px.setNative(137, "0.5");
 *   px.mode = "fail" | "hang" | "ok";
 */

export type StandInToken = {
  /** JSON number literal, or any raw JSON text (e.g. `"0"`, `-1`, `"abc"` quoted) to test malformed values; omitted = no price. */
  price?: string;
  name?: string;
  symbol?: string;
  decimals?: number | null;
  logo?: string;
};

export type PriceIndexServer = {
  /** Base URL to use as PRICE_API_URL (ends in /api/v3). */
  url: string;
  port: number;
  /** ok: answer; fail: HTTP 500 on every request; hang: never answer. */
  mode: "ok" | "fail" | "hang";
  /** Every request received: path with query, and the API key header if any. */
  requests: { path: string; apiKey?: string }[];
  setToken(chainIdOrPlatform: number | string, address: string, token: StandInToken | null): void;
  setNative(chainIdOrCoinId: number | string, price: string | null, meta?: Omit<StandInToken, "price" | "decimals">): void;
  reset(): void;
  close(): Promise<void>;
};

const platformOf = (p: number | string) => (typeof p === "number" ? (PRICE_INDEX_PLATFORMS[p] ?? `chain-${p}`) : p);
const coinOf = (p: number | string) => (typeof p === "number" ? (NATIVE_COIN_IDS[p] ?? `coin-${p}`) : p);

export async function startPriceIndexServer(opts: { port?: number } = {}): Promise<PriceIndexServer> {
  const tokens = new Map<string, StandInToken>(); // `${platform}:${address lowercase}`
  const natives = new Map<string, StandInToken>(); // coin id
  const hung = new Set<http.ServerResponse>();

  const metadataJson = (t: StandInToken, platform: string | null, address: string | null) => {
    const parts = [`"id":${JSON.stringify((t.symbol ?? "token").toLowerCase())}`];
    if (t.symbol !== undefined) parts.push(`"symbol":${JSON.stringify(t.symbol.toLowerCase())}`);
    if (t.name !== undefined) parts.push(`"name":${JSON.stringify(t.name)}`);
    if (t.logo !== undefined) {
      const l = JSON.stringify(t.logo);
      parts.push(`"image":{"thumb":${l},"small":${l},"large":${l}}`);
    }
    if (platform && address) {
      const dp = t.decimals === undefined || t.decimals === null ? "null" : String(t.decimals);
      parts.push(`"detail_platforms":{${JSON.stringify(platform)}:{"decimal_place":${dp},"contract_address":${JSON.stringify(address)}}}`);
    }
    parts.push(`"market_data":{"current_price":{${t.price !== undefined ? `"usd":${t.price},` : ""}"eur":1}}`);
    return `{${parts.join(",")}}`;
  };

  const send = (res: http.ServerResponse, status: number, body: string) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://localhost");
    const key = req.headers["x-cg-pro-api-key"] ?? req.headers["x-cg-demo-api-key"];
    api.requests.push({ path: u.pathname + u.search, apiKey: typeof key === "string" ? key : undefined });
    if (api.mode === "hang") {
      hung.add(res);
      res.on("close", () => hung.delete(res));
      return;
    }
    if (api.mode === "fail") return send(res, 500, `{"error":"internal error"}`);
    const path = u.pathname.replace(/^\/api\/v3/, "");
    let m: RegExpExecArray | null;
    if ((m = /^\/simple\/token_price\/([^/]+)$/.exec(path))) {
      if (u.searchParams.get("vs_currencies") !== "usd") return send(res, 400, `{"error":"vs_currencies"}`);
      const entries = (u.searchParams.get("contract_addresses") ?? "")
        .split(",")
        .map((a) => a.trim().toLowerCase())
        .filter(Boolean)
        .flatMap((a) => {
          const t = tokens.get(`${m![1]}:${a}`);
          return t?.price !== undefined ? [`${JSON.stringify(a)}:{"usd":${t.price}}`] : [];
        });
      return send(res, 200, `{${entries.join(",")}}`);
    }
    if (path === "/simple/price") {
      const entries = (u.searchParams.get("ids") ?? "")
        .split(",")
        .filter(Boolean)
        .flatMap((id) => {
          const t = natives.get(id);
          return t?.price !== undefined ? [`${JSON.stringify(id)}:{"usd":${t.price}}`] : [];
        });
      return send(res, 200, `{${entries.join(",")}}`);
    }
    if ((m = /^\/coins\/([^/]+)\/contract\/([^/]+)$/.exec(path))) {
      const address = m[2]!.toLowerCase();
      const t = tokens.get(`${m[1]}:${address}`);
      if (!t) return send(res, 404, `{"error":"coin not found"}`);
      return send(res, 200, metadataJson(t, m[1]!, address));
    }
    if ((m = /^\/coins\/([^/]+)$/.exec(path))) {
      const t = natives.get(m[1]!);
      if (!t) return send(res, 404, `{"error":"coin not found"}`);
      return send(res, 200, metadataJson(t, null, null));
    }
    return send(res, 404, `{"error":"not found"}`);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const api: PriceIndexServer = {
    url: `http://127.0.0.1:${port}/api/v3`,
    port,
    mode: "ok",
    requests: [],
    setToken(p, address, token) {
      const k = `${platformOf(p)}:${address.toLowerCase()}`;
      if (token) tokens.set(k, token);
      else tokens.delete(k);
    },
    setNative(p, price, meta) {
      const k = coinOf(p);
      if (price === null && !meta) natives.delete(k);
      else natives.set(k, { ...meta, ...(price !== null ? { price } : {}) });
    },
    reset() {
      tokens.clear();
      natives.clear();
      api.mode = "ok";
      api.requests.length = 0;
    },
    close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
  return api;
}

/**
 * `npx tsx test/helpers/price-index-server.ts [port]` runs the stand-in on its own for a local
 * stack (set PRICE_API_URL to the printed URL). Native coins are priced like the local oracle
 * (local/deploy.ts LOCAL_PRICES); tokens have no price, so the oracle and custom prices apply.
 */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { LOCAL_PRICES } = await import("../../local/deploy.js");
  const px = await startPriceIndexServer({ port: process.argv[2] ? Number(process.argv[2]) : undefined });
  for (const [chainId, symbol] of [
    [1, "ETH"],
    [137, "MATIC"],
    [56, "BNB"],
    [8453, "ETH"],
  ] as const) {
    const price = LOCAL_PRICES[symbol];
    if (price) px.setNative(chainId, price, { name: symbol, symbol });
  }
  console.log(`price index stand-in: PRICE_API_URL=${px.url}`);
  const stop = () => void px.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
