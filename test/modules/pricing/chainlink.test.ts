import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPublicClient, createWalletClient, http, parseUnits, toHex, zeroAddress, type Address, type PublicClient } from "viem";
import { mockV3AggregatorAbi, mockV3AggregatorBytecode } from "../../../abis/MockV3Aggregator.js";
import { startApiServer } from "../../../api/server.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { startAnvil, type Anvil } from "../../../local/anvil.js";
import { ONE_USD18 } from "../../../core/money.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import { PROCESSING_FEE_USD18 } from "../../../modules/payments/index.js";
import { PriceUnavailableError, resolveNativePriceUsd } from "../../../modules/pricing/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { startPriceIndexServer, type PriceIndexServer } from "../../helpers/price-index-server.js";

// Prices from Chainlink feeds (modules/pricing/chainlink.ts), on Anvils of this file: Chainlink's own MockV3Aggregator
// deployed as the feed (and as an L2's sequencer uptime feed), read through latestRoundData() like the real ones. A
// payment priced by a feed converts exactly; a feed older than its heartbeat (the chain's clock moved with
// evm_increaseTime), a sequencer down or within its grace period, or an index price too far from the feed's, is no
// price at all: creation answers 503 `Oracle price unavailable` and writes nothing.
vi.setConfig({ testTimeout: 60_000 });

const HEARTBEAT_S = 120;
const MARGIN_S = 30;
/** 0.73456789 USD with the feed's 8 decimals: a price whose conversion is not round. */
const ANSWER = 73_456_789n;

let polygon: Anvil;
let base: Anvil;
let index: PriceIndexServer;

/** A chain of its own with a MockV3Aggregator deployed by Anvil's first account. */
async function feedOn(anvil: Anvil, decimals: number, answer: bigint) {
  const wallet = createWalletClient({ transport: http(anvil.rpcUrl), account: LOCAL_ROLES.deployer });
  const pub = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
  const hash = await wallet.deployContract({
    abi: mockV3AggregatorAbi,
    bytecode: mockV3AggregatorBytecode,
    args: [decimals, answer],
    chain: null,
  });
  const address = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  return {
    address,
    update: async (a: bigint) =>
      pub.waitForTransactionReceipt({
        hash: await wallet.writeContract({ address, abi: mockV3AggregatorAbi, functionName: "updateAnswer", args: [a], chain: null }),
      }),
  };
}
async function advance(anvil: Anvil, seconds: number) {
  const pub = createPublicClient({ transport: http(anvil.rpcUrl) });
  await pub.request({ method: "evm_increaseTime" as any, params: [toHex(seconds)] as any });
  await pub.request({ method: "evm_mine" as any, params: [] as any });
}

beforeAll(async () => {
  polygon = await startAnvil({ chainId: 137, blockTime: 0 });
  base = await startAnvil({ chainId: 8453, blockTime: 0 });
  index = await startPriceIndexServer();
});
afterAll(async () => {
  await polygon?.stop();
  await base?.stop();
  await index?.close();
});

