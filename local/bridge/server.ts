import { serve } from "@hono/node-server";
import { Hono, type Context } from "hono";
import { encodeFunctionData, getAddress, isAddress, size, type Hex } from "viem";
import { SOLANA } from "../../chains/solana.js";
import { firstLine, logger } from "../../core/log.js";
import { solanaKeyOfHex } from "../../modules/bridge/index.js";
import { bridgeDestinationAbi, bytesToEvmAddress, DLN_SOLANA_CHAIN_ID, GIVE, TAKE } from "./abi.js";
import { bridgeable, createTx, DlnError, errorBody, type CreateTxContext } from "./create-tx.js";
import { coversSolanaRewards, messageValue, readGateFee, SOLANA_DIVIDER } from "./gate-fee.js";
import { OrderBook, type BridgeChain } from "./orders.js";
import { DEFAULT_TERMS, type QuoteTerms } from "./quote.js";
import { isSignature, type SolanaOrderBook } from "./solana-orders.js";

// The local stand-in of deBridge DLN's HTTP API (https://dln.debridge.finance): the paths and JSON shapes the
// service's DLN adapter speaks, answered from our bridge contracts on the local chains. BRIDGE_API_URL = `url`.
// See docs/bridge.md.

export type BridgeStandInOptions = {
  chains: BridgeChain[];
  /** Default: a free port on 127.0.0.1. */
  port?: number;
  terms?: QuoteTerms;
  /** Announced as `order.approximateFulfillmentDelay` (seconds). */
  fulfillmentDelay?: number;
  /**
   * Receivers (lower-case addresses) whose orders the solver leaves unfilled, shared with startSolver's `skip`;
   * given, POST/DELETE /local/solver/skip/{address} edit it (tests in other processes than the stack's).
   */
  skipReceivers?: Set<string>;
  /**
   * The give side of Solana-source orders (the local Solana runs): create-tx takes srcChainId 7565164, order-ids
   * takes a transaction signature. Shared with the solver's `solana.book`.
   */
  solana?: SolanaOrderBook;
};

export type BridgeStandIn = {
  /** DLN's base URL (paths start with /v1.0/dln/…): BRIDGE_API_URL. */
  url: string;
  port: number;
  book: OrderBook;
  /** Path and query of the latest requests (the last 1000), for tests of what a client sends. */
  requests: string[];
  close(): Promise<void>;
};

const ID_RE = /^0x[0-9a-fA-F]{64}$/;
/**
 * The stand-in's execution fee of a cancel (the keeper's pay for claiming it on the source): one tenth of the gate's
 * fixed fee, in the destination's native coin. DLN's API sets its own ("a small amount to cover the gas on the source
 * chain … for keepers"); its real size is not documented.
 */
export const EXECUTION_FEE_DIVISOR = 10n;
const log = logger("bridge-stand-in");

/**
 * The stand-in's routes (no listener): create-tx, order status, order data, cancel-tx, tx order ids, supported chains.
 *
 *   const app = createBridgeApp({ chains }, new OrderBook(chains), []);
 *   await app.request("/v1.0/dln/order/0x…/status"); // {"orderId":"0x…","status":"Created"}
 */
