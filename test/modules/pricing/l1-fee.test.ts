import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parseAbi, parseTransaction, parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ARBITRUM_NODE_INTERFACE, GAS_PRICE_ORACLE } from "../../../chains/registry.js";
import { startAnvil, type Anvil } from "../../../local/anvil.js";
import { deployLocalChain } from "../../../local/deploy.js";
import { computeFees, gasFeeUsd18 } from "../../../modules/payments/index.js";
import { resolveNativePriceUsd, sampleSweepTx } from "../../../modules/pricing/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The L1 data cost of a sweep (modules/pricing/l1-fee.ts) in a Gas Tank payment's fee: a Base-like Anvil (chain id
// 8453) with the GasPriceOracle stand-in at the predeploy's address, and an Arbitrum-like one (42161) with the
// NodeInterface stand-in, as local/deploy.ts places them.
vi.setConfig({ testTimeout: 120_000 });

const anvils: Anvil[] = [];
let svc: TestService;
beforeAll(async () => {
  const env: Record<string, string> = {};
  for (const chainId of [8453, 42161]) {
    const anvil = await startAnvil({ chainId });
    anvils.push(anvil);
    const d = await deployLocalChain({ chainId, rpcUrl: anvil.rpcUrl });
    Object.assign(env, {
      [`RPC_URL_${chainId}`]: anvil.rpcUrl,
      [`FACTORY_ADDRESS_${chainId}`]: d.factory,
      [`FACTORY_IMPLEMENTATION_${chainId}`]: d.implementation ?? "",
      [`ORACLE_ADDRESS_${chainId}`]: d.oracle!,
      [`MULTICALL3_ADDRESS_${chainId}`]: d.multicall3!,
      [`TOKEN_ADDRESS_${chainId}_USDC`]: d.tokens.USDC!,
      [`SANCTIONS_ORACLE_ADDRESS_${chainId}`]: "none",
      // An Anvil with the chain's id has none of its Chainlink feeds: ETH is priced by the PriceOracle deployed here.
      [`PRICE_FEED_${chainId}_ETH`]: "none",
      [`SEQUENCER_FEED_${chainId}`]: "none",
    });
  }
  svc = await startTestService({ processors: false, env });
});
afterAll(async () => {
  await svc?.stop();
  for (const a of anvils) await a.stop();
});

/** A Gas Tank payment of 25 USDC on `chainId`, and its stored row. */
async function gasTankPayment(chainId: number) {
  const chain = svc.deps.chains.find((c) => c.chainId === chainId)!;
  const m = await svc.newMerchant();
  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: String(chainId),
      token: chain.tokens.find((t) => t.symbol === "USDC")!.address,
      amount: "25",
      orderId: `l1-${chainId}`,
    },
  });
  expect(res.status).toBe(200);
  const { rows } = await svc.deps.db.pool.query(
    `SELECT gas_tank_fee_micros, price_usd, platform_fee_bps, promo_applied, amount_units FROM payments WHERE merchant_id = $1`,
    [m.id],
  );
  return { chain, client: svc.deps.clients.get(chainId)!, p: rows[0] };
}

/** The Gas Tank fee of that payment for a sweep of `gasUnits` L2 gas plus `l1FeeWei`, as computeFees makes it. */
async function expectedFee(chainId: number, p: any, gasUnits: bigint, l1FeeWei: bigint) {
  const gasPriceWei = await svc.deps.clients.get(chainId)!.getGasPrice();
  const native = (await resolveNativePriceUsd(svc.deps, chainId, undefined, { cached: true }))!;
  return computeFees({
    amountUnits: BigInt(p.amount_units),
    decimals: 6,
    priceUsd18: parseUnits(p.price_usd, 18),
    platformFeeBps: p.platform_fee_bps,
    agentFeeBps: 0,
    promo: p.promo_applied,
    gasFeeUsd18: gasFeeUsd18({ gasUnits, gasPriceWei, nativePriceUsd18: native.priceUsd18, l1FeeWei }),
    mode: "gasTank",
  }).gasTankFeeMicros;
}

it("a Gas Tank payment on Base pays the L1 data fee of its sweep on top of L2 gas, to the unit", async () => {
  const { chain, client, p } = await gasTankPayment(8453);
  // What the predeploy charges for one sweep's bytes (nothing mined since the quote: the same gas price).
  const l1FeeWei = await client.readContract({
    address: GAS_PRICE_ORACLE,
    abi: parseAbi(["function getL1Fee(bytes) view returns (uint256)"]),
    functionName: "getL1Fee",
    args: [sampleSweepTx(chain)],
  });
  expect(l1FeeWei).toBeGreaterThan(0n);
  expect(BigInt(p.gas_tank_fee_micros)).toBe(await expectedFee(8453, p, 135_000n, l1FeeWei));
  expect(await expectedFee(8453, p, 135_000n, l1FeeWei)).toBeGreaterThan(await expectedFee(8453, p, 135_000n, 0n)); // not lost in rounding
  console.log(`[measure] Base sweep: L1 data fee ${l1FeeWei} wei`);
});

it("on Arbitrum the sweep's gas includes the L1 component eth_estimateGas would (NodeInterface), to the unit", async () => {
  const { chain, client, p } = await gasTankPayment(42161);
  const { result } = await client.simulateContract({
    address: ARBITRUM_NODE_INTERFACE,
    abi: parseAbi(["function gasEstimateL1Component(address, bool, bytes) payable returns (uint64, uint256, uint256)"]),
    functionName: "gasEstimateL1Component",
    args: [chain.factory!, false, decodeTransaction(sampleSweepTx(chain))],
  });
  const l1Gas = result[0];
  expect(l1Gas).toBeGreaterThan(0n);
  expect(BigInt(p.gas_tank_fee_micros)).toBe(await expectedFee(42161, p, 135_000n + l1Gas, 0n));
  expect(await expectedFee(42161, p, 135_000n + l1Gas, 0n)).toBeGreaterThan(await expectedFee(42161, p, 135_000n, 0n));
  console.log(`[measure] Arbitrum sweep: L1 component ${l1Gas} gas on top of 135,000`);
});

/** The calldata of a serialized sample transaction. */
const decodeTransaction = (tx: `0x${string}`) => parseTransaction(tx).data!;
