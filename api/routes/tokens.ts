import { Hono } from "hono";
import { oraclePrice, tokenMetadata, tokenPrice } from "../../modules/pricing/index.js";
import { errorsAs } from "../errors.js";
import { queryOf } from "../middleware/input.js";
import type { AppEnv } from "../context.js";

// Public price and token lookups (no authentication; modules/pricing/lookups.ts): errors are `{error}`.

/** /tokens: GET /tokens/price, GET /tokens/metadata. */
export const tokens = new Hono<AppEnv>()
  .get("/price", errorsAs("plain", "Failed to fetch token price"), async (c) => c.json(await tokenPrice(c.var.deps, queryOf(c))))
  .get("/metadata", errorsAs("plain", "Failed to fetch token metadata"), async (c) => c.json(await tokenMetadata(c.var.deps, queryOf(c))));

/** /oracle: GET /oracle/price. */
export const oracle = new Hono<AppEnv>().get("/price", errorsAs("plain", "Failed to fetch price"), async (c) =>
  c.json(await oraclePrice(c.var.deps, queryOf(c))),
);
