import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { encodeFunctionData, getAddress, type Address, type Hex } from "viem";
import { DLN_SOLANA_CHAIN_ID, dlnDestinationAbi, dlnOrderId, evmAddressToBytes, type DlnOrder } from "../../../modules/bridge/index.js";
import { solanaKeyHex } from "../../../modules/bridge/index.js";

// A scripted DLN HTTP server on 127.0.0.1 for the adapter's and the payment side's tests: it records every request
// (path and raw query string, as the adapter sent them) and answers in DLN's documented shapes. Orders quoted with
// every address get an id, a status the test sets (`setStatus`), and a cancel transaction to `cancelTo` on the
// destination, from the order's dstChainOrderAuthorityAddress: a real transaction the service's authority sends. Orders
// are DLN's `Order` built from the query (DLN's ids: dlnOrderId), and cancel-tx answers DLN's calldata for them.

export type Recorded = { method: string; path: string; query: string; params: URLSearchParams };
export type FakeOrder = { orderId: string; params: URLSearchParams; status: string; order: DlnOrder };

export type DlnFake = {
  url: string;
  requests: Recorded[];
  orders: Map<string, FakeOrder>;
  /** Order ids a source transaction created (what GET /v1.0/dln/tx/{hash}/order-ids answers). */
  txOrders: Map<string, string[]>;
  /** Where cancel transactions go: a random account until a test places a destination there (scene.ts). */
  cancelTo: string;
  /** The `value` cancel-tx answers (deBridge's messaging fee plus the execution fee); 0 by default. */
  cancelValue: bigint;
  /** The execution fee cancel-tx's calldata names. */
  executionFee: bigint;
  /** Next answer of a path (prefix match), instead of the scripted one: [status, body or raw text]. */
  override(pathPrefix: string, status: number, body: unknown, opts?: { once?: boolean; delayMs?: number }): void;
  setStatus(orderId: string, status: string): void;
  /** Source amount per unit of output: src = dst * num / den + opex (rounded up). */
  price: { num: bigint; den: bigint; opex: bigint };
  /**
   * Set: every create-tx pre-swaps its input to this reserve token (DLN's `estimation.srcChainTokenOut`), escrowing
   * `dst * num / den` (rounded up) of it; null: the input is escrowed itself (no srcChainTokenOut).
   */
  preSwap: { address: string; symbol: string; decimals: number; num: bigint; den: bigint } | null;
  close(): Promise<void>;
};

