// The DLN stand-in (local/bridge/server.ts) and the solver (local/bridge/solver.ts) the run's stack starts on chains
// 137 and 777177: DLN's create-tx, status, order-ids and cancel-tx against our bridge contracts, with exact amounts.
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { encodeFunctionData, getAddress, parseEventLogs, zeroAddress, type Address, type Hex, type TransactionReceipt } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../../../abis/TestToken.js";
import { activeChains } from "../../../chains/runtime.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { bridgeDestinationAbi, bridgeSourceAbi, orderIdOf, TAKE, type BridgeOrder } from "../../../local/bridge/abi.js";
import { BRIDGE_FEE_BPS, OPERATING_EXPENSE_USD } from "../../../local/bridge/quote.js";
import { startBridgeStandIn } from "../../../local/bridge/server.js";
import { parsePrice18 } from "../../../core/money.js";
import { readOracleAt } from "../../../modules/pricing/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";

const env = inject("stackEnv");
const BASE = env.BRIDGE_API_URL!;
const chains = activeChains(env);
const chain137 = chains.find((c) => c.chainId === 137)!;
const chain777 = chains.find((c) => c.chainId === 777177)!;
const src = chainHelpers(chain137);
const dst = chainHelpers(chain777);
const USDC137 = src.token("USDC").address;
const USDC777 = dst.token("USDC").address;
const USDT777 = dst.token("USDT").address;
const OPEX18 = parsePrice18(OPERATING_EXPENSE_USD);
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const DEAD = "0x000000000000000000000000000000000000dEaD";
const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address;

async function get(path: string, query?: Record<string, string>) {
  const res = await fetch(`${BASE}${path}${query ? `?${new URLSearchParams(query)}` : ""}`);
  return { status: res.status, body: (await res.json()) as any };
}

/** create-tx query as the service's adapter sends it (a reverse market order to an exact amount). */
function orderQuery(p: { tokenIn: Address; tokenOut: Address; out: bigint; payer?: Address; receiver?: Address; authority?: Address }) {
  return {
    srcChainId: "137",
    srcChainTokenIn: p.tokenIn,
    srcChainTokenInAmount: "auto",
    dstChainId: "777177",
    dstChainTokenOut: p.tokenOut,
    dstChainTokenOutAmount: String(p.out),
    ...(p.receiver
      ? {
          dstChainTokenOutRecipient: p.receiver,
          senderAddress: p.payer!,
          srcChainOrderAuthorityAddress: p.payer!,
          dstChainOrderAuthorityAddress: p.authority!,
          srcChainRefundAddress: p.payer!,
        }
      : {}),
    prependOperatingExpenses: "true",
  };
}

/** The order a create-tx answer commits to, rebuilt from the query (the test's own reading of the interface). */
function expectedOrder(
  body: any,
  p: { tokenIn: Address; tokenOut: Address; out: bigint; payer: Address; receiver: Address; authority: Address },
) {
  const order: BridgeOrder = {
    nonce: BigInt(body.order.salt),
    maker: p.payer,
    giveChainId: 137n,
    giveToken: getAddress(p.tokenIn),
    giveAmount: BigInt(body.estimation.srcChainTokenIn.amount),
    takeChainId: 777177n,
    takeToken: getAddress(p.tokenOut),
    takeAmount: p.out,
    receiver: p.receiver,
    orderAuthorityDst: p.authority,
    refundTo: p.payer,
  };
  return order;
}

/** A payer on chain 137 approves (ERC-20) and sends the create-tx transaction; returns its hash. */
async function placeOrder(payer: ReturnType<typeof privateKeyToAccount>, tx: any): Promise<Hex> {
  const wallet = src.walletOf(payer);
  if (tx.allowanceTarget)
    await src.wait(
      await wallet.writeContract({
        address: USDC137,
        abi: testTokenAbi,
        functionName: "approve",
        args: [tx.allowanceTarget, BigInt(tx.allowanceValue)],
      }),
    );
  return (await src.wait(await wallet.sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value) }))).transactionHash;
}

/** Polls the status until `final`, returning each distinct status seen in order. */
async function followStatus(orderId: Hex, final: string): Promise<string[]> {
  const seen: string[] = [];
  await waitFor(
    async () => {
      const r = await get(`/v1.0/dln/order/${orderId}/status`);
      expect(r.status).toBe(200);
      expect(r.body.orderId).toBe(orderId);
      if (seen.at(-1) !== r.body.status) seen.push(r.body.status);
      return r.body.status === final;
    },
    { timeout: 45_000, interval: 50, what: `order ${final}` },
  );
  return seen;
}

