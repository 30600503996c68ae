import { encodeFunctionData, erc20Abi, getAddress, isAddress, zeroAddress, type Address, type Hex } from "viem";
import type { ActiveToken } from "../../chains/runtime.js";
import { bridgeSourceAbi, type BridgeOrder } from "./abi.js";
import type { BridgeChain, OrderBook } from "./orders.js";
import { bridgeToken, quoteExactIn, quoteExactOut, usdPrice18, type Quote, type QuoteTerms } from "./quote.js";

// GET /v1.0/dln/order/create-tx of the local stand-in: DLN's parameters and response shape (research notes in
// docs/bridge.md), priced by quote.ts, with a `tx` that calls our BridgeSource.createOrder.

/** An error answered with DLN's envelope `{errorCode, errorId, errorMessage}`. */
export class DlnError extends Error {
  constructor(
    readonly errorId: string,
    message: string,
    readonly status: 400 | 404 | 500 = 400,
  ) {
    super(message);
  }
}

// Only INVALID_QUERY_PARAMETERS = 2 is evidenced for the real API; the other numbers are the stand-in's own
// (clients branch on errorId).
const ERROR_CODES: Record<string, number> = {
  INTERNAL_SERVER_ERROR: 0,
  INVALID_QUERY_PARAMETERS: 2,
  SOURCE_AND_DESTINATION_CHAINS_ARE_EQUAL: 3,
  UNSUPPORTED_TOKEN_IN: 4,
  UNSUPPORTED_TOKEN_OUT: 5,
  ERROR_LOW_GIVE_AMOUNT: 6,
  SENDER_ADDRESS_EMPTY: 7,
  AFFILIATE_FEE_PERCENT_NOT_SET: 8,
  AFFILIATE_FEE_RECIPIENT_NOT_SET: 9,
  ESTIMATION_FAILED: 10,
  ORDER_NOT_FOUND: 11,
  ORDER_NOT_CANCELLABLE: 12,
};

export function errorBody(e: DlnError) {
  return { errorCode: ERROR_CODES[e.errorId] ?? 0, errorId: e.errorId, errorMessage: e.message };
}

const invalid = (message: string) => new DlnError("INVALID_QUERY_PARAMETERS", message);

export type CreateTxContext = {
  chains: BridgeChain[];
  book: OrderBook;
  terms: QuoteTerms;
  /** Seconds the stand-in announces as `order.approximateFulfillmentDelay`. */
  fulfillmentDelay: number;
  /** The next order salt (a millisecond timestamp, strictly increasing, like DLN's). */
  nextSalt(): bigint;
};

/** Chains that can be both ends of an order (both bridge contracts deployed). */
export function bridgeable(chains: BridgeChain[]): BridgeChain[] {
  return chains.filter((c) => c.bridgeSource && c.bridgeDestination);
}

const names = new Map<string, string>();
/** The token's ERC-20 name as DLN reports it (the symbol for the native coin or when the read fails). */
async function tokenName(ctx: CreateTxContext, chain: BridgeChain, token: ActiveToken): Promise<string> {
  if (token.address === zeroAddress) return token.symbol;
  const key = `${chain.chainId}:${token.address}`;
  let name = names.get(key);
  if (name === undefined) {
    name = await ctx.book
      .client(chain.chainId)
      .readContract({ address: token.address, abi: erc20Abi, functionName: "name" })
      .catch(() => token.symbol);
    names.set(key, name);
  }
  return name;
}

/**
 * Answers one create-tx query: the estimation, and with recipient, authorities and sender the createOrder
 * transaction and the order id (the order is remembered by the book). Throws DlnError on a bad query.
 *
 *   await createTx(new URLSearchParams({ srcChainId: "137", srcChainTokenIn: usdc137, srcChainTokenInAmount: "auto",
 *     dstChainId: "777177", dstChainTokenOut: usdc777177, dstChainTokenOutAmount: "10000000" }), ctx)
 *   // { estimation: { srcChainTokenIn: { amount: "10130000", … }, dstChainTokenOut: { amount: "10000000", … }, … }, … }
 */
