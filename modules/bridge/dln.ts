import { z } from "zod";
import type { Config } from "../../core/config.js";
import { Conflict, DomainError, Invalid, Unavailable } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { DLN_SOLANA_CHAIN_ID } from "./dln-order.js";
import {
  PROVIDER_ORDER_STATUSES,
  type BridgeCancelTx,
  type BridgeProvider,
  type BridgeQuote,
  type BridgeTx,
  type OrderTxRequest,
  type ProviderOrderStatus,
  type QuoteRequest,
} from "./provider.js";

/**
 * The deBridge DLN adapter (docs.debridge.com, "DLN API"): production points BRIDGE_API_URL at
 * `https://dln.debridge.finance`, tests and `npm start` at the local stand-in, which speaks the same subset:
 *
 *   GET {base}/v1.0/dln/order/create-tx?srcChainId&srcChainTokenIn&srcChainTokenInAmount=auto&dstChainId
 *       &dstChainTokenOut&dstChainTokenOutAmount=<exact>[&dstChainTokenOutRecipient&senderAddress
 *       &srcChainOrderAuthorityAddress&dstChainOrderAuthorityAddress&srcChainRefundAddress]&prependOperatingExpenses=true
 *       -> { estimation: {srcChainTokenIn, dstChainTokenOut, ...}, tx?: {to, data, value, allowanceTarget?, allowanceValue?},
 *            orderId?, fixFee, order?: {approximateFulfillmentDelay} }   (no addresses: an estimation, no tx)
 *   GET {base}/v1.0/dln/order/{id}/status      -> { orderId, status }   (404 or `None` before it is indexed)
 *   GET {base}/v1.0/dln/tx/{hash}/order-ids    -> { orderIds: [...] }
 *   GET {base}/v1.0/dln/order/{id}/cancel-tx   -> { to, data, value, chainId, from, cancelBeneficiary }
 *
 * BRIDGE_API_KEY goes in the `accesstoken` query parameter (DLN's authentication). DLN's errors are
 * `{errorCode, errorId, errorMessage}` (HTTP 4xx): mapped by `errorId` (its numeric codes are undocumented) to
 * domain errors with our own fixed messages (dlnError below); the provider's text is logged, never shown.
 * Every answer is checked with zod: a body of another shape is `Unavailable`, never half-read.
 */

export const DLN_TIMEOUT_MS = 10_000;

const uint = z.string().regex(/^[0-9]+$/, "not an unsigned integer string");
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, "not hex");
const orderId = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "not an order id");

const token = z.object({
  address: z.string(),
  chainId: z.coerce.number().int(),
  decimals: z.number().int().min(0).max(255),
  symbol: z.string(),
  amount: uint,
});

/** The create-tx answer (the fields we read; DLN sends many more). */
export const createTxResponse = z.object({
  estimation: z.object({
    srcChainTokenIn: token.extend({ approximateOperatingExpense: uint.optional() }),
    /**
     * What the order escrows on the source, when it is not the input: a non-reserve input (native MATIC, USDT, …) is
     * swapped to a reserve asset (USDC, ETH/wETH) before the order is created, and a cancelled order refunds this.
     */
    srcChainTokenOut: token.extend({ maxRefundAmount: uint.optional() }).optional(),
    dstChainTokenOut: token,
  }),
  // A Solana source's tx is `{data}` only: 0x-hex of an unsigned VersionedTransaction.
  tx: z
    .object({
      to: z.string().optional(),
      data: hex,
      value: uint.default("0"),
      allowanceTarget: z.string().optional(),
      allowanceValue: uint.optional(),
    })
    .optional(),
  orderId: orderId.optional(),
  fixFee: uint.default("0"),
  order: z.object({ approximateFulfillmentDelay: z.number().nonnegative().optional() }).optional(),
});

