import { encodeFunctionData, erc20Abi, getAddress, isAddress, zeroAddress, type Address, type Hex } from "viem";
import type { ActiveToken } from "../../chains/runtime.js";
import { isSolanaAddress, SOLANA } from "../../chains/solana.js";
import { solanaKeyHex } from "../../modules/bridge/index.js";
import { bridgeRouterStandInAbi, bridgeSourceAbi, DLN_SOLANA_CHAIN_ID, evmAddressToBytes, type DlnOrder } from "./abi.js";
import type { BridgeChain, OrderBook } from "./orders.js";
import { isReserve, preSwapOf, swapInFor, swapOut } from "./preswap.js";
import { bridgeToken, quoteExactIn, quoteExactOut, usdPrice18, type PricedToken, type Quote, type QuoteTerms } from "./quote.js";
import { SOLANA_FIX_FEE, type SolanaOrderBook } from "./solana-orders.js";

// GET /v1.0/dln/order/create-tx of the local stand-in: DLN's parameters and response shape (research notes in
// docs/bridge.md), priced by quote.ts, with a `tx` that calls our BridgeSource.createOrder with DLN's Order, or, for
// an input that is not a reserve asset, the pre-swap router's swapAndCreateOrder (preswap.ts), as DLN's API sends such
// inputs through DeBridgeRouter. From Solana (srcChainId 7565164, USDC only) `tx` is DLN's shape for Solana, `{data}`:
// an unsigned v0 transaction paying the stand-in's escrow (solana-orders.ts; no DLN Solana program: DESIGN option b).

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
  IMPOSSIBLE_ROUTE: 13,
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
  /** The give side of Solana-source orders, when the local Solana runs (else srcChainId 7565164 is unknown). */
  solana?: SolanaOrderBook;
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
/** The query's parameters, read and checked one by one (DLN's INVALID_QUERY_PARAMETERS on a bad one). */
function reader(q: URLSearchParams) {
  const param = (name: string) => {
    const v = q.get(name)?.trim();
    return v ? v : undefined;
  };
  const need = (name: string) => {
    const v = param(name);
    if (v === undefined) throw invalid(`${name} should not be empty`);
    return v;
  };
  return {
    param,
    need,
    chain(name: string, chains: BridgeChain[], extra: number[] = []) {
      const v = need(name);
      const c = /^\d+$/.test(v) ? chains.find((x) => x.chainId === Number(v)) : undefined;
      if (!c) throw invalid(`${name} must be one of the following values: ${[...chains.map((x) => x.chainId), ...extra].join(", ")}`);
      return c;
    },
    address(name: string): Address | undefined {
      const v = param(name);
      if (v === undefined) return undefined;
      if (!isAddress(v, { strict: false })) throw invalid(`${name} is not a valid EVM address`);
      return getAddress(v);
    },
    /** A Solana account: base58 of 32 bytes. */
    solanaAddress(name: string): string | undefined {
      const v = param(name);
      if (v === undefined) return undefined;
      if (!isSolanaAddress(v)) throw invalid(`${name} is not a valid Solana address (base58 of 32 bytes)`);
      return v;
    },
    amount(name: string): bigint | "auto" {
      const v = param(name) ?? "auto";
      if (v === "auto") return v;
      if (!/^\d+$/.test(v)) throw invalid(`${name} must be an integer amount in the token's smallest units or "auto"`);
      if (BigInt(v) === 0n) throw invalid(`${name} must be positive`);
      return BigInt(v);
    },
  };
}
type Reader = ReturnType<typeof reader>;

/** srcChainTokenInAmount and dstChainTokenOutAmount: exactly one is "auto". */
function readAmounts(p: Reader): { amountIn: bigint | "auto"; amountOut: bigint | "auto" } {
  if (p.param("srcChainTokenInAmount") === "max") throw invalid(`srcChainTokenInAmount=max is not supported by the local stand-in`);
  p.need("srcChainTokenInAmount");
  const amountIn = p.amount("srcChainTokenInAmount");
  const amountOut = p.amount("dstChainTokenOutAmount");
  if ((amountIn === "auto") === (amountOut === "auto"))
    throw invalid('exactly one of srcChainTokenInAmount and dstChainTokenOutAmount must be "auto"');
  return { amountIn, amountOut };
}

