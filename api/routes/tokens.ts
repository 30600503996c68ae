import { Hono } from "hono";
import type { AppEnv } from "../context.js";

/** Public price and token lookups: GET /tokens/price, GET /tokens/metadata, GET /oracle/price. */
export const tokens = new Hono<AppEnv>();
