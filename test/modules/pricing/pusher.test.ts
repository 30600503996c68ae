import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createPublicClient,
  createWalletClient,
  http,
  parseEther,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { priceOracleAbi, priceOracleBytecode } from "../../../abis/PriceOracle.js";
import { startApiServer } from "../../../api/server.js";
import { txSender } from "../../../chains/tx-sender.js";
import { startAnvil, type Anvil } from "../../../local/anvil.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { pushOraclePrices, type PushPass } from "../../../modules/pricing/index.js";
import { pricePusher } from "../../../processors/price-pusher.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";

// The price pusher (modules/pricing/pusher.ts) on an Anvil of this file's own as chain 56 with a PriceOracle of its own
// (owned by the pusher's key) and no Chainlink feed: it copies the price index into the oracle when a price moves past
// PRICE_PUSHER_DEVIATION_BPS, or ages past PRICE_PUSHER_HEARTBEAT_S by the chain's clock, through the transaction
// sender (a stored row per push, followed to `mined`). With the index down and the oracle older than its limit
// (ORACLE_MAX_AGE_S, by default the heartbeat plus 10 minutes), there is no price: 503 and no payment row.
vi.setConfig({ testTimeout: 60_000 });

const HEARTBEAT_S = 600;
const pusherKey = generatePrivateKey();
const pusher = privateKeyToAccount(pusherKey);

let anvil: Anvil;
let pub: PublicClient;
let index: PriceIndexServer;
let oracle: Address;
let deps: TestDeps;
let api: Awaited<ReturnType<typeof startApiServer>>;
let apiKey: string;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 56, blockTime: 0 });
  pub = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
  await pub.request({ method: "anvil_setBalance" as any, params: [pusher.address, toHex(parseEther("10"))] as any });
  const wallet = createWalletClient({ transport: http(anvil.rpcUrl), account: pusher });
  const hash = await wallet.deployContract({ abi: priceOracleAbi, bytecode: priceOracleBytecode, args: [pusher.address], chain: null });
  oracle = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  index = await startPriceIndexServer();
  index.setNative(56, "600");
  index.setNative(1, "3000");
  deps = await createTestDeps({
    env: {
      RPC_URL_56: anvil.rpcUrl,
      ORACLE_ADDRESS_56: oracle,
      // A payment's deposit address is computed from the factory's address; nothing here is swept.
      FACTORY_ADDRESS_56: "0x00000000000000000000000000000000000000F1",
      PRICE_FEED_56_BNB: "none",
      RPC_URL_777177: "", // this file's chain alone: the run's oracles are not this pusher's
      RPC_URL_137: "",
      PRICE_API_URL: index.url,
      PRICE_PUSHER_PRIVATE_KEY: pusherKey,
      PRICE_PUSHER_SYMBOLS: "BNB,ETH",
      PRICE_PUSHER_DEVIATION_BPS: "100",
      PRICE_PUSHER_HEARTBEAT_S: String(HEARTBEAT_S),
      PRICE_CACHE_TTL_MS: "0",
    },
  });
  api = await startApiServer(deps, 0, "127.0.0.1");
  const m = await createMerchant(deps.db, { name: "Pusher Shop" });
  apiKey = (await createApiKey(deps.db, m.id)).key;
});
afterAll(async () => {
  await api?.close();
  await deps?.cleanup();
  await index?.close();
  await anvil?.stop();
});

const chain = () => deps.chains.find((c) => c.chainId === 56)!;
const pass = (): Promise<PushPass> =>
  pushOraclePrices(deps, chain(), txSender({ db: deps.db, chain: chain(), client: deps.clients.get(56)!, account: pusher }));
const onChain = async (symbol: string) => {
  const [price, updatedAt] = await pub.readContract({ address: oracle, abi: priceOracleAbi, functionName: "getPrice", args: [symbol] });
  return { price, updatedAt };
};
const pushes = async () =>
  (await deps.db.pool.query(`SELECT status, prices, sources, tx_hash FROM oracle_pushes ORDER BY created_at`)).rows as {
    status: string;
    prices: Record<string, string>;
    sources: Record<string, string>;
    tx_hash: string;
  }[];