export const orderStatusResponse = z.object({ status: z.enum(PROVIDER_ORDER_STATUSES) });
/** Order ids as strings, or in the stats API's `{stringValue}` objects (the two shapes deBridge documents). */
export const orderIdsResponse = z.object({
  orderIds: z.array(z.union([orderId, z.object({ stringValue: orderId }).transform((o) => o.stringValue)])),
});
export const cancelTxResponse = z.object({
  to: z.string(),
  data: hex,
  value: uint,
  chainId: z.coerce.number().int(),
  from: z.string(),
  cancelBeneficiary: z.string(),
});

/** DLN's error body. */
export const dlnErrorBody = z.object({ errorCode: z.number().optional(), errorId: z.string(), errorMessage: z.string().optional() });

export const BRIDGE_UNAVAILABLE = "Bridge unavailable";

/**
 * DLN errorIds that say the request itself cannot work (the payer's choice of token, amount or route): 400 with our
 * message. Every other errorId, including ones DLN adds later, is taken as transient (503 `Bridge unavailable`, logged
 * with the id): an unknown id must never tell a payer their request is wrong when it may be DLN's side or ours.
 */
const PERMANENT_BY_ERROR_ID: Record<string, () => DomainError> = {
  SOURCE_AND_DESTINATION_CHAINS_ARE_EQUAL: () => new Invalid("Source and destination networks must differ", "bridge_same_chain"),
  SAME_SOURCE_AND_DESTINATION_CHAINS: () => new Invalid("Source and destination networks must differ", "bridge_same_chain"),
  UNSUPPORTED_TOKEN_IN: () => new Invalid("Token not supported by the bridge", "bridge_unsupported_token_in"),
  UNSUPPORTED_TOKEN_OUT: () => new Invalid("Payment token not supported by the bridge", "bridge_unsupported_token_out"),
  ERROR_LOW_GIVE_AMOUNT: () => new Invalid("Amount too small to bridge", "bridge_amount_too_small"),
  INCLUDED_GAS_FEE_NOT_COVERED_BY_INPUT_AMOUNT: () => new Invalid("Amount too small to bridge", "bridge_amount_too_small"),
};

/** DLN errorIds that mean no route right now (liquidity, rates): 503 with a message the payer can act on. */
const NO_ROUTE_IDS = new Set(["IMPOSSIBLE_ROUTE", "ESTIMATION_FAILED", "UNABLE_TO_ESTIMATE_ORDER_FULFILLMENT", "RATE_OUTDATED"]);

/** A DLN error answer as a domain error: the permanent errorIds are 400; 429, 5xx, unknown ids and anything else: Unavailable. */
export function dlnError(status: number, body: unknown): DomainError {
  const env = dlnErrorBody.safeParse(body);
  if (status === 429 || status >= 500 || !env.success) return new Unavailable(BRIDGE_UNAVAILABLE);
  const permanent = PERMANENT_BY_ERROR_ID[env.data.errorId];
  if (permanent) return permanent();
  return new Unavailable(NO_ROUTE_IDS.has(env.data.errorId) ? "No bridge route available" : BRIDGE_UNAVAILABLE);
}

export type DlnOptions = {
  baseUrl: string;
  accessToken?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  log?: (msg: string) => void;
};

type Answer = { status: number; body: unknown };

export class DlnClient implements BridgeProvider {
  private readonly base: string;
  private readonly accessToken?: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly log: (msg: string) => void;

  constructor(opts: DlnOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.accessToken = opts.accessToken || undefined;
    this.timeoutMs = opts.timeoutMs ?? DLN_TIMEOUT_MS;
    this.fetchImpl = opts.fetch ?? fetch;
    this.log = opts.log ?? ((m) => logger("bridge").warn(m));
  }