export async function createTx(q: URLSearchParams, ctx: CreateTxContext): Promise<Record<string, unknown>> {
  const chains = bridgeable(ctx.chains);
  const param = (name: string) => {
    const v = q.get(name)?.trim();
    return v ? v : undefined;
  };
  const need = (name: string) => {
    const v = param(name);
    if (v === undefined) throw invalid(`${name} should not be empty`);
    return v;
  };
  const chainParam = (name: string) => {
    const v = need(name);
    const c = /^\d+$/.test(v) ? chains.find((x) => x.chainId === Number(v)) : undefined;
    if (!c) throw invalid(`${name} must be one of the following values: ${chains.map((x) => x.chainId).join(", ")}`);
    return c;
  };
  const addressParam = (name: string): Address | undefined => {
    const v = param(name);
    if (v === undefined) return undefined;
    if (!isAddress(v, { strict: false })) throw invalid(`${name} is not a valid EVM address`);
    return getAddress(v);
  };
  const amountParam = (name: string): bigint | "auto" => {
    const v = param(name) ?? "auto";
    if (v === "auto") return v;
    if (!/^\d+$/.test(v)) throw invalid(`${name} must be an integer amount in the token's smallest units or "auto"`);
    if (BigInt(v) === 0n) throw invalid(`${name} must be positive`);
    return BigInt(v);
  };

  const src = chainParam("srcChainId");
  const dst = chainParam("dstChainId");
  if (src.chainId === dst.chainId)
    throw new DlnError("SOURCE_AND_DESTINATION_CHAINS_ARE_EQUAL", "srcChainId and dstChainId must be different chains");
  const tokenInAddress = addressParam("srcChainTokenIn") ?? need("srcChainTokenIn");
  const tokenOutAddress = addressParam("dstChainTokenOut") ?? need("dstChainTokenOut");
  const tokenIn = bridgeToken(src, tokenInAddress);
  if (!tokenIn) throw new DlnError("UNSUPPORTED_TOKEN_IN", `token ${tokenInAddress} is not supported on chain ${src.chainId}`);
  const tokenOut = bridgeToken(dst, tokenOutAddress);
  if (!tokenOut) throw new DlnError("UNSUPPORTED_TOKEN_OUT", `token ${tokenOutAddress} is not supported on chain ${dst.chainId}`);
  if (param("srcChainTokenInAmount") === "max") throw invalid(`srcChainTokenInAmount=max is not supported by the local stand-in`);
  need("srcChainTokenInAmount");
  const amountIn = amountParam("srcChainTokenInAmount");
  const amountOut = amountParam("dstChainTokenOutAmount");
  if ((amountIn === "auto") === (amountOut === "auto"))
    throw invalid('exactly one of srcChainTokenInAmount and dstChainTokenOutAmount must be "auto"');

  const recipient = addressParam("dstChainTokenOutRecipient");
  const sender = addressParam("senderAddress");
  const srcAuthority = addressParam("srcChainOrderAuthorityAddress");
  const dstAuthority = addressParam("dstChainOrderAuthorityAddress");
  const refund = addressParam("srcChainRefundAddress");
  const prepend = param("prependOperatingExpenses") === "true";
  const affiliatePercent = param("affiliateFeePercent");
  const affiliateRecipient = addressParam("affiliateFeeRecipient");
  if (affiliatePercent !== undefined && !affiliateRecipient)
    throw new DlnError("AFFILIATE_FEE_RECIPIENT_NOT_SET", "affiliateFeeRecipient must be set with affiliateFeePercent");
  if (affiliateRecipient && affiliatePercent === undefined)
    throw new DlnError("AFFILIATE_FEE_PERCENT_NOT_SET", "affiliateFeePercent must be set with affiliateFeeRecipient");
  if (affiliatePercent !== undefined && !/^0*(\.0*)?$/.test(affiliatePercent))
    throw invalid("affiliate fees are not supported by the local stand-in (affiliateFeePercent must be 0)");

  // With none of recipient and authorities: an estimation only (DLN's behaviour); with some: all are needed.
  const orderParams = {
    dstChainTokenOutRecipient: recipient,
    srcChainOrderAuthorityAddress: srcAuthority,
    dstChainOrderAuthorityAddress: dstAuthority,
  };
  const given = Object.entries(orderParams).filter(([, v]) => v);
  if (given.length && given.length < 3)
    throw invalid(
      `${Object.keys(orderParams)
        .filter((k) => !orderParams[k as keyof typeof orderParams])
        .join(", ")} should not be empty`,
    );
  if (given.length && !sender) throw new DlnError("SENDER_ADDRESS_EMPTY", "senderAddress should not be empty");

  const [priceIn, priceOut] = await Promise.all([
    usdPrice18(ctx.chains, ctx.book.clients, src, tokenIn),
    usdPrice18(ctx.chains, ctx.book.clients, dst, tokenOut),
  ]);
  if (!priceIn) throw new DlnError("UNSUPPORTED_TOKEN_IN", `no USD price for ${tokenIn.symbol} on chain ${src.chainId}`);
  if (!priceOut) throw new DlnError("UNSUPPORTED_TOKEN_OUT", `no USD price for ${tokenOut.symbol} on chain ${dst.chainId}`);
  const pin = { decimals: tokenIn.decimals, price18: priceIn };
  const pout = { decimals: tokenOut.decimals, price18: priceOut };
  let quote: Quote | null;
  if (amountOut !== "auto") quote = quoteExactOut(amountOut, pin, pout, ctx.terms);
  else {
    quote = quoteExactIn(amountIn as bigint, pin, pout, ctx.terms);
    if (!quote) throw new DlnError("ERROR_LOW_GIVE_AMOUNT", "srcChainTokenInAmount does not cover the fees");
  }

  const [nameIn, nameOut] = await Promise.all([tokenName(ctx, src, tokenIn), tokenName(ctx, dst, tokenOut)]);
  const tokenJson = (c: BridgeChain, t: ActiveToken, name: string) => ({
    address: t.address,
    chainId: c.chainId,
    decimals: t.decimals,
    name,
    symbol: t.symbol,
  });
  const net = quote.amountIn - quote.operatingExpense;
  const body: Record<string, unknown> = {
    estimation: {
      srcChainTokenIn: {
        ...tokenJson(src, tokenIn, nameIn),
        amount: String(quote.amountIn),
        approximateOperatingExpense: String(quote.operatingExpense),
        mutatedWithOperatingExpense: prepend,
      },
      dstChainTokenOut: {
        ...tokenJson(dst, tokenOut, nameOut),
        amount: String(quote.amountOut),
        recommendedAmount: String(quote.amountOut),
        maxTheoreticalAmount: String(quote.amountOut),
      },
      recommendedSlippage: 0,
      costsDetails: [
        {
          chain: String(src.chainId),
          tokenIn: tokenIn.address,
          tokenOut: tokenIn.address,
          amountIn: String(quote.amountIn),
          amountOut: String(net),
          type: "EstimatedOperatingExpenses",
          payload: { feeAmount: String(quote.operatingExpense) },
        },
        {
          chain: String(src.chainId),
          tokenIn: tokenIn.address,
          tokenOut: tokenIn.address,
          amountIn: String(net),
          amountOut: String(net - quote.takerMargin),
          type: "TakerMargin",
          payload: { feeAmount: String(quote.takerMargin), feeBps: String(ctx.terms.feeBps) },
        },
      ],
    },
    ...(prepend ? { prependedOperatingExpenseCost: String(quote.operatingExpense) } : {}),
    fixFee: "0",
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay },
  };
  if (!given.length) return body;

  const salt = ctx.nextSalt();
  const order: BridgeOrder = {
    nonce: salt,
    maker: sender!,
    giveChainId: BigInt(src.chainId),
    giveToken: tokenIn.address,
    giveAmount: quote.amountIn,
    takeChainId: BigInt(dst.chainId),
    takeToken: tokenOut.address,
    takeAmount: quote.amountOut,
    receiver: recipient!,
    orderAuthorityDst: dstAuthority!,
    refundTo: refund ?? srcAuthority!,
  };
  const orderId: Hex = ctx.book.remember(order).orderId;
  const native = tokenIn.address === zeroAddress;
  return {
    ...body,
    tx: {
      to: src.bridgeSource,
      data: encodeFunctionData({ abi: bridgeSourceAbi, functionName: "createOrder", args: [order] }),
      value: native ? String(quote.amountIn) : "0",
      ...(native ? {} : { allowanceTarget: src.bridgeSource, allowanceValue: String(quote.amountIn) }),
    },
    orderId,
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay, salt: Number(salt) },
  };
}