describe("a Chainlink feed on chain 137 prices MATIC", () => {
  let deps: TestDeps;
  let api: Awaited<ReturnType<typeof startApiServer>>;
  let apiKey: string;
  let feed: Awaited<ReturnType<typeof feedOn>>;
  beforeAll(async () => {
    feed = await feedOn(polygon, 8, ANSWER);
    deps = await createTestDeps({
      env: {
        RPC_URL_137: polygon.rpcUrl,
        PRICE_FEED_137_MATIC: `${feed.address}:${HEARTBEAT_S}`,
        CHAINLINK_HEARTBEAT_MARGIN_S: String(MARGIN_S),
        PRICE_CACHE_TTL_MS: "0",
      },
    });
    api = await startApiServer(deps, 0, "127.0.0.1");
    const m = await createMerchant(deps.db, { name: "Feed Shop" });
    apiKey = (await createApiKey(deps.db, m.id)).key;
  });
  afterAll(async () => {
    await api?.close();
    await deps?.cleanup();
  });
  const create = async (amount = "10") => {
    const res = await fetch(`http://127.0.0.1:${api.port}/api/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({
        orderId: `feed-${Math.random()}`,
        merchant: "0x00000000000000000000000000000000000000A1",
        chainId: "137",
        token: zeroAddress,
        amount,
      }),
    });
    return { status: res.status, body: (await res.json()) as any, retryAfter: res.headers.get("retry-after") };
  };
  const count = async () => (await deps.db.pool.query(`SELECT count(*)::int AS n FROM payments`)).rows[0].n as number;

  it("a native payment is priced by the feed: its answer scaled to 18 decimals exactly, its source and time recorded", async () => {
    const res = await create("10");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = (res.body.url as string).split("/pay/")[1];
    const { rows } = await deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [id]);
    const p = rows[0];
    expect([p.price_usd, p.price_source]).toEqual(["0.73456789", "trusted_oracle"]);
    const pub = createPublicClient({ transport: http(polygon.rpcUrl) });
    const [, , , updatedAt] = await pub.readContract({ address: feed.address, abi: mockV3AggregatorAbi, functionName: "latestRoundData" });
    expect(p.price_updated_at.getTime()).toBe(Number(updatedAt) * 1000);
    // 0.10 USD of processing in MATIC (18 decimals) at 0.73456789 USD, rounded up: exact bigint arithmetic.
    const price18 = ANSWER * 10n ** 10n;
    expect(BigInt(p.processing_fee_units)).toBe((PROCESSING_FEE_USD18 * 10n ** 18n + price18 - 1n) / price18);
    expect(BigInt(p.amount_units)).toBe(parseUnits("10", 18));
  });

  it("older than its heartbeat (the chain's clock moved on): 503 Oracle price unavailable and no payment; fresh again once updated", async () => {
    const before = await count();
    await advance(polygon, HEARTBEAT_S + MARGIN_S + 1);
    const stale = await create();
    expect([stale.status, stale.body, stale.retryAfter]).toEqual([503, { error: "Oracle price unavailable" }, "5"]);
    expect(await count()).toBe(before);
    await feed.update(ANSWER);
    expect((await create()).status).toBe(200);
    expect(await count()).toBe(before + 1);
  });

  it("a feed answering 0 is no price (503), nor is a price index that disagrees by more than PRICE_MAX_DEVIATION_BPS", async () => {
    await feed.update(0n);
    expect((await create()).status).toBe(503);
    await feed.update(ANSWER);
    // The same chain read with the index provider as well, compared against the feed at 5%.
    const both = await createTestDeps({
      env: { ...deps.env, PRICE_API_URL: index.url, PRICE_MAX_DEVIATION_BPS: "500" },
    });
    try {
      index.setNative(137, "0.7"); // 4.7% under the feed: within 5%, the index's price is used
      expect((await resolveNativePriceUsd(both, 137))!).toMatchObject({ priceUsd: "0.7", source: "indexer" });
      index.setNative(137, "0.9"); // 22.5% over: neither is trusted
      await expect(resolveNativePriceUsd(both, 137)).rejects.toThrow(PriceUnavailableError);
      await expect(resolveNativePriceUsd(both, 137)).rejects.toThrow(/differ by more than 500 bps/);
    } finally {
      await both.cleanup();
    }
  });
});

describe("an L2 (chain 8453) with a sequencer uptime feed", () => {
  let deps: TestDeps;
  let price: Awaited<ReturnType<typeof feedOn>>;
  let sequencer: Awaited<ReturnType<typeof feedOn>>;
  beforeAll(async () => {
    price = await feedOn(base, 8, 3_000n * 10n ** 8n);
    sequencer = await feedOn(base, 0, 0n); // up (0) since now
    deps = await createTestDeps({
      env: {
        RPC_URL_8453: base.rpcUrl,
        PRICE_FEED_8453_ETH: `${price.address}:${HEARTBEAT_S}`,
        SEQUENCER_FEED_8453: sequencer.address,
        SEQUENCER_GRACE_S: "600",
        PRICE_CACHE_TTL_MS: "0",
      },
    });
  });
  afterAll(() => deps?.cleanup());
  const eth = () => resolveNativePriceUsd(deps, 8453);

  it("within the grace period after the sequencer came up: no price; past it: the feed's; sequencer down: no price", async () => {
    await expect(eth()).rejects.toThrow(/sequencer came back \d+ s ago \(grace 600 s\)/);
    await advance(base, 601);
    await price.update(3_000n * 10n ** 8n);
    expect((await eth())!).toMatchObject({ priceUsd: "3000", priceUsd18: 3000n * ONE_USD18, source: "trusted_oracle" });
    await sequencer.update(1n); // down
    await expect(eth()).rejects.toThrow(/the L2 sequencer is down/);
  });
});

// Not a price: an address with no code as a feed is a read failure, also unavailable (never "no price").
it("a feed address with no contract is unavailable, not absent", async () => {
  const deps = await createTestDeps({
    env: {
      RPC_URL_137: polygon.rpcUrl,
      PRICE_FEED_137_MATIC: `${"0x00000000000000000000000000000000000000F1" as Address}:60`,
      PRICE_CACHE_TTL_MS: "0",
    },
  });
  try {
    await expect(resolveNativePriceUsd(deps, 137)).rejects.toThrow(PriceUnavailableError);
  } finally {
    await deps.cleanup();
  }
});