/** Affiliate parameters: both or neither, and a fee of 0 (the local contracts take none). */
function checkAffiliate(p: Reader, recipient: (name: string) => string | undefined) {
  const affiliatePercent = p.param("affiliateFeePercent");
  const affiliateRecipient = recipient("affiliateFeeRecipient");
  if (affiliatePercent !== undefined && !affiliateRecipient)
    throw new DlnError("AFFILIATE_FEE_RECIPIENT_NOT_SET", "affiliateFeeRecipient must be set with affiliateFeePercent");
  if (affiliateRecipient && affiliatePercent === undefined)
    throw new DlnError("AFFILIATE_FEE_PERCENT_NOT_SET", "affiliateFeePercent must be set with affiliateFeeRecipient");
  if (affiliatePercent !== undefined && !/^0*(\.0*)?$/.test(affiliatePercent))
    throw invalid("affiliate fees are not supported by the local stand-in (affiliateFeePercent must be 0)");
}

/**
 * With none of recipient and authorities: an estimation only (DLN's behaviour), false; with some: all are needed, and
 * the sender, true.
 */
function orderRequested(orderParams: Record<string, string | undefined>, sender: string | undefined): boolean {
  const given = Object.entries(orderParams).filter(([, v]) => v);
  if (given.length && given.length < Object.keys(orderParams).length)
    throw invalid(
      `${Object.keys(orderParams)
        .filter((k) => !orderParams[k])
        .join(", ")} should not be empty`,
    );
  if (given.length && !sender) throw new DlnError("SENDER_ADDRESS_EMPTY", "senderAddress should not be empty");
  return given.length > 0;
}

/** The quote for the requested amount: exact out (srcChainTokenInAmount=auto) or exact in. */
function quoteFor(amounts: ReturnType<typeof readAmounts>, give: PricedToken, out: PricedToken, terms: QuoteTerms): Quote {
  if (amounts.amountOut !== "auto") return quoteExactOut(amounts.amountOut, give, out, terms);
  const quote = quoteExactIn(amounts.amountIn as bigint, give, out, terms);
  if (!quote) throw new DlnError("ERROR_LOW_GIVE_AMOUNT", "srcChainTokenInAmount does not cover the fees");
  return quote;
}

type TokenJson = { address: string; chainId: number; decimals: number; name: string; symbol: string };

/** DLN's estimation of a quote, with the give token's costs (shared by EVM and Solana sources). */
function costsDetails(srcChainId: number, giveToken: string, quote: Quote, terms: QuoteTerms) {
  const net = quote.amountIn - quote.operatingExpense;
  return [
    {
      chain: String(srcChainId),
      tokenIn: giveToken,
      tokenOut: giveToken,
      amountIn: String(quote.amountIn),
      amountOut: String(net),
      type: "EstimatedOperatingExpenses",
      payload: { feeAmount: String(quote.operatingExpense) },
    },
    {
      chain: String(srcChainId),
      tokenIn: giveToken,
      tokenOut: giveToken,
      amountIn: String(net),
      amountOut: String(net - quote.takerMargin),
      type: "TakerMargin",
      payload: { feeAmount: String(quote.takerMargin), feeBps: String(terms.feeBps) },
    },
  ];
}

const dstTokenJson = (json: TokenJson, quote: Quote) => ({
  ...json,
  amount: String(quote.amountOut),
  recommendedAmount: String(quote.amountOut),
  maxTheoreticalAmount: String(quote.amountOut),
});