  /** GET a path with its query (in the order given; `accesstoken` last). Network errors and timeouts: Unavailable. */
  private async get(path: string, query: [string, string][] = []): Promise<Answer> {
    const params = new URLSearchParams(query);
    if (this.accessToken) params.append("accesstoken", this.accessToken);
    const qs = params.toString();
    const url = `${this.base}${path}${qs ? `?${qs}` : ""}`;
    try {
      const res = await this.fetchImpl(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(this.timeoutMs) });
      const text = await res.text();
      let body: unknown = undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined; // a non-JSON answer: judged by its status below
      }
      return { status: res.status, body };
    } catch (e) {
      const err = e as Error;
      const why = err.name === "TimeoutError" || err.name === "AbortError" ? `timeout after ${this.timeoutMs} ms` : err.message;
      this.log(`GET ${path} -> ${why}`);
      throw new Unavailable(BRIDGE_UNAVAILABLE);
    }
  }

  /** A 2xx body read with its schema; a 4xx/5xx mapped (dlnError). */
  private read<S extends z.ZodType>(path: string, a: Answer, schema: S): z.output<S> {
    if (a.status < 200 || a.status >= 300) {
      const err = dlnError(a.status, a.body);
      const env = dlnErrorBody.safeParse(a.body);
      this.log(`GET ${path} -> HTTP ${a.status}${env.success ? ` ${env.data.errorId}: ${env.data.errorMessage ?? ""}` : ""}`);
      throw err;
    }
    const parsed = schema.safeParse(a.body);
    if (!parsed.success) {
      this.log(`GET ${path} -> unexpected answer: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`);
      throw new Unavailable(BRIDGE_UNAVAILABLE);
    }
    return parsed.data;
  }

  private async createTx(query: [string, string][]) {
    const path = "/v1.0/dln/order/create-tx";
    return this.read(path, await this.get(path, query), createTxResponse);
  }

  async quote(req: QuoteRequest): Promise<BridgeQuote> {
    return toQuote(await this.createTx([...amountQuery(req), ["prependOperatingExpenses", "true"]]));
  }

  async createOrderTx(req: OrderTxRequest): Promise<BridgeQuote & { orderId: string; tx: BridgeTx }> {
    const q = toQuote(
      await this.createTx([
        ...amountQuery(req),
        ["dstChainTokenOutRecipient", req.recipient],
        ["senderAddress", req.payer],
        ["srcChainOrderAuthorityAddress", req.payer],
        ["dstChainOrderAuthorityAddress", req.dstAuthority],
        ["srcChainRefundAddress", req.payer],
        ["prependOperatingExpenses", "true"],
      ]),
    );
    if (!q.tx || !q.orderId) {
      this.log("create-tx with every address answered without tx or orderId");
      throw new Unavailable(BRIDGE_UNAVAILABLE);
    }
    // An exact-output order must pay exactly what was asked: anything else is not the order we asked for.
    if (q.dstToken.amount !== req.dstAmount) {
      this.log(`create-tx answered ${q.dstToken.amount} out for ${req.dstAmount} asked`);
      throw new Unavailable(BRIDGE_UNAVAILABLE);
    }
    return { ...q, orderId: q.orderId, tx: q.tx };
  }

  async orderStatus(id: string): Promise<ProviderOrderStatus> {
    const path = `/v1.0/dln/order/${encodeURIComponent(id)}/status`;
    const a = await this.get(path);
    // Not indexed yet: a 404, or DLN's ORDER_NOT_FOUND envelope with another 4xx.
    if (a.status === 404 || (a.status < 500 && dlnErrorBody.safeParse(a.body).data?.errorId === "ORDER_NOT_FOUND")) return "None";
    return this.read(path, a, orderStatusResponse).status;
  }

  async orderIdsOfTx(txHash: string): Promise<string[]> {
    const path = `/v1.0/dln/tx/${encodeURIComponent(txHash)}/order-ids`;
    const a = await this.get(path);
    if (a.status === 404) return [];
    return this.read(path, a, orderIdsResponse).orderIds.map((x) => x.toLowerCase());
  }

  async cancelTx(id: string): Promise<BridgeCancelTx> {
    const path = `/v1.0/dln/order/${encodeURIComponent(id)}/cancel-tx`;
    const a = await this.get(path);
    // A 4xx here is the order's state (fulfilled, already cancelled), not the payer's request.
    if (a.status >= 400 && a.status < 500 && a.status !== 429) {
      this.log(`GET ${path} -> HTTP ${a.status}`);
      throw new Conflict("Bridge order is not cancellable");
    }
    const c = this.read(path, a, cancelTxResponse);
    return { ...c, value: BigInt(c.value) };
  }
}

