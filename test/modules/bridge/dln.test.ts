import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { encodeFunctionData, zeroAddress } from "viem";
import { activeChains } from "../../../chains/runtime.js";
import { parsePrice18 } from "../../../core/money.js";
import { BRIDGE_FEE_BPS, OPERATING_EXPENSE_USD } from "../../../local/bridge/quote.js";
import { startBridgeStandIn, type BridgeStandIn } from "../../../local/bridge/server.js";
import { Conflict, DomainError, Invalid, Unavailable } from "../../../core/errors.js";
import { bridgeFromConfig, DlnClient, dlnDestinationAbi, dlnError } from "../../../modules/bridge/index.js";
import { startDlnFake, type DlnFake } from "./dln-fake.js";

// The DLN adapter (modules/bridge/dln.ts) against a real HTTP server on 127.0.0.1 that records each request as it
// arrived: the query strings are DLN's documented parameters, in its order, with nothing else; answers are read
// into exact bigints; DLN's error envelope becomes our domain errors with fixed messages.

const SRC_TOKEN = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"; // USDC on 137
const DST_TOKEN = "0xdAC17F958D2ee523a2206206994597C13D831ec7";
const RECIPIENT = "0x1111111111111111111111111111111111111111";
const PAYER = "0x2222222222222222222222222222222222222222";
const AUTHORITY = "0x3333333333333333333333333333333333333333";
const req = { srcChainId: 137, srcToken: SRC_TOKEN, dstChainId: 777177, dstToken: DST_TOKEN, dstAmount: 12_345_678n };

let fake: DlnFake;
let dln: DlnClient;
const logs: string[] = [];

beforeAll(async () => {
  fake = await startDlnFake();
  dln = new DlnClient({ baseUrl: `${fake.url}/`, log: (m) => void logs.push(m) });
});
afterAll(() => fake?.close());
beforeEach(() => {
  fake.requests.length = 0;
  logs.length = 0;
});

/** The error a call throws (fails the test when it resolves). */
async function errorOf(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e, "the call throws").toBeInstanceOf(DomainError);
  return e as DomainError;
}

