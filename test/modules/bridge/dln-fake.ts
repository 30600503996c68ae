import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A scripted DLN HTTP server on 127.0.0.1 for the adapter's and the payment side's tests: it records every request
// (path and raw query string, as the adapter sent them) and answers in DLN's documented shapes. Orders quoted with
// every address get an id, a status the test sets (`setStatus`), and a cancel transaction to `cancelTo` on the
// destination, from the order's dstChainOrderAuthorityAddress: a real transaction the service's authority sends.

export type Recorded = { method: string; path: string; query: string; params: URLSearchParams };
export type FakeOrder = { orderId: string; params: URLSearchParams; status: string };

export type DlnFake = {
  url: string;
  requests: Recorded[];
  orders: Map<string, FakeOrder>;
  /** Order ids a source transaction created (what GET /v1.0/dln/tx/{hash}/order-ids answers). */
  txOrders: Map<string, string[]>;
  /** Where cancel transactions go (an account without code: the call just succeeds). */
  cancelTo: string;
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
  const state: { preSwap: DlnFake["preSwap"] } = { preSwap: null };

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
      const orderId = full ? `0x${randomBytes(32).toString("hex")}` : undefined;
      if (orderId) orders.set(orderId, { orderId, params: p, status: "None" });
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
      return send(200, {
        to: cancelTo,
        data: `0xd38d9626${order.orderId.slice(2)}`,
        value: "0",
        chainId: Number(order.params.get("dstChainId")),
        from: order.params.get("dstChainOrderAuthorityAddress"),
        cancelBeneficiary: order.params.get("srcChainRefundAddress"),
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
    cancelTo,
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