const USDC_OUT = 10_000_000n; // 10 USDC
// 10 USDC at 1.00 + 0.3 % = 10.03, + 0.10 USD of operating expense = 10.13 USDC.
const USDC_IN = ceilDiv(USDC_OUT * (10_000n + BRIDGE_FEE_BPS), 10_000n) + ceilDiv(OPEX18 * 10n ** 6n, 10n ** 18n);

describe("create-tx", () => {
  it("returns DLN's estimation, a createOrder tx on BridgeSource and the order id, amounts exact", async () => {
    expect(USDC_IN).toBe(10_130_000n);
    const p = {
      tokenIn: USDC137,
      tokenOut: USDC777,
      out: USDC_OUT,
      payer: randomAddress(),
      receiver: randomAddress(),
      authority: randomAddress(),
    };
    const r = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    expect(r.status).toBe(200);
    const order = expectedOrder(r.body, p);
    expect(r.body).toEqual({
      estimation: {
        srcChainTokenIn: {
          address: USDC137,
          chainId: 137,
          decimals: 6,
          name: "USDC (local 137)",
          symbol: "USDC",
          amount: "10130000",
          approximateOperatingExpense: "100000",
          mutatedWithOperatingExpense: true,
        },
        dstChainTokenOut: {
          address: USDC777,
          chainId: 777177,
          decimals: 6,
          name: "USDC (local 777177)",
          symbol: "USDC",
          amount: "10000000",
          recommendedAmount: "10000000",
          maxTheoreticalAmount: "10000000",
        },
        recommendedSlippage: 0,
        costsDetails: [
          {
            chain: "137",
            tokenIn: USDC137,
            tokenOut: USDC137,
            amountIn: "10130000",
            amountOut: "10030000",
            type: "EstimatedOperatingExpenses",
            payload: { feeAmount: "100000" },
          },
          {
            chain: "137",
            tokenIn: USDC137,
            tokenOut: USDC137,
            amountIn: "10030000",
            amountOut: "10000000",
            type: "TakerMargin",
            payload: { feeAmount: "30000", feeBps: "30" },
          },
        ],
      },
      prependedOperatingExpenseCost: "100000",
      fixFee: "0",
      tx: {
        to: chain137.bridgeSource,
        data: encodeFunctionData({ abi: bridgeSourceAbi, functionName: "createOrder", args: [order] }),
        value: "0",
        allowanceTarget: chain137.bridgeSource,
        allowanceValue: "10130000",
      },
      orderId: orderIdOf(order),
      order: { approximateFulfillmentDelay: 3, salt: Number(order.nonce) },
    });
    // A millisecond timestamp, like DLN's salt; the next quote gets another one (another order id).
    expect(Math.abs(r.body.order.salt - Date.now())).toBeLessThan(60_000);
    const again = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    expect(again.body.order.salt).toBeGreaterThan(r.body.order.salt);
    expect(again.body.orderId).not.toBe(r.body.orderId);
    // Quoted, not created: known to the stand-in with status None.
    expect((await get(`/v1.0/dln/order/${r.body.orderId}/status`)).body).toEqual({ orderId: r.body.orderId, status: "None" });
  });

  it("prices a non-stablecoin with the chain's PriceOracle: native MATIC in, exact USDT out", async () => {
    const price = (await readOracleAt(src.pub as any, 137, chain137.oracle!, "MATIC"))!.priceRaw;
    expect(price).toBe(parsePrice18("0.5"));
    const out = 12_345_678n;
    // out (6 decimals, 1.00 USD) in MATIC (18 decimals) at `price`, + 0.3 %, rounded up; + 0.10 USD in MATIC, rounded up.
    const opex = ceilDiv(OPEX18 * 10n ** 18n, price);
    const amountIn = ceilDiv(out * 10n ** 18n * 10n ** 18n * (10_000n + BRIDGE_FEE_BPS), price * 10n ** 6n * 10_000n) + opex;
    expect(amountIn).toBe(24_965_430_068_000_000_000n); // 12.345678 USD / 0.50 = 24.691356, + 0.3 % = 24.765430068, + 0.2
    const p = {
      tokenIn: zeroAddress,
      tokenOut: USDT777,
      out,
      payer: randomAddress(),
      receiver: randomAddress(),
      authority: randomAddress(),
    };
    const r = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    expect(r.status).toBe(200);
    expect(r.body.estimation.srcChainTokenIn).toMatchObject({
      address: zeroAddress,
      chainId: 137,
      decimals: 18,
      symbol: "MATIC",
      amount: String(amountIn),
      approximateOperatingExpense: String(opex),
    });
    expect(r.body.estimation.dstChainTokenOut).toMatchObject({ address: USDT777, symbol: "USDT", amount: String(out) });
    // Native in: the value carries the escrow, nothing to approve.
    expect(r.body.tx).toEqual({
      to: chain137.bridgeSource,
      data: encodeFunctionData({ abi: bridgeSourceAbi, functionName: "createOrder", args: [expectedOrder(r.body, p)] }),
      value: String(amountIn),
    });
  });

  it("without recipient and authorities: an estimation only, no tx and no order id", async () => {
    const r = await get("/v1.0/dln/order/create-tx", orderQuery({ tokenIn: USDC137, tokenOut: USDC777, out: USDC_OUT }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["estimation", "fixFee", "order", "prependedOperatingExpenseCost"]);
    expect(r.body.estimation.srcChainTokenIn.amount).toBe("10130000");
    expect(r.body.estimation.dstChainTokenOut.amount).toBe("10000000");
    expect(r.body.order).toEqual({ approximateFulfillmentDelay: 3 });
  });

  it("answers DLN's error envelope (HTTP 400, errorCode, errorId, errorMessage)", async () => {
    const q = orderQuery({ tokenIn: USDC137, tokenOut: USDC777, out: USDC_OUT });
    const cases: [Record<string, string>, number, string, string][] = [
      [
        { ...q, dstChainId: "137", dstChainTokenOut: USDC137 },
        3,
        "SOURCE_AND_DESTINATION_CHAINS_ARE_EQUAL",
        "srcChainId and dstChainId must be different chains",
      ],
      [{ ...q, srcChainTokenIn: DEAD }, 4, "UNSUPPORTED_TOKEN_IN", `token ${DEAD} is not supported on chain 137`],
      [{ ...q, dstChainTokenOut: zeroAddress }, 5, "UNSUPPORTED_TOKEN_OUT", `token ${zeroAddress} is not supported on chain 777177`],
      [{ ...q, srcChainId: "1" }, 2, "INVALID_QUERY_PARAMETERS", "srcChainId must be one of the following values: 137, 777177"],
      [{ ...q, dstChainTokenOutAmount: "0" }, 2, "INVALID_QUERY_PARAMETERS", "dstChainTokenOutAmount must be positive"],
      [
        { ...q, dstChainTokenOutAmount: "auto" },
        2,
        "INVALID_QUERY_PARAMETERS",
        'exactly one of srcChainTokenInAmount and dstChainTokenOutAmount must be "auto"',
      ],
      [
        { ...q, dstChainTokenOutRecipient: randomAddress() },
        2,
        "INVALID_QUERY_PARAMETERS",
        "srcChainOrderAuthorityAddress, dstChainOrderAuthorityAddress should not be empty",
      ],
      [
        {
          ...q,
          dstChainTokenOutRecipient: randomAddress(),
          srcChainOrderAuthorityAddress: randomAddress(),
          dstChainOrderAuthorityAddress: randomAddress(),
        },
        7,
        "SENDER_ADDRESS_EMPTY",
        "senderAddress should not be empty",
      ],
      [
        { ...q, dstChainTokenOutRecipient: "0x1234" },
        2,
        "INVALID_QUERY_PARAMETERS",
        "dstChainTokenOutRecipient is not a valid EVM address",
      ],
    ];
    for (const [query, errorCode, errorId, errorMessage] of cases) {
      const r = await get("/v1.0/dln/order/create-tx", query);
      expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { errorCode, errorId, errorMessage } });
    }
    for (const missing of ["srcChainId", "srcChainTokenIn", "srcChainTokenInAmount", "dstChainId", "dstChainTokenOut"]) {
      const { [missing]: _, ...rest } = q as Record<string, string>;
      const r = await get("/v1.0/dln/order/create-tx", rest);
      expect({ status: r.status, body: r.body }).toEqual({
        status: 400,
        body: { errorCode: 2, errorId: "INVALID_QUERY_PARAMETERS", errorMessage: `${missing} should not be empty` },
      });
    }
    const bad = await get("/v1.0/dln/order/0x12/status");
    expect(bad).toEqual({
      status: 400,
      body: { errorCode: 2, errorId: "INVALID_QUERY_PARAMETERS", errorMessage: "id must be a 32-byte hex order id" },
    });
    const unknown = `0x${"ab".repeat(32)}`;
    expect(await get(`/v1.0/dln/order/${unknown}/status`)).toEqual({
      status: 404,
      body: { errorCode: 11, errorId: "ORDER_NOT_FOUND", errorMessage: `order ${unknown} not found` },
    });
  });
});