export async function createTx(q: URLSearchParams, ctx: CreateTxContext): Promise<Record<string, unknown>> {
  const p = reader(q);
  if (ctx.solana && p.param("srcChainId") === String(DLN_SOLANA_CHAIN_ID)) return solanaCreateTx(p, ctx, ctx.solana);
  const chains = bridgeable(ctx.chains);
  const chainParam = (name: string) => p.chain(name, chains, ctx.solana && name === "srcChainId" ? [DLN_SOLANA_CHAIN_ID] : []);
  const addressParam = p.address;
  const need = p.need;
  const param = p.param;

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
  const amounts = readAmounts(p);

  const recipient = addressParam("dstChainTokenOutRecipient");
  const sender = addressParam("senderAddress");
  const srcAuthority = addressParam("srcChainOrderAuthorityAddress");
  const dstAuthority = addressParam("dstChainOrderAuthorityAddress");
  const refund = addressParam("srcChainRefundAddress");
  // Binds the order's allowedCancelBeneficiarySrc (the name deBridge's own example types use; optional).
  const cancelBeneficiary = addressParam("srcAllowedCancelBeneficiary");
  const prepend = param("prependOperatingExpenses") === "true";
  checkAffiliate(p, addressParam);
  const given = orderRequested(
    { dstChainTokenOutRecipient: recipient, srcChainOrderAuthorityAddress: srcAuthority, dstChainOrderAuthorityAddress: dstAuthority },
    sender,
  );

  // A non-reserve input is swapped to the chain's USDC first: the order gives (escrows, refunds) USDC.
  const preSwap = isReserve(src, tokenIn)
    ? null
    : await preSwapOf(ctx.book.client(src.chainId), src, tokenIn, (id, m) => new DlnError(id, m));
  const giveToken = preSwap ? preSwap.usdc : tokenIn;
  const [priceGive, priceOut] = await Promise.all([
    usdPrice18(ctx.chains, ctx.book.clients, src, giveToken),
    usdPrice18(ctx.chains, ctx.book.clients, dst, tokenOut),
  ]);
  if (!priceGive) throw new DlnError("UNSUPPORTED_TOKEN_IN", `no USD price for ${giveToken.symbol} on chain ${src.chainId}`);
  if (!priceOut) throw new DlnError("UNSUPPORTED_TOKEN_OUT", `no USD price for ${tokenOut.symbol} on chain ${dst.chainId}`);
  const pgive = { decimals: giveToken.decimals, price18: priceGive };
  const pout = { decimals: tokenOut.decimals, price18: priceOut };
  // quote.amountIn is the order's giveAmount (in giveToken); amountIn what the payer sends (in tokenIn).
  let quote: Quote;
  let amountIn: bigint;
  if (amounts.amountOut !== "auto") {
    quote = quoteFor(amounts, pgive, pout, ctx.terms);
    amountIn = preSwap ? swapInFor(preSwap, quote.amountIn) : quote.amountIn;
  } else {
    amountIn = amounts.amountIn as bigint;
    quote = quoteFor({ ...amounts, amountIn: preSwap ? swapOut(preSwap, amountIn) : amountIn }, pgive, pout, ctx.terms);
  }
  // What the swap gives (>= giveAmount: the rounding surplus goes to the refund address).
  const swapped = preSwap ? swapOut(preSwap, amountIn) : quote.amountIn;
  if (preSwap && swapped > preSwap.stock)
    throw new DlnError("IMPOSSIBLE_ROUTE", `the pre-swap router's ${preSwap.usdc.symbol} on chain ${src.chainId} is short for this amount`);
  const fixFee = src.bridgeSource
    ? await ctx.book
        .client(src.chainId)
        .readContract({ address: src.bridgeSource, abi: bridgeSourceAbi, functionName: "globalFixedNativeFee" })
    : 0n;

  const [nameIn, nameGive, nameOut] = await Promise.all([
    tokenName(ctx, src, tokenIn),
    tokenName(ctx, src, giveToken),
    tokenName(ctx, dst, tokenOut),
  ]);
  const tokenJson = (c: BridgeChain, t: ActiveToken, name: string) => ({
    address: t.address,
    chainId: c.chainId,
    decimals: t.decimals,
    name,
    symbol: t.symbol,
  });
  const body: Record<string, unknown> = {
    estimation: {
      srcChainTokenIn: {
        ...tokenJson(src, tokenIn, nameIn),
        amount: String(amountIn),
        // In the input token: the USDC expense at the swap's price, rounded up.
        approximateOperatingExpense: String(preSwap ? swapInFor(preSwap, quote.operatingExpense) : quote.operatingExpense),
        mutatedWithOperatingExpense: prepend,
      },
      // Only for a pre-swapped input (DLN's shape): the reserve asset the order escrows, and a cancel refunds.
      ...(preSwap
        ? {
            srcChainTokenOut: {
              ...tokenJson(src, giveToken, nameGive),
              amount: String(quote.amountIn),
              maxRefundAmount: String(quote.amountIn),
              approximateOperatingExpense: String(quote.operatingExpense),
              mutatedWithOperatingExpense: prepend,
            },
          }
        : {}),
      dstChainTokenOut: dstTokenJson(tokenJson(dst, tokenOut, nameOut), quote),
      recommendedSlippage: 0,
      costsDetails: costsDetails(src.chainId, giveToken.address, quote, ctx.terms),
    },
    ...(prepend
      ? { prependedOperatingExpenseCost: String(preSwap ? swapInFor(preSwap, quote.operatingExpense) : quote.operatingExpense) }
      : {}),
    fixFee: String(fixFee),
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay },
  };
  if (!given) return body;

  const salt = ctx.nextSalt();
  // DLN's order as DlnSource would build it from the creation: makerSrc = the sender (tx.origin), the patch authority
  // = the source authority, no allowed taker, no external call.
  const order: DlnOrder = {
    makerOrderNonce: salt,
    makerSrc: evmAddressToBytes(sender!),
    giveChainId: BigInt(src.chainId),
    giveTokenAddress: evmAddressToBytes(giveToken.address),
    giveAmount: quote.amountIn,
    takeChainId: BigInt(dst.chainId),
    takeTokenAddress: evmAddressToBytes(tokenOut.address),
    takeAmount: quote.amountOut,
    receiverDst: evmAddressToBytes(recipient!),
    givePatchAuthoritySrc: evmAddressToBytes(srcAuthority!),
    orderAuthorityAddressDst: evmAddressToBytes(dstAuthority!),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: cancelBeneficiary ? evmAddressToBytes(cancelBeneficiary) : "0x",
    externalCall: "0x",
  };
  const orderId: Hex = ctx.book.remember(order).orderId;
  const native = tokenIn.address === zeroAddress;
  const value = String((native ? amountIn : 0n) + fixFee);
  const tx = preSwap
    ? {
        to: preSwap.router,
        data: encodeFunctionData({
          abi: bridgeRouterStandInAbi,
          functionName: "swapAndCreateOrder",
          // The surplus of the swap goes to srcChainRefundAddress (DLN: "extra value from slippage after a pre-swap").
          args: [tokenIn.address, amountIn, order, refund ?? srcAuthority!],
        }),
        value,
        ...(native ? {} : { allowanceTarget: preSwap.router, allowanceValue: String(amountIn) }),
      }
    : {
        to: src.bridgeSource,
        data: encodeFunctionData({ abi: bridgeSourceAbi, functionName: "createOrder", args: [order] }),
        value,
        ...(native ? {} : { allowanceTarget: src.bridgeSource, allowanceValue: String(amountIn) }),
      };
  return {
    ...body,
    tx,
    orderId,
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay, salt: Number(salt) },
  };
}

