import { Hono } from "hono";
import { getEvent, listEvents } from "../../modules/events/index.js";
import { errorsAs } from "../errors.js";
import { keyCaller } from "../middleware/api-key.js";
import { queryOf } from "../middleware/input.js";
import type { AppEnv } from "../context.js";

/**
 * /v1/events (API key): the merchant's event feed, oldest first by cursor (`?after&limit`), and one event by id.
 * Errors as GET /v1/payments's: `{error, code}`.
 */
export const events = new Hono<AppEnv>()
  .get("/", errorsAs("coded"), async (c) => c.json(await listEvents(c.var.deps, keyCaller(c), queryOf(c))))
  .get("/:id", errorsAs("coded"), async (c) => c.json(await getEvent(c.var.deps, keyCaller(c), c.req.param("id"))));