export function createBridgeApp(opts: BridgeStandInOptions, book: OrderBook, requests: string[]): Hono {
  let lastSalt = 0n;
  const ctx: CreateTxContext = {
    chains: opts.chains,
    book,
    terms: opts.terms ?? DEFAULT_TERMS,
    fulfillmentDelay: opts.fulfillmentDelay ?? 3,
    solana: opts.solana,
    nextSalt() {
      const now = BigInt(Date.now());
      lastSalt = now > lastSalt ? now : lastSalt + 1n;
      return lastSalt;
    },
  };
  /** The order of an id path parameter, after reading new logs when the book does not know it yet. */
  const orderOf = async (c: Context) => {
    const id = c.req.param("id") ?? "";
    if (!ID_RE.test(id)) throw new DlnError("INVALID_QUERY_PARAMETERS", "id must be a 32-byte hex order id");
    if (!book.get(id)) await book.sync();
    const f = book.get(id);
    if (!f) throw new DlnError("ORDER_NOT_FOUND", `order ${id} not found`, 404);
    return f;
  };

  const app = new Hono();
  app.use(async (c, next) => {
    const u = new URL(c.req.url);
    requests.push(u.pathname + u.search);
    if (requests.length > 1000) requests.splice(0, requests.length - 1000);
    await next();
  });
  app.onError((e, c) => {
    if (e instanceof DlnError) return c.json(errorBody(e), e.status);
    log.warn({ error: firstLine(e), path: c.req.path }, "request failed");
    return c.json(errorBody(new DlnError("INTERNAL_SERVER_ERROR", firstLine(e), 500)), 500);
  });

  app.get("/v1.0/dln/order/create-tx", async (c) => c.json(await createTx(new URL(c.req.url).searchParams, ctx)));

  app.get("/v1.0/dln/order/:id/status", async (c) => {
    const f = await orderOf(c);
    return c.json({ orderId: f.orderId, status: await book.status(f.orderId) });
  });

  app.get("/v1.0/dln/order/:id/cancel-tx", async (c) => {
    const f = await orderOf(c);
    const o = f.order;
    const solanaSource = o.giveChainId === BigInt(DLN_SOLANA_CHAIN_ID);
    const dst = book.chain(o.takeChainId);
    // A Solana-source order's give status is the Solana order book's (its escrow transfer landed).
    const { give, take } = await book.statuses(f);
    if (give !== GIVE.Created || take !== TAKE.NotSet || !dst?.bridgeDestination)
      throw new DlnError(
        "ORDER_NOT_CANCELLABLE",
        `order ${f.orderId} cannot be cancelled: only an unfulfilled order created on the source can`,
      );
    // DLN's API names the source authority as the cancel beneficiary: the refund goes there, not to srcChainRefundAddress
    // (an order that binds its beneficiary, allowedCancelBeneficiarySrc, can only name that one).
    const beneficiary = o.allowedCancelBeneficiarySrc !== "0x" ? o.allowedCancelBeneficiarySrc : o.givePatchAuthoritySrc;
    const fee = await readGateFee(book.client(dst.chainId), dst.bridgeDestination, o.giveChainId);
    const executionFee = fee.fixFee / EXECUTION_FEE_DIVISOR;
    let data: Hex;
    let value: bigint;
    if (solanaSource) {
      // DLN's Solana check counts rewards in 8-decimal units: the keeper's share rides as the claim_cancel reward.
      const reward = (executionFee + SOLANA_DIVIDER - 1n) / SOLANA_DIVIDER;
      value = messageValue(fee, reward * SOLANA_DIVIDER);
      while (!coversSolanaRewards(fee, value, 0n, reward)) value += SOLANA_DIVIDER;
      data = encodeFunctionData({
        abi: bridgeDestinationAbi,
        functionName: "sendSolanaOrderCancel",
        args: [o, beneficiary, 0n, 0n, reward],
      });
    } else {
      value = messageValue(fee, executionFee);
      data = encodeFunctionData({
        abi: bridgeDestinationAbi,
        functionName: "sendEvmOrderCancel",
        args: [o, bytesToEvmAddress(beneficiary), executionFee],
      });
    }
    return c.json({
      to: dst.bridgeDestination,
      data,
      value: String(value),
      chainId: dst.chainId,
      from: bytesToEvmAddress(o.orderAuthorityAddressDst),
      // DLN's API names the beneficiary in the source chain's own format: base58 for a Solana key.
      cancelBeneficiary: size(beneficiary) === 20 ? bytesToEvmAddress(beneficiary) : solanaKeyOfHex(beneficiary),
    });
  });

  // DLN's order data (orderStruct in its field names; 20-byte fields as checksummed addresses).
  app.get("/v1.0/dln/order/:id", async (c) => {
    const f = await orderOf(c);
    const o = f.order;
    // A Solana order's creating signature is the Solana order book's (the book here syncs only for unknown ids).
    const createdTx = f.createdTx ?? opts.solana?.get(f.orderId)?.createdTx;
    const party = (b: Hex) => (size(b) === 20 ? bytesToEvmAddress(b) : b);
    return c.json({
      orderId: f.orderId,
      status: await book.status(f.orderId),
      externalCallState: "NoExtCall",
      orderStruct: {
        makerOrderNonce: Number(o.makerOrderNonce),
        makerSrc: party(o.makerSrc),
        giveOffer: { chainId: Number(o.giveChainId), tokenAddress: party(o.giveTokenAddress), amount: String(o.giveAmount) },
        receiverDst: party(o.receiverDst),
        takeOffer: { chainId: Number(o.takeChainId), tokenAddress: party(o.takeTokenAddress), amount: String(o.takeAmount) },
        givePatchAuthoritySrc: party(o.givePatchAuthoritySrc),
        orderAuthorityAddressDst: party(o.orderAuthorityAddressDst),
        allowedTakerDst: o.allowedTakerDst === "0x" ? null : party(o.allowedTakerDst),
        allowedCancelBeneficiarySrc: o.allowedCancelBeneficiarySrc === "0x" ? null : party(o.allowedCancelBeneficiarySrc),
        externalCall: null,
      },
      ...(createdTx ? { srcChainTxHash: createdTx } : {}),
    });
  });

  app.get("/v1.0/dln/tx/:hash/order-ids", async (c) => {
    const hash = c.req.param("hash");
    // A Solana transaction's signature (base58, 64 bytes): the orders its escrow transfer created ([] before it landed).
    if (opts.solana && isSignature(hash)) return c.json({ orderIds: opts.solana.orderIdsOfSignature(hash) });
    if (!ID_RE.test(hash))
      throw new DlnError("INVALID_QUERY_PARAMETERS", "hash must be a 32-byte transaction hash or a Solana transaction signature");
    return c.json({ orderIds: await book.orderIdsOfTx(hash as Hex) });
  });

  app.get("/v1.0/supported-chains-info", (c) =>
    c.json({
      chains: [
        ...bridgeable(opts.chains).map((x) => ({ chainId: x.chainId, originalChainId: x.chainId, chainName: x.name })),
        // A source only (orders from Solana are filled on the EVM chains).
        ...(opts.solana ? [{ chainId: DLN_SOLANA_CHAIN_ID, originalChainId: DLN_SOLANA_CHAIN_ID, chainName: SOLANA.name }] : []),
      ],
    }),
  );

  // Not DLN's: the local solver's skip list, so a test can leave its order unfilled.
  const skip = async (c: Context, add: boolean) => {
    const address = c.req.param("address") ?? "";
    if (!opts.skipReceivers) throw new DlnError("ORDER_NOT_FOUND", "this stand-in runs no solver", 404);
    if (!isAddress(address, { strict: false })) throw new DlnError("INVALID_QUERY_PARAMETERS", "not an address");
    const key = getAddress(address).toLowerCase();
    if (add) opts.skipReceivers.add(key);
    else opts.skipReceivers.delete(key);
    return c.body(null, 204);
  };
  app.post("/local/solver/skip/:address", (c) => skip(c, true));
  app.delete("/local/solver/skip/:address", (c) => skip(c, false));

  app.notFound((c) => c.json(errorBody(new DlnError("NOT_FOUND", `no route ${c.req.method} ${c.req.path}`, 404)), 404));
  return app;
}

/**
 * Starts the stand-in on 127.0.0.1 after rebuilding its order book from the chains' logs.
 *
 *   const bridge = await startBridgeStandIn({ chains });
 *   process.env.BRIDGE_API_URL = bridge.url; // http://127.0.0.1:40123
 *   await bridge.close();
 */
export async function startBridgeStandIn(opts: BridgeStandInOptions): Promise<BridgeStandIn> {
  const book = new OrderBook(opts.chains, undefined, opts.solana);
  await book.sync();
  const requests: string[] = [];
  const app = createBridgeApp(opts, book, requests);
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve) => {
    const server = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: "127.0.0.1" }, (info) => resolve({ server, port: info.port }));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    book,
    requests,
    close: () =>
      new Promise<void>((r) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
