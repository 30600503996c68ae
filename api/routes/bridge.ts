import { Hono } from "hono";
import {
  paymentOrders,
  readBridgeOrderBody,
  readBridgeQuoteQuery,
  reportBridgeTx,
  startBridgePayment,
} from "../../modules/bridge/orders.js";
import type { AppEnv } from "../context.js";
import { errorsAs } from "../errors.js";
import { jsonBody, queryOf } from "../middleware/input.js";
import { rateLimit } from "../middleware/rate-limit.js";

/**
 * /payments/:paymentId/bridge/*: cross-chain payment from the payer page (docs/bridge.md). Public like the payer
 * page's status route: the payment id (a random UUID) is the capability. `{error}` bodies; quotes and reports ask the
 * bridge provider, so they share a per-address budget ("payments.bridge").
 */
export const bridge = new Hono<AppEnv>()
  .get("/:paymentId/bridge/quote", errorsAs("plain"), rateLimit("payments.bridge"), async (c) => {
    c.header("Cache-Control", "no-store");
    const input = readBridgeQuoteQuery(queryOf(c));
    return c.json(await startBridgePayment(c.var.deps, c.req.param("paymentId"), input));
  })
  .post("/:paymentId/bridge/orders", errorsAs("plain"), rateLimit("payments.bridge"), async (c) => {
    const { txHash } = readBridgeOrderBody(await jsonBody(c));
    return c.json(await reportBridgeTx(c.var.deps, c.req.param("paymentId"), txHash));
  })
  .get("/:paymentId/bridge/orders", errorsAs("plain"), async (c) => {
    c.header("Cache-Control", "no-store");
    return c.json(await paymentOrders(c.var.deps, c.req.param("paymentId")));
  });