/** The source transaction that paid the order's escrow out (its ClaimedUnlock event), checked against the event. */
async function claimOf(orderId: Hex, amount: bigint): Promise<TransactionReceipt> {
  const [claimed] = await src.pub.getContractEvents({
    address: chain137.bridgeSource!,
    abi: bridgeSourceAbi,
    eventName: "ClaimedUnlock",
    args: { orderId },
    fromBlock: 0n,
  });
  expect(claimed!.args).toEqual({ orderId, beneficiary: LOCAL_ROLES.bridgeSolver.address, amount });
  return src.pub.getTransactionReceipt({ hash: claimed!.transactionHash });
}

// The run's solver serves other test files' orders at the same time: what it was paid for this order is read from
// this order's claim transaction, never from its balance.
describe("orders on chain with the solver", () => {
  let filled: { orderId: Hex; txHash: Hex } | undefined;

  it("a payer's order on 137 is fulfilled on 777177: the receiver gets exactly the amount, statuses Created -> Fulfilled -> ClaimedUnlock", async () => {
    const payer = await src.newPayer();
    const receiver = randomAddress();
    await src.mint("USDC", payer.address, 50_000_000n, payer);
    const p = { tokenIn: USDC137, tokenOut: USDC777, out: USDC_OUT, payer: payer.address, receiver, authority: randomAddress() };
    const q = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    expect(q.status).toBe(200);
    expect(q.body.estimation.srcChainTokenIn.amount).toBe(String(USDC_IN));

    const txHash = await placeOrder(payer, q.body.tx);
    const orderId: Hex = q.body.orderId;
    expect(await get(`/v1.0/dln/tx/${txHash}/order-ids`)).toEqual({ status: 200, body: { orderIds: [orderId] } });
    const seen = await followStatus(orderId, "ClaimedUnlock");
    expect(seen[0]).toBe("Created");
    expect(seen).toContain("Fulfilled");
    const order = ["Created", "Fulfilled", "SentUnlock", "ClaimedUnlock"];
    expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort((a, b) => a - b));
    expect(seen.every((s) => order.includes(s))).toBe(true);

    expect(await dst.balanceOf("USDC", receiver)).toBe(USDC_OUT);
    expect(await src.balanceOf("USDC", payer.address)).toBe(50_000_000n - USDC_IN);
    // The escrow went to the solver in the claim, and nothing else moved there.
    const transfers = parseEventLogs({ abi: testTokenAbi, eventName: "Transfer", logs: (await claimOf(orderId, USDC_IN)).logs });
    expect(transfers.map((t) => [getAddress(t.address), t.args])).toEqual([
      [USDC137, { from: chain137.bridgeSource, to: LOCAL_ROLES.bridgeSolver.address, value: USDC_IN }],
    ]);
    // The order's data in DLN's field names.
    expect((await get(`/v1.0/dln/order/${orderId}`)).body).toMatchObject({
      orderId,
      status: "ClaimedUnlock",
      orderStruct: {
        makerSrc: payer.address,
        giveOffer: { chainId: 137, tokenAddress: USDC137, amount: String(USDC_IN) },
        receiverDst: receiver,
        takeOffer: { chainId: 777177, tokenAddress: USDC777, amount: String(USDC_OUT) },
        orderAuthorityAddressDst: p.authority,
      },
      srcChainTxHash: txHash,
    });
    // A fulfilled order cannot be cancelled.
    expect(await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).toEqual({
      status: 400,
      body: {
        errorCode: 12,
        errorId: "ORDER_NOT_CANCELLABLE",
        errorMessage: `order ${orderId} cannot be cancelled: only an unfulfilled order created on the source can`,
      },
    });
    filled = { orderId, txHash };
  });

  it("native MATIC in: the receiver gets exactly the USDT out and the solver the escrowed MATIC", async () => {
    const payer = await src.newPayer();
    const receiver = randomAddress();
    const out = 2_500_000n;
    const q = await get(
      "/v1.0/dln/order/create-tx",
      orderQuery({ tokenIn: zeroAddress, tokenOut: USDT777, out, payer: payer.address, receiver, authority: randomAddress() }),
    );
    const amountIn = BigInt(q.body.tx.value);
    await placeOrder(payer, q.body.tx);
    await followStatus(q.body.orderId, "ClaimedUnlock");
    expect(await dst.balanceOf("USDT", receiver)).toBe(out);
    // The solver gets the whole escrow on 137 (as messenger it sent the claim): the one value transfer of the claim.
    const claim = await claimOf(q.body.orderId, amountIn);
    type Call = { from: string; to: string; value?: Hex; calls?: Call[] };
    const trace = (await src.pub.request({
      method: "debug_traceTransaction" as never,
      params: [claim.transactionHash, { tracer: "callTracer" }] as never,
    })) as Call;
    const moves = (c: Call): [string, string, bigint][] => [
      ...(c.value && BigInt(c.value) > 0n ? [[getAddress(c.from), getAddress(c.to), BigInt(c.value)] as [string, string, bigint]] : []),
      ...(c.calls ?? []).flatMap(moves),
    ];
    expect(getAddress(claim.from)).toBe(LOCAL_ROLES.bridgeSolver.address);
    expect(moves(trace)).toEqual([[chain137.bridgeSource, LOCAL_ROLES.bridgeSolver.address, amountIn]]);
  });

  it("an order the solver skips stays Created; the authority's cancel-tx and the relay refund the payer exactly", async () => {
    const payer = await src.newPayer();
    const authority = await dst.newPayer();
    const receiver = randomAddress();
    expect((await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "POST" })).status).toBe(204);
    await src.mint("USDC", payer.address, 20_000_000n, payer);
    const out = 3_000_000n;
    const p = { tokenIn: USDC137, tokenOut: USDT777, out, payer: payer.address, receiver, authority: authority.address };
    const q = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    const amountIn = BigInt(q.body.estimation.srcChainTokenIn.amount);
    await placeOrder(payer, q.body.tx);
    const orderId: Hex = q.body.orderId;
    expect(await src.balanceOf("USDC", payer.address)).toBe(20_000_000n - amountIn);

    // Several solver rounds and destination blocks later, still unfilled.
    const block = await dst.pub.getBlockNumber();
    await waitFor(async () => (await dst.pub.getBlockNumber()) >= block + 3n, { what: "3 blocks on 777177" });
    expect((await get(`/v1.0/dln/order/${orderId}/status`)).body).toEqual({ orderId, status: "Created" });
    expect(
      await dst.pub.readContract({
        address: chain777.bridgeDestination!,
        abi: bridgeDestinationAbi,
        functionName: "takeStatus",
        args: [orderId],
      }),
    ).toBe(TAKE.NotSet);

    const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
    expect(c).toEqual({
      status: 200,
      body: {
        to: chain777.bridgeDestination,
        data: encodeFunctionData({
          abi: bridgeDestinationAbi,
          functionName: "sendEvmOrderCancel",
          args: [expectedOrder(q.body, p), orderId],
        }),
        value: "0",
        chainId: 777177,
        from: authority.address,
        cancelBeneficiary: payer.address,
      },
    });
    await dst.wait(await dst.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }));
    const seen = await followStatus(orderId, "ClaimedOrderCancel");
    expect(seen.every((s) => s === "SentOrderCancel" || s === "ClaimedOrderCancel")).toBe(true);
    expect(await src.balanceOf("USDC", payer.address)).toBe(20_000_000n);
    expect(await dst.balanceOf("USDT", receiver)).toBe(0n);
    expect((await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).status).toBe(400);
    expect((await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "DELETE" })).status).toBe(204);
  });

  describe("a stand-in started later", () => {
    let later: Awaited<ReturnType<typeof startBridgeStandIn>>;
    beforeAll(async () => {
      later = await startBridgeStandIn({ chains });
    });
    afterAll(() => later?.close());

    it("rebuilds its order book from the CreatedOrder logs", async () => {
      expect(filled).toBeDefined();
      const res = await fetch(`${later.url}/v1.0/dln/order/${filled!.orderId}/status`);
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 200,
        body: { orderId: filled!.orderId, status: "ClaimedUnlock" },
      });
      const ids = await fetch(`${later.url}/v1.0/dln/tx/${filled!.txHash}/order-ids`);
      expect(await ids.json()).toEqual({ orderIds: [filled!.orderId] });
      expect(later.requests).toEqual([`/v1.0/dln/order/${filled!.orderId}/status`, `/v1.0/dln/tx/${filled!.txHash}/order-ids`]);
    });
  });
});
