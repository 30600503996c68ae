// The DLN stand-in (local/bridge/server.ts) and the solver (local/bridge/solver.ts) the run's stack starts on chains
// 137 and 777177: DLN's create-tx, status, order-ids and cancel-tx against our bridge contracts (DLN's Order, DLN's
// cancel ABI, the DeBridgeGate stand-in's messaging fee, the pre-swap router), with exact amounts.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import {
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  parseEther,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../../../abis/TestToken.js";
import { DLN_EVM } from "../../../chains/registry.js";
import { activeChains } from "../../../chains/runtime.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import {
  bridgeDestinationAbi,
  bridgeRouterStandInAbi,
  bridgeSourceAbi,
  deBridgeGateAbi,
  DLN_ROUTER,
  dlnOrderId,
  evmAddressToBytes,
  TAKE,
  type DlnOrder,
} from "../../../local/bridge/abi.js";
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

type OrderParams = {
  tokenIn: Address;
  tokenOut: Address;
  out: bigint;
  payer?: Address;
  receiver?: Address;
  authority?: Address;
  /** srcChainOrderAuthorityAddress (default: the payer). */
  srcAuthority?: Address;
  /** srcChainRefundAddress (default: the payer). */
  refund?: Address;
  /** 137 -> 777177 unless given. */
  from?: number;
  to?: number;
};

/** create-tx query as the service's adapter sends it (a reverse market order to an exact amount). */
function orderQuery(p: OrderParams) {
  return {
    srcChainId: String(p.from ?? 137),
    srcChainTokenIn: p.tokenIn,
    srcChainTokenInAmount: "auto",
    dstChainId: String(p.to ?? 777177),
    dstChainTokenOut: p.tokenOut,
    dstChainTokenOutAmount: String(p.out),
    ...(p.receiver
      ? {
          dstChainTokenOutRecipient: p.receiver,
          senderAddress: p.payer!,
          srcChainOrderAuthorityAddress: p.srcAuthority ?? p.payer!,
          dstChainOrderAuthorityAddress: p.authority!,
          srcChainRefundAddress: p.refund ?? p.payer!,
        }
      : {}),
    prependOperatingExpenses: "true",
  };
}

const b = evmAddressToBytes;

/**
 * DLN's order a create-tx answer commits to, rebuilt from the query (the test's own reading of the interface): what
 * it gives is the input, or for a pre-swapped input the USDC of `srcChainTokenOut`.
 */
function expectedOrder(body: any, p: OrderParams): DlnOrder {
  const give = body.estimation.srcChainTokenOut ?? body.estimation.srcChainTokenIn;
  return {
    makerOrderNonce: BigInt(body.order.salt),
    makerSrc: b(p.payer!),
    giveChainId: BigInt(p.from ?? 137),
    giveTokenAddress: b(give.address),
    giveAmount: BigInt(give.amount),
    takeChainId: BigInt(p.to ?? 777177),
    takeTokenAddress: b(p.tokenOut),
    takeAmount: p.out,
    receiverDst: b(p.receiver!),
    givePatchAuthoritySrc: b(p.srcAuthority ?? p.payer!),
    orderAuthorityAddressDst: b(p.authority!),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: "0x",
    externalCall: "0x",
  };
}

/** A payer approves the input (ERC-20 `token`) and sends the create-tx transaction on `side`; returns its receipt. */
async function placeOrder(payer: PrivateKeyAccount, tx: any, token: Address = USDC137, side = src): Promise<TransactionReceipt> {
  const wallet = side.walletOf(payer);
  if (tx.allowanceTarget)
    await side.wait(
      await wallet.writeContract({
        address: token,
        abi: testTokenAbi,
        functionName: "approve",
        args: [tx.allowanceTarget, BigInt(tx.allowanceValue)],
      }),
    );
  return side.wait(await wallet.sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value) }));
}

/** Adds the receiver to the solver's skip list (its order stays Created) for the duration of `fn`. */
async function skipping<T>(receiver: Address, fn: () => Promise<T>): Promise<T> {
  expect((await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "POST" })).status).toBe(204);
  try {
    return await fn();
  } finally {
    await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "DELETE" });
  }
}