async function advance(seconds: number) {
  await pub.request({ method: "evm_increaseTime" as any, params: [toHex(seconds)] as any });
  await pub.request({ method: "evm_mine" as any, params: [] as any });
}
async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("the price pusher", () => {
  it("sets what the oracle lacks in one stored transaction, followed to mined; then nothing while prices hold", async () => {
    await pricePusher().run(deps); // the processor: one pass on every chain with an oracle
    const [first] = await pushes();
    expect(first).toMatchObject({
      prices: { ETH: parseUnits("3000", 18).toString(), BNB: parseUnits("600", 18).toString() },
      sources: { BNB: "index", ETH: "index" },
    });
    expect((await onChain("BNB")).price).toBe(parseUnits("600", 18));
    expect(await pass()).toEqual({ status: "fresh" });
    expect((await pushes()).map((p) => p.status)).toEqual(["mined"]);
    const { rows } = await deps.db.pool.query(`SELECT from_status, to_status FROM oracle_push_events ORDER BY id`);
    expect(rows.map((r) => `${r.from_status}->${r.to_status}`)).toEqual(["signed->sent", "sent->mined"]);
  });

  it("moves the oracle after a change beyond the threshold, and not before", async () => {
    index.setNative(56, "606"); // +1.0%: at the 100 bps threshold, not beyond
    expect(await pass()).toEqual({ status: "fresh" });
    expect((await onChain("BNB")).price).toBe(parseUnits("600", 18));

    index.setNative(56, "606.0001"); // just beyond
    const moved = await pass();
    expect(moved).toMatchObject({ status: "pushed", prices: { BNB: parseUnits("606.0001", 18).toString() } });
    expect(Object.keys((moved as { prices: object }).prices)).toEqual(["BNB"]); // ETH held: left as it was
    expect((await onChain("BNB")).price).toBe(parseUnits("606.0001", 18));
    expect(await pass()).toEqual({ status: "fresh" });
  });

  it("sets an unmoved price again once its heartbeat has passed on the chain's clock", async () => {
    await advance(HEARTBEAT_S - 5);
    expect(await pass()).toEqual({ status: "fresh" });
    await advance(10);
    expect(await pass()).toMatchObject({
      status: "pushed",
      prices: { ETH: parseUnits("3000", 18).toString(), BNB: parseUnits("606.0001", 18).toString() },
    });
    const block = await pub.getBlock();
    expect((await onChain("ETH")).updatedAt).toBe(block.timestamp);
  });

  it("with its source down, leaves the oracle to go stale; stale is no price: 503, no payment, GET /oracle/price 500", async () => {
    await pass(); // the heartbeat push followed to mined
    index.mode = "fail";
    const before = (await deps.db.pool.query(`SELECT count(*)::int AS n FROM payments`)).rows[0].n;
    const create = () =>
      call("POST", "/payments", {
        orderId: `push-${Math.random()}`,
        merchant: "0x00000000000000000000000000000000000000A1",
        chainId: "56",
        token: zeroAddress,
        amount: "10",
      });
    // Within the limit (heartbeat + 10 min), the oracle prices it while the index is down.
    const ok = await create();
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await advance(HEARTBEAT_S + 600 + 1);
    expect(await pass()).toEqual({ status: "fresh" }); // no source: nothing set, nothing guessed
    expect(await create()).toEqual({ status: 503, body: { error: "Oracle price unavailable" } });
    expect((await deps.db.pool.query(`SELECT count(*)::int AS n FROM payments`)).rows[0].n).toBe(before + 1);
    expect(await call("GET", "/oracle/price?symbol=BNB")).toEqual({ status: 500, body: { error: "Failed to fetch price" } });

    const health = (await call("GET", "/health")).body;
    expect(health.prices.find((p: { chainId: number }) => p.chainId === 56)).toMatchObject({ ok: false, status: "unavailable" });
    const lastTx = (await pushes()).at(-1)!.tx_hash;
    expect(health.pricePusher.find((p: { chainId: number }) => p.chainId === 56)).toMatchObject({ lastTxHash: lastTx, inFlight: false });

    // The source back: the next pass sets fresh prices and creation works again.
    index.mode = "ok";
    expect((await pass()).status).toBe("pushed");
    expect((await call("GET", "/oracle/price?symbol=BNB")).body).toMatchObject({ symbol: "BNB", priceUsd: "606.0001" });
  });
});
