import { Hono } from "hono";
import { getUnderpaymentTolerance, putUnderpaymentTolerance } from "../../modules/merchants/index.js";
import { errorsAs } from "../errors.js";
import { keyCaller, requireApiKey } from "../middleware/api-key.js";
import { jsonBody } from "../middleware/input.js";
import type { AppEnv } from "../context.js";

/**
 * /v1/settings (API key): the merchant's own settings beyond the spec. `underpayment-tolerance`: the shortfall a payment
 * may arrive with and still count as paid (docs/payments.md "Underpayment tolerance"). `{error}` bodies; the key is checked
 * before the body is read (401 before any 400), and looked up once per request.
 */
export const settings = new Hono<AppEnv>()
  .use(errorsAs("plain"), requireApiKey())
  .get("/underpayment-tolerance", async (c) => c.json(await getUnderpaymentTolerance(c.var.deps, keyCaller(c))))
  .put("/underpayment-tolerance", async (c) => c.json(await putUnderpaymentTolerance(c.var.deps, keyCaller(c), await jsonBody(c))));