/** The messaging gate behind a chain's bridge destination (DlnDestination.deBridgeGate()), and its fixed fee. */
async function gateOf(side: typeof src, destination: Address) {
  const gate = await side.pub.readContract({ address: destination, abi: bridgeDestinationAbi, functionName: "deBridgeGate" });
  return { gate, balance: () => side.pub.getBalance({ address: gate }) };
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
      orderId: dlnOrderId(order),
      order: { approximateFulfillmentDelay: 3, salt: Number(order.makerOrderNonce) },
    });
    // A reserve input (USDC) is escrowed itself: no srcChainTokenOut, no router.
    expect(r.body.estimation.srcChainTokenOut).toBeUndefined();
    // A millisecond timestamp, like DLN's salt; the next quote gets another one (another order id).
    expect(Math.abs(r.body.order.salt - Date.now())).toBeLessThan(60_000);
    const again = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    expect(again.body.order.salt).toBeGreaterThan(r.body.order.salt);
    expect(again.body.orderId).not.toBe(r.body.orderId);
    // Quoted, not created: known to the stand-in with status None.
    expect((await get(`/v1.0/dln/order/${r.body.orderId}/status`)).body).toEqual({ orderId: r.body.orderId, status: "None" });
  });

  it("a non-reserve input is pre-swapped: native MATIC in at the oracle's price, USDC escrowed (srcChainTokenOut), exact USDT out", async () => {
    const price = (await readOracleAt(src.pub as any, 137, chain137.oracle!, "MATIC"))!.priceRaw;
    expect(price).toBe(parsePrice18("0.5"));
    const out = 12_345_678n;
    // The order gives USDC: out (1.00 USD) + 0.3 %, rounded up, + 0.10 USD of operating expense.
    const give = ceilDiv(out * (10_000n + BRIDGE_FEE_BPS), 10_000n) + ceilDiv(OPEX18 * 10n ** 6n, 10n ** 18n);
    expect(give).toBe(12_482_716n); // 12.382716 + 0.10
    // The payer sends the MATIC that the router swaps into at least that (at 0.50, rounded up).
    const amountIn = ceilDiv(give * 10n ** 18n * 10n ** 18n, price * 10n ** 6n);
    expect(amountIn).toBe(24_965_432_000_000_000_000n);
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
    expect(r.body.estimation.srcChainTokenIn).toEqual({
      address: zeroAddress,
      chainId: 137,
      decimals: 18,
      name: "MATIC",
      symbol: "MATIC",
      amount: String(amountIn),
      approximateOperatingExpense: String(2n * 10n ** 17n), // 0.10 USD in MATIC
      mutatedWithOperatingExpense: true,
    });
    expect(r.body.estimation.srcChainTokenOut).toEqual({
      address: USDC137,
      chainId: 137,
      decimals: 6,
      name: "USDC (local 137)",
      symbol: "USDC",
      amount: String(give),
      maxRefundAmount: String(give),
      approximateOperatingExpense: "100000",
      mutatedWithOperatingExpense: true,
    });
    expect(r.body.estimation.dstChainTokenOut).toMatchObject({ address: USDT777, symbol: "USDT", amount: String(out) });
    expect(r.body.estimation.costsDetails.map((c: any) => [c.type, c.tokenIn, c.amountIn])).toEqual([
      ["EstimatedOperatingExpenses", USDC137, String(give)],
      ["TakerMargin", USDC137, String(give - 100_000n)],
    ]);
    // Native in: the value carries the input; the router swaps it and creates the USDC order (refund: the surplus).
    const order = expectedOrder(r.body, p);
    expect(order.giveTokenAddress).toBe(b(USDC137));
    expect(r.body.tx).toEqual({
      to: DLN_ROUTER,
      data: encodeFunctionData({
        abi: bridgeRouterStandInAbi,
        functionName: "swapAndCreateOrder",
        args: [zeroAddress, amountIn, order, p.payer],
      }),
      value: String(amountIn),
    });
    expect(r.body.orderId).toBe(dlnOrderId(order));
  });

  it("order ids are DLN's packed-encoding ids, the same in TS and Solidity (BridgeSource and BridgeDestination getOrderId)", async () => {
    const p = {
      tokenIn: USDC137,
      tokenOut: USDT777,
      out: 1_000_000n,
      payer: randomAddress(),
      receiver: randomAddress(),
      authority: randomAddress(),
    };
    const r = await get("/v1.0/dln/order/create-tx", orderQuery(p));
    const order = expectedOrder(r.body, p);
    const onChain = await Promise.all([
      src.pub.readContract({ address: chain137.bridgeSource!, abi: bridgeSourceAbi, functionName: "getOrderId", args: [order] }),
      src.pub.readContract({ address: chain137.bridgeDestination!, abi: bridgeDestinationAbi, functionName: "getOrderId", args: [order] }),
      dst.pub.readContract({ address: chain777.bridgeDestination!, abi: bridgeDestinationAbi, functionName: "getOrderId", args: [order] }),
    ]);
    expect(onChain).toEqual([r.body.orderId, r.body.orderId, r.body.orderId]);
    expect(r.body.orderId).toBe(dlnOrderId(order));
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
      [{ ...q, srcChainId: "1" }, 2, "INVALID_QUERY_PARAMETERS", "srcChainId must be one of the following values: 137, 777177, 7565164"],
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

/** The source's claim of an order (its ClaimedUnlock or ClaimedOrderCancel event; DLN's are not indexed): the event's arguments and receipt. */
async function claimOf(orderId: Hex, eventName: "ClaimedUnlock" | "ClaimedOrderCancel", side = src, source = chain137.bridgeSource!) {
  const logs = await side.pub.getContractEvents({ address: source, abi: bridgeSourceAbi, eventName, fromBlock: 0n });
  const claimed = logs.find((l) => (l.args as { orderId: Hex }).orderId === orderId);
  expect(claimed, `${eventName} of ${orderId}`).toBeDefined();
  return {
    args: claimed!.args as Record<string, unknown>,
    receipt: await side.pub.getTransactionReceipt({ hash: claimed!.transactionHash }),
  };
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

    const txHash = (await placeOrder(payer, q.body.tx)).transactionHash;
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
    const claim = await claimOf(orderId, "ClaimedUnlock");
    expect(claim.args).toEqual({ orderId, beneficiary: LOCAL_ROLES.bridgeSolver.address, giveAmount: USDC_IN, giveTokenAddress: USDC137 });
    const transfers = parseEventLogs({ abi: testTokenAbi, eventName: "Transfer", logs: claim.receipt.logs });
    expect(transfers.map((t) => [getAddress(t.address), t.args])).toEqual([
      [USDC137, { from: chain137.bridgeSource, to: LOCAL_ROLES.bridgeSolver.address, value: USDC_IN }],
    ]);
    // The solver's unlock paid the messaging fee of 777177's gate (0.001), as a DLN taker pays it.
    const [unlocked] = (
      await dst.pub.getContractEvents({
        address: chain777.bridgeDestination!,
        abi: bridgeDestinationAbi,
        eventName: "SentOrderUnlock",
        fromBlock: 0n,
      })
    ).filter((l) => l.args.orderId === orderId);
    expect(unlocked!.args.beneficiary).toBe(b(LOCAL_ROLES.bridgeSolver.address));
    expect((await dst.pub.getTransaction({ hash: unlocked!.transactionHash })).value).toBe(parseEther("0.001"));
    // The order's data in DLN's field names.
    expect((await get(`/v1.0/dln/order/${orderId}`)).body).toMatchObject({
      orderId,
      status: "ClaimedUnlock",
      orderStruct: {
        makerSrc: payer.address,
        giveOffer: { chainId: 137, tokenAddress: USDC137, amount: String(USDC_IN) },
        receiverDst: receiver,
        takeOffer: { chainId: 777177, tokenAddress: USDC777, amount: String(USDC_OUT) },
        givePatchAuthoritySrc: payer.address,
        orderAuthorityAddressDst: p.authority,
        allowedCancelBeneficiarySrc: null,
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

  it("native MATIC in goes through the router: the receiver gets exactly the USDT out and the solver the escrowed USDC", async () => {
    const payer = await src.newPayer();
    const receiver = randomAddress();
    const out = 2_500_000n;
    const q = await get(
      "/v1.0/dln/order/create-tx",
      orderQuery({ tokenIn: zeroAddress, tokenOut: USDT777, out, payer: payer.address, receiver, authority: randomAddress() }),
    );
    expect(q.body.tx.to).toBe(DLN_ROUTER);
    const give = BigInt(q.body.estimation.srcChainTokenOut.amount);
    const placed = await placeOrder(payer, q.body.tx);
    // The router got the MATIC (the transaction's value) and escrowed USDC for it in the same transaction.
    const tx = await src.pub.getTransaction({ hash: placed.transactionHash });
    expect([getAddress(tx.to!), tx.value]).toEqual([DLN_ROUTER, BigInt(q.body.tx.value)]);
    expect(
      parseEventLogs({ abi: testTokenAbi, eventName: "Transfer", logs: placed.logs }).map((t) => [getAddress(t.address), t.args]),
    ).toContainEqual([USDC137, { from: DLN_ROUTER, to: chain137.bridgeSource, value: give }]);
    await followStatus(q.body.orderId, "ClaimedUnlock");
    expect(await dst.balanceOf("USDT", receiver)).toBe(out);
    // The solver gets the USDC the router escrowed for the order on 137, and only that.
    const claim = await claimOf(q.body.orderId, "ClaimedUnlock");
    expect(claim.args).toEqual({
      orderId: q.body.orderId,
      beneficiary: LOCAL_ROLES.bridgeSolver.address,
      giveAmount: give,
      giveTokenAddress: USDC137,
    });
    expect(getAddress(claim.receipt.from)).toBe(LOCAL_ROLES.bridgeSolver.address);
    expect(
      parseEventLogs({ abi: testTokenAbi, eventName: "Transfer", logs: claim.receipt.logs }).map((t) => [getAddress(t.address), t.args]),
    ).toEqual([[USDC137, { from: chain137.bridgeSource, to: LOCAL_ROLES.bridgeSolver.address, value: give }]]);
  });

  it("an order the solver skips stays Created; cancel-tx's value is the gate's messaging fee plus the execution fee; the relay refunds the payer exactly", async () => {
    const payer = await src.newPayer();
    const authority = await dst.newPayer();
    const receiver = randomAddress();
    await skipping(receiver, async () => {
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
        (
          await dst.pub.readContract({
            address: chain777.bridgeDestination!,
            abi: bridgeDestinationAbi,
            functionName: "takeOrders",
            args: [orderId],
          })
        )[0],
      ).toBe(TAKE.NotSet);

      // 777177's gate: 0.001 fixed fee; the stand-in's execution fee is a tenth of it.
      const gate = await gateOf(dst, chain777.bridgeDestination!);
      const fee = parseEther("0.001");
      const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
      expect(c).toEqual({
        status: 200,
        body: {
          to: chain777.bridgeDestination,
          data: encodeFunctionData({
            abi: bridgeDestinationAbi,
            functionName: "sendEvmOrderCancel",
            args: [expectedOrder(q.body, p), payer.address, fee / 10n],
          }),
          value: String(fee + fee / 10n),
          chainId: 777177,
          from: authority.address,
          cancelBeneficiary: payer.address,
        },
      });
      expect(c.body.data.slice(0, 10)).toBe("0xd38d9626");
      const gateBefore = await gate.balance();
      await dst.wait(await dst.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }));
      expect((await gate.balance()) - gateBefore).toBe(fee + fee / 10n);
      const seen = await followStatus(orderId, "ClaimedOrderCancel");
      expect(seen.every((s) => s === "SentOrderCancel" || s === "ClaimedOrderCancel")).toBe(true);
      expect(await src.balanceOf("USDC", payer.address)).toBe(20_000_000n);
      expect(await dst.balanceOf("USDT", receiver)).toBe(0n);
      expect((await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).status).toBe(400);
    });
  });

  it("cancel-tx's value is the gate's messaging fee plus the execution fee (0.5 on 137), read from DLN's DlnDestination address", async () => {
    // 137's BridgeDestination is at DLN's address and not in the deployments file: chains/runtime.ts takes the registry's.
    expect(chain137.bridgeDestination).toBe(DLN_EVM.destination);
    const deployments = JSON.parse(fs.readFileSync(env.DEPLOYMENTS_FILE!, "utf8"));
    expect(deployments.chains["137"].bridgeDestination).toBeUndefined();
    expect(deployments.chains["777177"].bridgeDestination).toBe(chain777.bridgeDestination);
    const gate = await gateOf(src, DLN_EVM.destination);
    expect(await src.pub.readContract({ address: gate.gate, abi: deBridgeGateAbi, functionName: "globalFixedNativeFee" })).toBe(
      parseEther("0.5"),
    );

    // An order from 777177 (USDC) to 137, left unfilled; the authority on 137 cancels it.
    const payer = await dst.newPayer();
    const authority = await src.newPayer();
    const receiver = randomAddress();
    await skipping(receiver, async () => {
      await dst.mint("USDC", payer.address, 5_000_000n, payer);
      const p = {
        tokenIn: USDC777,
        tokenOut: USDC137,
        out: 1_000_000n,
        payer: payer.address,
        receiver,
        authority: authority.address,
        from: 777177,
        to: 137,
      };
      const q = await get("/v1.0/dln/order/create-tx", orderQuery(p));
      expect(q.status).toBe(200);
      expect(q.body.tx.to).toBe(chain777.bridgeSource);
      const amountIn = BigInt(q.body.estimation.srcChainTokenIn.amount);
      await placeOrder(payer, q.body.tx, USDC777, dst);
      const orderId: Hex = q.body.orderId;
      await waitFor(async () => (await get(`/v1.0/dln/order/${orderId}/status`)).body.status === "Created", { what: "order Created" });

      const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
      expect(c.status).toBe(200);
      expect(c.body).toMatchObject({ to: DLN_EVM.destination, chainId: 137, from: authority.address, cancelBeneficiary: payer.address });
      expect(c.body.value).toBe(String(parseEther("0.55")));
      const { functionName, args } = decodeFunctionData({ abi: bridgeDestinationAbi, data: c.body.data });
      expect([functionName, args]).toEqual(["sendEvmOrderCancel", [expectedOrder(q.body, p), payer.address, parseEther("0.05")]]);
      // Below the fee it reverts on chain; with the value it succeeds and the gate keeps all of it.
      await expect(
        src.pub.call({ account: authority.address, to: c.body.to, data: c.body.data, value: parseEther("0.5") - 1n }),
      ).rejects.toThrow();
      const before = await gate.balance();
      await src.wait(await src.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }));
      expect((await gate.balance()) - before).toBe(parseEther("0.55"));
      await followStatus(orderId, "ClaimedOrderCancel");
      expect(await dst.balanceOf("USDC", payer.address)).toBe(5_000_000n);
      const claim = await claimOf(orderId, "ClaimedOrderCancel", dst, chain777.bridgeSource!);
      expect(claim.args).toEqual({ orderId, beneficiary: payer.address, paidAmount: amountIn, giveTokenAddress: USDC777 });
    });
  });

  it("a cancelled order refunds the cancel beneficiary (source authority), not srcChainRefundAddress", async () => {
    const payer = await src.newPayer();
    const srcAuthority = randomAddress();
    const refund = randomAddress();
    const authority = await dst.newPayer();
    const receiver = randomAddress();
    await skipping(receiver, async () => {
      await src.mint("USDC", payer.address, 10_000_000n, payer);
      const p = {
        tokenIn: USDC137,
        tokenOut: USDC777,
        out: 2_000_000n,
        payer: payer.address,
        receiver,
        authority: authority.address,
        srcAuthority,
        refund,
      };
      const q = await get("/v1.0/dln/order/create-tx", orderQuery(p));
      const amountIn = BigInt(q.body.estimation.srcChainTokenIn.amount);
      await placeOrder(payer, q.body.tx);
      const orderId: Hex = q.body.orderId;
      await waitFor(async () => (await get(`/v1.0/dln/order/${orderId}/status`)).body.status === "Created", { what: "order Created" });
      const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
      expect(c.body.cancelBeneficiary).toBe(srcAuthority);
      expect(decodeFunctionData({ abi: bridgeDestinationAbi, data: c.body.data }).args[1]).toBe(srcAuthority);
      await dst.wait(await dst.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }));
      await followStatus(orderId, "ClaimedOrderCancel");
      expect(await src.balanceOf("USDC", srcAuthority)).toBe(amountIn);
      expect(await src.balanceOf("USDC", refund)).toBe(0n);
      expect(await src.balanceOf("USDC", payer.address)).toBe(10_000_000n - amountIn);
    });
  });

  it.each([
    ["USDT", "USDT0"],
    ["native MATIC", null],
  ] as const)(
    "a non-reserve input (%s) goes through the router: the order escrows USDC = srcChainTokenOut.amount; the cancel refunds USDC to the authority",
    async (_, symbol) => {
      const payer = await src.newPayer();
      const authority = await dst.newPayer();
      const receiver = randomAddress();
      const tokenIn = symbol ? src.token(symbol).address : zeroAddress;
      await skipping(receiver, async () => {
        if (symbol) await src.mint(symbol, payer.address, 30_000_000n, payer);
        const p = { tokenIn, tokenOut: USDT777, out: 4_000_000n, payer: payer.address, receiver, authority: authority.address };
        const q = await get("/v1.0/dln/order/create-tx", orderQuery(p));
        expect(q.status, JSON.stringify(q.body)).toBe(200);
        const amountIn = BigInt(q.body.estimation.srcChainTokenIn.amount);
        const give = BigInt(q.body.estimation.srcChainTokenOut.amount);
        // 4 USDT out + 0.3 % + 0.10 of operating expense, in USDC; the input at 1.00 (USDT) or 0.50 (MATIC).
        expect(give).toBe(4_112_000n);
        expect(amountIn).toBe(symbol ? give : give * 2n * 10n ** 12n);
        expect(q.body.tx).toMatchObject(
          symbol
            ? { to: DLN_ROUTER, value: "0", allowanceTarget: DLN_ROUTER, allowanceValue: String(amountIn) }
            : { to: DLN_ROUTER, value: String(amountIn) },
        );

        const r = await placeOrder(payer, q.body.tx, tokenIn);
        const orderId: Hex = q.body.orderId;
        const [created] = parseEventLogs({ abi: bridgeSourceAbi, logs: r.logs, eventName: "CreatedOrder" });
        expect(created!.args.orderId).toBe(orderId);
        expect(created!.args.order).toEqual(expectedOrder(q.body, p));
        expect(created!.args.order.giveTokenAddress).toBe(b(USDC137));
        expect(created!.args.order.giveAmount).toBe(give);
        // The router took the input, the source escrows exactly srcChainTokenOut.amount of USDC, no surplus: read from the
        // transaction's own transfers (other test files use the same router and source at the same time).
        const moved = parseEventLogs({ abi: testTokenAbi, eventName: "Transfer", logs: r.logs }).map((t) => [
          getAddress(t.address),
          t.args.from,
          t.args.to,
          t.args.value,
        ]);
        expect(moved).toContainEqual([USDC137, DLN_ROUTER, chain137.bridgeSource, give]);
        if (symbol) expect(moved).toContainEqual([tokenIn, payer.address, DLN_ROUTER, amountIn]);
        else expect((await src.pub.getTransaction({ hash: r.transactionHash })).value).toBe(amountIn);
        if (symbol) expect(await src.balanceOf(symbol, payer.address)).toBe(30_000_000n - amountIn);
        expect(parseEventLogs({ abi: bridgeRouterStandInAbi, logs: r.logs, eventName: "Swapped" })[0]!.args).toMatchObject({
          payer: payer.address,
          amountIn,
          amountOut: give,
          orderId,
          refundTo: payer.address,
          surplus: 0n,
        });

        await waitFor(async () => (await get(`/v1.0/dln/order/${orderId}/status`)).body.status === "Created", { what: "order Created" });
        const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
        await dst.wait(await dst.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }));
        await followStatus(orderId, "ClaimedOrderCancel");
        // The refund is USDC, exactly what the order escrowed, to the source authority (the payer here).
        expect(await src.balanceOf("USDC", payer.address)).toBe(give);
        if (symbol) expect(await src.balanceOf(symbol, payer.address)).toBe(30_000_000n - amountIn);
        const claim = await claimOf(orderId, "ClaimedOrderCancel");
        expect(claim.args).toEqual({ orderId, beneficiary: payer.address, paidAmount: give, giveTokenAddress: USDC137 });
      });
    },
  );

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