export async function startDlnFake(): Promise<DlnFake> {
  const requests: Recorded[] = [];
  const orders = new Map<string, FakeOrder>();
  const txOrders = new Map<string, string[]>();
  const overrides: { prefix: string; status: number; body: unknown; once: boolean; delayMs: number }[] = [];
  const price = { num: 1003n, den: 1000n, opex: 5000n };
  const cancelTo = `0x${randomBytes(20).toString("hex")}`;
  const state: { preSwap: DlnFake["preSwap"]; cancelTo: string; cancelValue: bigint; executionFee: bigint } = {
    preSwap: null,
    cancelTo,
    cancelValue: 0n,
    executionFee: 0n,
  };
  let nonce = BigInt(Date.now());

  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    const query = req.url!.includes("?") ? req.url!.slice(req.url!.indexOf("?") + 1) : "";
    requests.push({ method: req.method!, path: url.pathname, query, params: url.searchParams });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    const o = overrides.find((x) => url.pathname.startsWith(x.prefix));
    if (o) {
      if (o.once) overrides.splice(overrides.indexOf(o), 1);
      setTimeout(() => send(o.status, o.body), o.delayMs);
      return;
    }
    const p = url.searchParams;
    let m: RegExpExecArray | null;
    if (url.pathname === "/v1.0/dln/order/create-tx") {
      const dst = BigInt(p.get("dstChainTokenOutAmount")!);
      const src = (dst * price.num + price.den - 1n) / price.den + price.opex;
      const full = p.has("dstChainTokenOutRecipient") && p.has("dstChainOrderAuthorityAddress");
      const escrowed = state.preSwap ? (dst * state.preSwap.num + state.preSwap.den - 1n) / state.preSwap.den : src;
      const order = full ? orderOf(p, nonce++, escrowed, state.preSwap?.address) : undefined;
      const orderId = order ? dlnOrderId(order) : undefined;
      if (orderId && order) orders.set(orderId, { orderId, params: p, status: "None", order });
      return send(200, {
        estimation: {
          srcChainTokenIn: {
            address: p.get("srcChainTokenIn"),
            chainId: Number(p.get("srcChainId")),
            decimals: 6,
            name: "USD Coin",
            symbol: "USDC",
            amount: src.toString(),
            approximateOperatingExpense: price.opex.toString(),
            mutatedWithOperatingExpense: true,
          },
          ...(state.preSwap
            ? {
                srcChainTokenOut: {
                  address: state.preSwap.address,
                  chainId: Number(p.get("srcChainId")),
                  decimals: state.preSwap.decimals,
                  name: state.preSwap.symbol,
                  symbol: state.preSwap.symbol,
                  amount: ((dst * state.preSwap.num + state.preSwap.den - 1n) / state.preSwap.den).toString(),
                  maxRefundAmount: ((dst * state.preSwap.num + state.preSwap.den - 1n) / state.preSwap.den).toString(),
                },
              }
            : {}),
          dstChainTokenOut: {
            address: p.get("dstChainTokenOut"),
            chainId: Number(p.get("dstChainId")),
            decimals: 6,
            name: "Tether USD",
            symbol: "USDT",
            amount: dst.toString(),
            recommendedAmount: dst.toString(),
          },
          costsDetails: [],
          recommendedSlippage: 0,
        },
        ...(orderId
          ? {
              tx: {
                to: `0x${"ab".repeat(20)}`,
                data: "0xb9303701",
                value: "1000",
                allowanceTarget: `0x${"ab".repeat(20)}`,
                allowanceValue: src.toString(),
              },
              orderId,
            }
          : {}),
        fixFee: "1000",
        order: { approximateFulfillmentDelay: 3, salt: Date.now() },
      });
    }
    if ((m = /^\/v1\.0\/dln\/order\/(0x[0-9a-fA-F]+)\/status$/.exec(url.pathname))) {
      const order = orders.get(m[1]!.toLowerCase());
      return order
        ? send(200, { orderId: order.orderId, status: order.status })
        : send(404, { errorCode: 0, errorId: "ORDER_NOT_FOUND", errorMessage: "not found" });
    }
    if ((m = /^\/v1\.0\/dln\/tx\/(0x[0-9a-fA-F]+)\/order-ids$/.exec(url.pathname)))
      return send(200, { orderIds: txOrders.get(m[1]!.toLowerCase()) ?? [] });
    if ((m = /^\/v1\.0\/dln\/order\/(0x[0-9a-fA-F]+)\/cancel-tx$/.exec(url.pathname))) {
      const order = orders.get(m[1]!.toLowerCase());
      if (!order || order.status !== "Created")
        return send(400, { errorCode: 2, errorId: "INVALID_QUERY_PARAMETERS", errorMessage: "order is not cancellable" });
      // DLN refunds the source order authority (the cancel beneficiary the API names).
      const beneficiary = order.params.get("srcChainOrderAuthorityAddress")!;
      const solana = Number(order.params.get("srcChainId")) === DLN_SOLANA_CHAIN_ID;
      return send(200, {
        to: state.cancelTo,
        data: solana
          ? encodeFunctionData({
              abi: dlnDestinationAbi,
              functionName: "sendSolanaOrderCancel",
              args: [order.order, solanaKeyHex(beneficiary), state.executionFee, 1_000n, 2_000n],
            })
          : encodeFunctionData({
              abi: dlnDestinationAbi,
              functionName: "sendEvmOrderCancel",
              args: [order.order, getAddress(beneficiary), state.executionFee],
            }),
        value: state.cancelValue.toString(),
        chainId: Number(order.params.get("dstChainId")),
        from: order.params.get("dstChainOrderAuthorityAddress"),
        cancelBeneficiary: beneficiary,
      });
    }
    send(404, { errorCode: 0, errorId: "NOT_FOUND", errorMessage: "no such route" });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    orders,
    txOrders,
    get cancelTo() {
      return state.cancelTo;
    },
    set cancelTo(v) {
      state.cancelTo = v;
    },
    get cancelValue() {
      return state.cancelValue;
    },
    set cancelValue(v) {
      state.cancelValue = v;
    },
    get executionFee() {
      return state.executionFee;
    },
    set executionFee(v) {
      state.executionFee = v;
    },
    price,
    get preSwap() {
      return state.preSwap;
    },
    set preSwap(v) {
      state.preSwap = v;
    },
    override(prefix, status, body, opts = {}) {
      overrides.push({ prefix, status, body, once: opts.once ?? true, delayMs: opts.delayMs ?? 0 });
    },
    setStatus(orderId, status) {
      orders.get(orderId.toLowerCase())!.status = status;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A party of an order as DLN's bytes: an EVM address's 20 bytes, or for DLN's Solana source a key's 32. */
const partyOf = (value: string, solana: boolean): Hex => (solana ? solanaKeyHex(value) : evmAddressToBytes(value as Address));

/** DLN's `Order` for a create-tx query with every address, as DLN would build it (maker: the sender). */
function orderOf(p: URLSearchParams, nonce: bigint, giveAmount: bigint, preSwapToken?: string): DlnOrder {
  const solana = Number(p.get("srcChainId")) === DLN_SOLANA_CHAIN_ID;
  return {
    makerOrderNonce: nonce,
    makerSrc: partyOf(p.get("senderAddress")!, solana),
    giveChainId: BigInt(p.get("srcChainId")!),
    giveTokenAddress: partyOf(preSwapToken ?? p.get("srcChainTokenIn")!, solana),
    giveAmount,
    takeChainId: BigInt(p.get("dstChainId")!),
    takeTokenAddress: evmAddressToBytes(p.get("dstChainTokenOut") as Address),
    takeAmount: BigInt(p.get("dstChainTokenOutAmount")!),
    receiverDst: evmAddressToBytes(p.get("dstChainTokenOutRecipient") as Address),
    givePatchAuthoritySrc: partyOf(p.get("srcChainOrderAuthorityAddress")!, solana),
    orderAuthorityAddressDst: evmAddressToBytes(p.get("dstChainOrderAuthorityAddress") as Address),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: "0x",
    externalCall: "0x",
  };
}
