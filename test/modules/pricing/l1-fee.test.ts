import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parseAbi, parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { GAS_PRICE_ORACLE } from "../../../chains/registry.js";
import { startAnvil, type Anvil } from "../../../local/anvil.js";
import { deployLocalChain } from "../../../local/deploy.js";
import { computeFees, gasFeeUsd18 } from "../../../modules/payments/index.js";
import { resolveNativePriceUsd, sampleSweepTx } from "../../../modules/pricing/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// An OP-stack chain's L1 data fee (modules/pricing/l1-fee.ts) in a Gas Tank payment's fee: a Base-like Anvil (chain
// id 8453) with the GasPriceOracle stand-in at the predeploy's address, as local/deploy.ts places it.
vi.setConfig({ testTimeout: 120_000 });

let anvil: Anvil;
let svc: TestService;
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  const d = await deployLocalChain({ chainId: 8453, rpcUrl: anvil.rpcUrl });
  svc = await startTestService({
    processors: false,
    env: {
      RPC_URL_8453: anvil.rpcUrl,
      FACTORY_ADDRESS_8453: d.factory,
      FACTORY_IMPLEMENTATION_8453: d.implementation ?? "",
      ORACLE_ADDRESS_8453: d.oracle!,
      MULTICALL3_ADDRESS_8453: d.multicall3!,
      TOKEN_ADDRESS_8453_USDC: d.tokens.USDC!,
      SANCTIONS_ORACLE_ADDRESS_8453: "none",
    },
  });
});
afterAll(async () => {
  await svc?.stop();
  await anvil?.stop();
});

it("a Gas Tank payment on Base pays the L1 data fee of its sweep on top of L2 gas, to the unit", async () => {
  const chain = svc.deps.chains.find((c) => c.chainId === 8453)!;
  const client = svc.deps.clients.get(8453)!;
  const m = await svc.newMerchant();
  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: "8453",
      token: chain.tokens.find((t) => t.symbol === "USDC")!.address,
      amount: "25",
      orderId: "base-l1",
    },
  });
  expect(res.status).toBe(200);
  const { rows } = await svc.deps.db.pool.query(
    `SELECT gas_tank_fee_micros, price_usd, platform_fee_bps, promo_applied, amount_units FROM payments WHERE merchant_id = $1`,
    [m.id],
  );
  const p = rows[0];

  // What the predeploy charges for one sweep's bytes, and L2 gas at the node's price (nothing mined since the quote).
  const l1FeeWei = await client.readContract({
    address: GAS_PRICE_ORACLE,
    abi: parseAbi(["function getL1Fee(bytes) view returns (uint256)"]),
    functionName: "getL1Fee",
    args: [sampleSweepTx(chain)],
  });
  expect(l1FeeWei).toBeGreaterThan(0n);
  const gasPriceWei = await client.getGasPrice();
  const native = (await resolveNativePriceUsd(svc.deps, 8453, undefined, { cached: true }))!;
  const fee = (l1: bigint) =>
    computeFees({
      amountUnits: BigInt(p.amount_units),
      decimals: 6,
      priceUsd18: parseUnits(p.price_usd, 18),
      platformFeeBps: p.platform_fee_bps,
      agentFeeBps: 0,
      promo: p.promo_applied,
      gasFeeUsd18: gasFeeUsd18({ gasUnits: 135_000n, gasPriceWei, nativePriceUsd18: native.priceUsd18, l1FeeWei: l1 }),
      mode: "gasTank",
    }).gasTankFeeMicros;
  expect(BigInt(p.gas_tank_fee_micros)).toBe(fee(l1FeeWei));
  expect(fee(l1FeeWei)).toBeGreaterThan(fee(0n)); // the L1 part is there, not lost in rounding
  console.log(`[measure] Base sweep: L1 data fee ${l1FeeWei} wei, L2 gas ${135_000n * gasPriceWei} wei`);
});
