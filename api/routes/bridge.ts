import { Hono } from "hono";
import type { AppDeps } from "../../core/deps.js";
import {
  type TakeToken,
  bridgeHoldings,
  paymentOrders,
  readBridgeOrderBody,
  readBridgeQuoteQuery,
  startBridgePayment,
} from "../../modules/bridge/index.js";
import { reportBridgeTx } from "../../flows/bridge-orders.js";
import type { AppEnv } from "../context.js";
import { errorsAs } from "../errors.js";
import { jsonBody, queryOf } from "../middleware/input.js";
import { rateLimit, rateOf, retryAfterSeconds } from "../middleware/rate-limit.js";
import { take } from "../middleware/rate-limit-store.js";

/** The bridge module's provider buckets, in the rate limits' table: one count for every API replica. */
const bucketsOf =
  (deps: AppDeps): TakeToken =>
  async (key, perMinute) => {
    const t = await take(deps.db, `g:${key}`, rateOf(perMinute), deps.now());
    return { allowed: t.allowed, retryAfterSeconds: retryAfterSeconds(t) };
  };

/**
 * /payments/:paymentId/bridge/*: cross-chain payment from the payer page (docs/bridge.md). Public like the payer
 * page's status route: the payment id (a random UUID) is the capability. `{error}` bodies; quotes and reports ask the
 * bridge provider, so they share a per-address budget ("payments.bridge"); what reaches the provider also spends the
 * service-wide provider budget (modules/bridge/budget.ts), kept in the same Postgres buckets.
 */
export const bridge = new Hono<AppEnv>()
  .get("/:paymentId/bridge/quote", errorsAs("plain"), rateLimit("payments.bridge"), async (c) => {
    c.header("Cache-Control", "no-store");
    const input = readBridgeQuoteQuery(queryOf(c));
    return c.json(await startBridgePayment(c.var.deps, c.req.param("paymentId"), input, bucketsOf(c.var.deps)));
  })
  .post("/:paymentId/bridge/orders", errorsAs("plain"), rateLimit("payments.bridge"), async (c) => {
    const { txHash } = readBridgeOrderBody(await jsonBody(c));
    return c.json(await reportBridgeTx(c.var.deps, c.req.param("paymentId"), txHash, bucketsOf(c.var.deps)));
  })
  .get("/:paymentId/bridge/holdings", errorsAs("plain"), rateLimit("payments.bridge"), async (c) => {
    c.header("Cache-Control", "no-store");
    return c.json(await bridgeHoldings(c.var.deps, c.req.param("paymentId"), queryOf(c)));
  })
  .get("/:paymentId/bridge/orders", errorsAs("plain"), async (c) => {
    c.header("Cache-Control", "no-store");
    return c.json(await paymentOrders(c.var.deps, c.req.param("paymentId")));
  });