/**
 * create-tx from Solana (srcChainId 7565164) to a local EVM chain: USDC in (Circle's mint, the only token; priced as
 * 1.00 USD like EVM USDC), base58 source addresses, DLN's `tx = {data}` with the unsigned v0 transaction that pays the
 * stand-in's escrow (solana-orders.ts), and the creation `fixFee` in lamports (DLN's 0.015 SOL).
 *
 *   await createTx(new URLSearchParams({ srcChainId: "7565164", srcChainTokenIn: SOLANA.usdc.mint, … }), ctx)
 *   // { estimation: { srcChainTokenIn: { address: "EPjF…Dt1v", chainId: 7565164, … } }, tx: { data: "0x01…" }, orderId, fixFee: "15000000", … }
 */
async function solanaCreateTx(p: Reader, ctx: CreateTxContext, solana: SolanaOrderBook): Promise<Record<string, unknown>> {
  const dst = p.chain(
    "dstChainId",
    ctx.chains.filter((c) => c.bridgeDestination),
  );
  const tokenInMint = p.need("srcChainTokenIn");
  if (!isSolanaAddress(tokenInMint)) throw invalid("srcChainTokenIn is not a valid Solana address (base58 of 32 bytes)");
  const tokenOutAddress = p.address("dstChainTokenOut") ?? p.need("dstChainTokenOut");
  const usdc = SOLANA.usdc;
  if (tokenInMint !== usdc.mint)
    throw new DlnError(
      "UNSUPPORTED_TOKEN_IN",
      `token ${tokenInMint} is not supported on chain ${DLN_SOLANA_CHAIN_ID} (the local stand-in takes USDC only)`,
    );
  const tokenOut = bridgeToken(dst, tokenOutAddress);
  if (!tokenOut) throw new DlnError("UNSUPPORTED_TOKEN_OUT", `token ${tokenOutAddress} is not supported on chain ${dst.chainId}`);
  const amounts = readAmounts(p);

  const recipient = p.address("dstChainTokenOutRecipient");
  const sender = p.solanaAddress("senderAddress");
  const srcAuthority = p.solanaAddress("srcChainOrderAuthorityAddress");
  const dstAuthority = p.address("dstChainOrderAuthorityAddress");
  p.solanaAddress("srcChainRefundAddress"); // checked; unused (no pre-swap on Solana here)
  const cancelBeneficiary = p.solanaAddress("srcAllowedCancelBeneficiary");
  const prepend = p.param("prependOperatingExpenses") === "true";
  checkAffiliate(p, p.solanaAddress);
  const given = orderRequested(
    { dstChainTokenOutRecipient: recipient, srcChainOrderAuthorityAddress: srcAuthority, dstChainOrderAuthorityAddress: dstAuthority },
    sender,
  );

  const priceOut = await usdPrice18(ctx.chains, ctx.book.clients, dst, tokenOut);
  if (!priceOut) throw new DlnError("UNSUPPORTED_TOKEN_OUT", `no USD price for ${tokenOut.symbol} on chain ${dst.chainId}`);
  const quote = quoteFor(
    amounts,
    { decimals: usdc.decimals, price18: 10n ** 18n },
    { decimals: tokenOut.decimals, price18: priceOut },
    ctx.terms,
  );
  const nameOut = await tokenName(ctx, dst, tokenOut);
  const tokenIn = { address: usdc.mint, chainId: DLN_SOLANA_CHAIN_ID, decimals: usdc.decimals, name: "USD Coin", symbol: usdc.symbol };
  const body: Record<string, unknown> = {
    estimation: {
      srcChainTokenIn: {
        ...tokenIn,
        amount: String(quote.amountIn),
        approximateOperatingExpense: String(quote.operatingExpense),
        mutatedWithOperatingExpense: prepend,
      },
      dstChainTokenOut: dstTokenJson(
        { address: tokenOut.address, chainId: dst.chainId, decimals: tokenOut.decimals, name: nameOut, symbol: tokenOut.symbol },
        quote,
      ),
      recommendedSlippage: 0,
      costsDetails: costsDetails(DLN_SOLANA_CHAIN_ID, usdc.mint, quote, ctx.terms),
    },
    ...(prepend ? { prependedOperatingExpenseCost: String(quote.operatingExpense) } : {}),
    fixFee: String(SOLANA_FIX_FEE),
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay },
  };
  if (!given) return body;

  const salt = ctx.nextSalt();
  // DLN's order with 32-byte Solana fields (makerSrc = the signer, the mint, the patch authority).
  const order: DlnOrder = {
    makerOrderNonce: salt,
    makerSrc: solanaKeyHex(sender!),
    giveChainId: BigInt(DLN_SOLANA_CHAIN_ID),
    giveTokenAddress: solanaKeyHex(usdc.mint),
    giveAmount: quote.amountIn,
    takeChainId: BigInt(dst.chainId),
    takeTokenAddress: evmAddressToBytes(tokenOut.address),
    takeAmount: quote.amountOut,
    receiverDst: evmAddressToBytes(recipient!),
    givePatchAuthoritySrc: solanaKeyHex(srcAuthority!),
    orderAuthorityAddressDst: evmAddressToBytes(dstAuthority!),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: cancelBeneficiary ? solanaKeyHex(cancelBeneficiary) : "0x",
    externalCall: "0x",
  };
  const orderId: Hex = ctx.book.remember(order).orderId;
  const data = await solana.createTransactionHex(solana.quote(orderId, order, SOLANA_FIX_FEE));
  return {
    ...body,
    tx: { data },
    orderId,
    order: { approximateFulfillmentDelay: ctx.fulfillmentDelay, salt: Number(salt) },
  };
}
