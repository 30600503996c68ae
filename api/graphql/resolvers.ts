import { createPayment } from "../../modules/payments/create.js";
import { gasTankView } from "../../modules/gas-tank/gas-tank.js";
import { listPayments } from "../../modules/payments/list.js";
import { promoStatus } from "../../modules/payments/promo.js";
import { validateCreatePayment } from "../../modules/payments/validate-create.js";
import { requestWithdraw } from "../../modules/payments/withdraw.js";
import type { AppDeps, Merchant } from "../../core/deps.js";
import { isUuid } from "../../core/ids.js";
import { merchantForKey } from "../middleware/api-key.js";
import { apiError, unauthenticated } from "./errors.js";
import { countCall } from "./limits.js";


/** Per request: the deps, who is asking, and the merchant of the key (looked up once, when first needed). */
export type GraphqlContext = {
  deps: AppDeps;
  apiKey: string | undefined;
  clientIp: string;
  merchant(): Promise<Merchant | null>;
};

export function graphqlContext(deps: AppDeps, apiKey: string | undefined, clientIp: string): GraphqlContext {
  let merchant: Promise<Merchant | null> | undefined;
  return { deps, apiKey, clientIp, merchant: () => (merchant ??= merchantForKey(deps, apiKey)) };
}

async function requireMerchant(ctx: GraphqlContext): Promise<Merchant> {
  const m = await ctx.merchant();
  if (!m) throw unauthenticated();
  return m;
}

const LIST_ARGS = ["limit", "cursor", "status", "createdAfter", "createdBefore", "orderId"] as const;
type ListArgs = Partial<Record<(typeof LIST_ARGS)[number], string | number | null>>;

/**
 * Root resolvers (graphql-js `rootValue`). Each does what its REST route does, in the same order,
 * with the same domain functions; REST's error bodies become errors with REST's message and
 * `extensions: {code, http}`. Objects returned may hold functions: graphql-js calls them only
 * for the fields that were asked for.
 */
export const rootValue = {
  /** GET /v1/payments (API key only: the dashboard's session cookie is not accepted here). */
  async payments(args: ListArgs, ctx: GraphqlContext) {
    const merchant = await requireMerchant(ctx);
    // REST reads these from the query string: the same strings, so the same checks and messages.
    const query: Record<string, string> = {};
    for (const k of LIST_ARGS) if (args[k] != null) query[k] = String(args[k]);
    const r = await listPayments(ctx.deps, merchant.id, query);
    if (!r.ok) throw apiError(r.error, 400, "invalid_query");
    return r.body;
  },

  /** GET /balance (60 calls a minute per key, like REST). */
  async balance(_args: unknown, ctx: GraphqlContext) {
    await countCall(ctx.deps, "balance", ctx);
    const merchant = await requireMerchant(ctx);
    return gasTankView(ctx.deps, merchant.id);
  },

  /** GET /promo-status. */
  async promoStatus(_args: unknown, ctx: GraphqlContext) {
    const merchant = await requireMerchant(ctx);
    return { freeTransactions: await promoStatus(ctx.deps.db.pool, merchant) };
  },

  /**
   * POST /payments: the rate limit (100 a minute per key), then the body's checks, then the key,
   * then creation: REST's order, so the first failing check names the same error.
   */
  async createPayment(args: { input: Record<string, unknown> }, ctx: GraphqlContext) {
    await countCall(ctx.deps, "createPayment", ctx);
    const deps = ctx.deps;
    const v = validateCreatePayment({ ...args.input }, { chains: deps.chains, now: deps.now() });
    if (!v.ok) throw apiError(v.error, 400);
    const merchant = await requireMerchant(ctx);
    let r;
    try {
      r = await createPayment(deps, merchant, v.input);
    } catch (e) {
      console.error("[graphql] createPayment failed", e);
      throw apiError("Failed to create payment", 500);
    }
    if (!r.ok) throw apiError(r.error, r.status);
    return { url: r.url, paymentId: r.paymentId };
  },

  /** POST /v1/payments/{paymentId}/withdraw. */
  async withdrawPayment(args: { paymentId: string }, ctx: GraphqlContext) {
    const merchant = await requireMerchant(ctx);
    if (!isUuid(args.paymentId)) throw apiError("Payment not found", 404);
    const out = await requestWithdraw(ctx.deps.db, merchant.id, args.paymentId, ctx.deps.now());
    if (!out.ok) throw apiError(out.error, out.status);
    return out.data;
  },
};