describe("DLN adapter: requests", () => {
  it("create-tx for a payment: exactly DLN's parameters, in order: exact output, payer as sender, authority and refund", async () => {
    const q = await dln.createOrderTx({ ...req, recipient: RECIPIENT, payer: PAYER, dstAuthority: AUTHORITY });
    expect(fake.requests).toHaveLength(1);
    const r = fake.requests[0]!;
    expect(r.method).toBe("GET");
    expect(r.path).toBe("/v1.0/dln/order/create-tx");
    expect(r.query).toBe(
      [
        `srcChainId=137`,
        `srcChainTokenIn=${SRC_TOKEN}`,
        `srcChainTokenInAmount=auto`,
        `dstChainId=777177`,
        `dstChainTokenOut=${DST_TOKEN}`,
        `dstChainTokenOutAmount=12345678`,
        `dstChainTokenOutRecipient=${RECIPIENT}`,
        `senderAddress=${PAYER}`,
        `srcChainOrderAuthorityAddress=${PAYER}`,
        `dstChainOrderAuthorityAddress=${AUTHORITY}`,
        `srcChainRefundAddress=${PAYER}`,
        `prependOperatingExpenses=true`,
      ].join("&"),
    );
    // 12345678 * 1.003 = 12382715.034 -> 12382716 (rounded up) + 5000 operating expenses.
    expect(q.srcToken).toEqual({
      address: SRC_TOKEN,
      chainId: 137,
      decimals: 6,
      symbol: "USDC",
      amount: 12_387_716n,
      operatingExpense: 5000n,
    });
    expect(q.dstToken).toEqual({ address: DST_TOKEN, chainId: 777177, decimals: 6, symbol: "USDT", amount: 12_345_678n });
    expect(q.orderId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(q.tx).toEqual({
      kind: "evm",
      to: `0x${"ab".repeat(20)}`,
      data: "0xb9303701",
      value: 1000n,
      allowanceTarget: `0x${"ab".repeat(20)}`,
      allowanceValue: 12_387_716n,
    });
    expect(q.fixFee).toBe(1000n);
    expect(q.estimatedFulfillmentSeconds).toBe(3);
  });

  it("the refund token: the input itself, or for a pre-swapped input DLN's srcChainTokenOut", async () => {
    const plain = await dln.quote(req);
    expect(plain.preSwap).toBe(false);
    expect(plain.refundToken).toEqual({ address: SRC_TOKEN, chainId: 137, decimals: 6, symbol: "USDC", amount: 12_387_716n });
    const USDC = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359";
    fake.preSwap = { address: USDC, symbol: "USDC", decimals: 6, num: 1001n, den: 1000n };
    try {
      const q = await dln.createOrderTx({ ...req, srcToken: zeroAddress, recipient: RECIPIENT, payer: PAYER, dstAuthority: AUTHORITY });
      expect(q.preSwap).toBe(true);
      // 12345678 * 1.001 = 12358023.678 -> 12358024, as DLN wrote it: the amount the order escrows and a cancel refunds.
      expect(q.refundToken).toEqual({ address: USDC, chainId: 137, decimals: 6, symbol: "USDC", amount: 12_358_024n });
      expect(q.srcToken.address).toBe(zeroAddress);
    } finally {
      fake.preSwap = null;
    }
  });

  it("quote (estimation): the amount part and prependOperatingExpenses only; no tx", async () => {
    const q = await dln.quote({ ...req, dstToken: zeroAddress, dstAmount: 10n ** 18n });
    expect(fake.requests[0]!.query).toBe(
      `srcChainId=137&srcChainTokenIn=${SRC_TOKEN}&srcChainTokenInAmount=auto&dstChainId=777177&dstChainTokenOut=${zeroAddress}` +
        `&dstChainTokenOutAmount=1000000000000000000&prependOperatingExpenses=true`,
    );
    expect(q.tx).toBeNull();
    expect(q.orderId).toBeNull();
    expect(q.dstToken.amount).toBe(10n ** 18n);
  });

  it("status, order ids of a transaction and cancel-tx: DLN's paths, answers read exactly", async () => {
    const { orderId } = await dln.createOrderTx({ ...req, recipient: RECIPIENT, payer: PAYER, dstAuthority: AUTHORITY });
    fake.requests.length = 0;
    expect(await dln.orderStatus(orderId)).toBe("None");
    fake.setStatus(orderId, "Created");
    expect(await dln.orderStatus(orderId)).toBe("Created");
    const hash = `0x${"5c".repeat(32)}`;
    fake.txOrders.set(hash, [orderId.toUpperCase().replace("0X", "0x")]);
    expect(await dln.orderIdsOfTx(hash)).toEqual([orderId]);
    // The stats API's shape of the same answer.
    fake.override("/v1.0/dln/tx/", 200, { orderIds: [{ bytesValue: "AAEC", bytesArrayValue: [], stringValue: orderId }] });
    expect(await dln.orderIdsOfTx(hash)).toEqual([orderId]);
    fake.requests.pop();
    expect(await dln.cancelTx(orderId)).toEqual({
      to: fake.cancelTo,
      data: encodeFunctionData({
        abi: dlnDestinationAbi,
        functionName: "sendEvmOrderCancel",
        args: [fake.orders.get(orderId)!.order, PAYER, 0n],
      }),
      value: 0n,
      chainId: 777177,
      from: AUTHORITY,
      cancelBeneficiary: PAYER,
    });
    expect(fake.requests.map((r) => `${r.path}${r.query ? `?${r.query}` : ""}`)).toEqual([
      `/v1.0/dln/order/${orderId}/status`,
      `/v1.0/dln/order/${orderId}/status`,
      `/v1.0/dln/tx/${hash}/order-ids`,
      `/v1.0/dln/order/${orderId}/cancel-tx`,
    ]);
  });

  it("an access token goes last in every query as `accesstoken`; none without one", async () => {
    const keyed = bridgeFromConfig({ BRIDGE_API_URL: fake.url, BRIDGE_API_KEY: "tok-123" })!;
    await keyed.quote(req);
    await keyed.orderStatus(`0x${"00".repeat(32)}`);
    expect(fake.requests[0]!.query).toMatch(/&prependOperatingExpenses=true&accesstoken=tok-123$/);
    expect(fake.requests[1]!.query).toBe("accesstoken=tok-123");
    expect(bridgeFromConfig({ BRIDGE_API_URL: undefined, BRIDGE_API_KEY: "tok-123" })).toBeNull();
    expect(bridgeFromConfig({ BRIDGE_API_URL: "", BRIDGE_API_KEY: undefined })).toBeNull();
  });
});

describe("DLN adapter: errors", () => {
  const envelope = (errorId: string) => ({ errorCode: 2, errorId, errorMessage: `provider text for ${errorId}` });

  it("the 400 envelope maps by errorId to fixed messages (the provider's text is logged, not shown); unknown ids are 503", async () => {
    const cases: [string, string, string][] = [
      ["SOURCE_AND_DESTINATION_CHAINS_ARE_EQUAL", "invalid", "Source and destination networks must differ"],
      ["UNSUPPORTED_TOKEN_IN", "invalid", "Token not supported by the bridge"],
      ["UNSUPPORTED_TOKEN_OUT", "invalid", "Payment token not supported by the bridge"],
      ["ERROR_LOW_GIVE_AMOUNT", "invalid", "Amount too small to bridge"],
      ["INCLUDED_GAS_FEE_NOT_COVERED_BY_INPUT_AMOUNT", "invalid", "Amount too small to bridge"],
      // Not the payer's fault, or not known to be: transient, so the payer may try again and the operator sees it logged.
      ["INVALID_QUERY_PARAMETERS", "unavailable", "Bridge unavailable"],
      ["SOMETHING_NEW", "unavailable", "Bridge unavailable"],
      ["INTERMEDIARY_TOKEN_NOT_FUNDED", "unavailable", "Bridge unavailable"],
      ["IMPOSSIBLE_ROUTE", "unavailable", "No bridge route available"],
      ["ESTIMATION_FAILED", "unavailable", "No bridge route available"],
    ];
    for (const [id, kind, message] of cases) {
      fake.override("/v1.0/dln/order/create-tx", 400, envelope(id));
      const e = await errorOf(dln.quote(req));
      expect([e.kind, e.message], id).toEqual([kind, message]);
    }
    expect(logs.at(-1)).toBe("GET /v1.0/dln/order/create-tx -> HTTP 400 ESTIMATION_FAILED: provider text for ESTIMATION_FAILED");
    expect(dlnError(400, envelope("UNSUPPORTED_TOKEN_IN"))).toBeInstanceOf(Invalid);
  });

  it("429, 5xx, a body that is not the envelope, a malformed 200 and a timeout are `Bridge unavailable` (503)", async () => {
    for (const [status, body] of [
      [429, envelope("INVALID_QUERY_PARAMETERS")],
      [500, envelope("INTERNAL_SERVER_ERROR")],
      [502, "<html>bad gateway</html>"],
      [400, { message: "not DLN's shape" }],
      [200, { estimation: { srcChainTokenIn: { amount: 12.5 } } }],
      [200, "not json"],
    ] as [number, unknown][]) {
      fake.override("/v1.0/dln/order/create-tx", status, body);
      const e = await errorOf(dln.quote(req));
      expect(e, `${status} ${JSON.stringify(body)}`).toBeInstanceOf(Unavailable);
      expect(e.message).toBe("Bridge unavailable");
    }
    const slow = new DlnClient({ baseUrl: fake.url, timeoutMs: 200, log: (m) => void logs.push(m) });
    fake.override("/v1.0/dln/order/", 200, { orderId: "0x", status: "Created" }, { delayMs: 1000 });
    const e = await errorOf(slow.orderStatus(`0x${"00".repeat(32)}`));
    expect([e.kind, e.message]).toEqual(["unavailable", "Bridge unavailable"]);
    expect(logs.at(-1)).toBe(`GET /v1.0/dln/order/0x${"00".repeat(32)}/status -> timeout after 200 ms`);
  });

  it("404 of status is `None` (not indexed yet), of order-ids none; an unknown status word is unavailable", async () => {
    expect(await dln.orderStatus(`0x${"01".repeat(32)}`)).toBe("None");
    fake.override("/v1.0/dln/tx/", 404, envelope("NOT_FOUND"));
    expect(await dln.orderIdsOfTx(`0x${"02".repeat(32)}`)).toEqual([]);
    fake.override("/v1.0/dln/order/", 400, envelope("ORDER_NOT_FOUND"));
    expect(await dln.orderStatus(`0x${"01".repeat(32)}`)).toBe("None");
    fake.override("/v1.0/dln/order/", 200, { orderId: `0x${"01".repeat(32)}`, status: "Teleported" });
    expect((await errorOf(dln.orderStatus(`0x${"01".repeat(32)}`))).message).toBe("Bridge unavailable");
  });

  it("cancel-tx refused (4xx) is Conflict `Bridge order is not cancellable`; a 5xx is unavailable", async () => {
    const e = await errorOf(dln.cancelTx(`0x${"03".repeat(32)}`));
    expect(e).toBeInstanceOf(Conflict);
    expect(e.message).toBe("Bridge order is not cancellable");
    fake.override("/v1.0/dln/order/", 503, "down");
    expect((await errorOf(dln.cancelTx(`0x${"03".repeat(32)}`))).message).toBe("Bridge unavailable");
  });

  it("create-tx answering another output amount than asked, or no tx with every address, is refused", async () => {
    fake.override("/v1.0/dln/order/create-tx", 200, {
      estimation: {
        srcChainTokenIn: { address: SRC_TOKEN, chainId: 137, decimals: 6, symbol: "USDC", amount: "100" },
        dstChainTokenOut: { address: DST_TOKEN, chainId: 777177, decimals: 6, symbol: "USDT", amount: "99" },
      },
      tx: { to: AUTHORITY, data: "0x", value: "0" },
      orderId: `0x${"04".repeat(32)}`,
      fixFee: "0",
    });
    const e = await errorOf(dln.createOrderTx({ ...req, dstAmount: 100n, recipient: RECIPIENT, payer: PAYER, dstAuthority: AUTHORITY }));
    expect(e.message).toBe("Bridge unavailable");
    expect(logs.at(-1)).toBe("create-tx answered 99 out for 100 asked");
  });
});

describe("DLN adapter against the local stand-in (local/bridge/server.ts), which checks DLN's parameters itself", () => {
  const chains = activeChains(inject("stackEnv")).filter((c) => c.bridgeSource && c.bridgeDestination);
  const token = (chainId: number, symbol: string) =>
    chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!.address;
  let standIn: BridgeStandIn;
  let client: DlnClient;
  beforeAll(async () => {
    standIn = await startBridgeStandIn({ chains });
    client = new DlnClient({ baseUrl: standIn.url, log: (m) => void logs.push(m) });
  });
  afterAll(() => standIn?.close());

  it("create-tx: the stand-in takes the adapter's exact query and commits to the exact amount out", async () => {
    const r = {
      srcChainId: 137,
      srcToken: token(137, "USDC"),
      dstChainId: 777177,
      dstToken: token(777177, "USDT"),
      dstAmount: 10_000_000n,
    };
    const q = await client.createOrderTx({ ...r, recipient: RECIPIENT, payer: PAYER, dstAuthority: AUTHORITY });
    expect(standIn.requests).toEqual([
      `/v1.0/dln/order/create-tx?srcChainId=137&srcChainTokenIn=${r.srcToken}&srcChainTokenInAmount=auto&dstChainId=777177` +
        `&dstChainTokenOut=${r.dstToken}&dstChainTokenOutAmount=10000000&dstChainTokenOutRecipient=${RECIPIENT}&senderAddress=${PAYER}` +
        `&srcChainOrderAuthorityAddress=${PAYER}&dstChainOrderAuthorityAddress=${AUTHORITY}&srcChainRefundAddress=${PAYER}&prependOperatingExpenses=true`,
    ]);
    // Stablecoins at 1.00: 10 USDT out costs 10 USDC + the stand-in's fee (rounded up) + its operating expense.
    const fee = (10_000_000n * BRIDGE_FEE_BPS + 9_999n) / 10_000n;
    const opex = (parsePrice18(OPERATING_EXPENSE_USD) * 10n ** 6n) / 10n ** 18n;
    expect(q.srcToken).toMatchObject({ chainId: 137, amount: 10_000_000n + fee + opex, operatingExpense: opex });
    expect(q.dstToken).toMatchObject({ chainId: 777177, symbol: "USDT", amount: 10_000_000n });
    expect(q.tx).toMatchObject({ kind: "evm", to: chains.find((c) => c.chainId === 137)!.bridgeSource });
    expect(q.orderId).toMatch(/^0x[0-9a-f]{64}$/);
    // Not sent: unknown on chain, so not cancellable.
    expect(await client.orderStatus(q.orderId)).toBe("None");
    expect((await errorOf(client.cancelTx(q.orderId))).message).toBe("Bridge order is not cancellable");
  });

  it("its error envelope maps like DLN's: same chains, an unsupported token", async () => {
    const base = {
      srcChainId: 137,
      srcToken: token(137, "USDC"),
      dstChainId: 777177,
      dstToken: token(777177, "USDT"),
      dstAmount: 1_000_000n,
    };
    expect((await errorOf(client.quote({ ...base, dstChainId: 137, dstToken: token(137, "USDC") }))).message).toBe(
      "Source and destination networks must differ",
    );
    expect((await errorOf(client.quote({ ...base, srcToken: RECIPIENT }))).message).toBe("Token not supported by the bridge");
    expect((await errorOf(client.quote({ ...base, dstToken: RECIPIENT }))).message).toBe("Payment token not supported by the bridge");
  });
});