/** The amount part of create-tx, in DLN's documented order: a reverse market order (exact output). */
function amountQuery(req: QuoteRequest): [string, string][] {
  return [
    ["srcChainId", String(req.srcChainId)],
    ["srcChainTokenIn", req.srcToken],
    ["srcChainTokenInAmount", "auto"],
    ["dstChainId", String(req.dstChainId)],
    ["dstChainTokenOut", req.dstToken],
    ["dstChainTokenOutAmount", req.dstAmount.toString()],
  ];
}

function toQuote(r: z.output<typeof createTxResponse>): BridgeQuote {
  const { srcChainTokenIn: src, srcChainTokenOut: out, dstChainTokenOut: dst } = r.estimation;
  // DLN returns srcChainTokenOut for a pre-swapped input; without it the order escrows (and refunds) the input itself.
  const refund = out ?? src;
  return {
    orderId: r.orderId?.toLowerCase() ?? null,
    srcToken: {
      address: src.address,
      chainId: src.chainId,
      decimals: src.decimals,
      symbol: src.symbol,
      amount: BigInt(src.amount),
      operatingExpense: src.approximateOperatingExpense !== undefined ? BigInt(src.approximateOperatingExpense) : null,
    },
    dstToken: { address: dst.address, chainId: dst.chainId, decimals: dst.decimals, symbol: dst.symbol, amount: BigInt(dst.amount) },
    refundToken: {
      address: refund.address,
      chainId: refund.chainId,
      decimals: refund.decimals,
      symbol: refund.symbol,
      amount: BigInt(refund.amount),
    },
    preSwap: out !== undefined && out.address.toLowerCase() !== src.address.toLowerCase(),
    fixFee: BigInt(r.fixFee),
    estimatedFulfillmentSeconds: r.order?.approximateFulfillmentDelay ?? null,
    tx: txOf(src.chainId, r.tx),
  };
}

/** The payer's transaction as DLN wrote it: Solana's is `{data}` only; an EVM one without `to` is no transaction. */
function txOf(srcChainId: number, tx: z.output<typeof createTxResponse>["tx"]): BridgeTx | null {
  if (!tx) return null;
  if (srcChainId === DLN_SOLANA_CHAIN_ID) return { kind: "solana", data: tx.data };
  if (tx.to === undefined) return null;
  return {
    kind: "evm",
    to: tx.to,
    data: tx.data,
    value: BigInt(tx.value),
    allowanceTarget: tx.allowanceTarget ?? null,
    allowanceValue: tx.allowanceValue !== undefined ? BigInt(tx.allowanceValue) : null,
  };
}

/**
 * The bridge of a configuration, or null when BRIDGE_API_URL is not set (cross-chain payments off).
 * @example
 * const bridge = bridgeFromConfig(deps.config);
 * if (bridge) await bridge.orderStatus("0x9ee6…5a01"); // "Created"
 */
export function bridgeFromConfig(
  config: Pick<Config, "BRIDGE_API_URL" | "BRIDGE_API_KEY">,
  opts: Partial<DlnOptions> = {},
): DlnClient | null {
  if (!config.BRIDGE_API_URL) return null;
  return new DlnClient({ baseUrl: config.BRIDGE_API_URL, accessToken: config.BRIDGE_API_KEY, ...opts });
}
