import { Hono } from "hono";
import type { AppEnv } from "../context.js";

/** POST /payments, GET /v1/payments, GET /payments/verify, GET /balance, GET /promo-status. */
export const payments = new Hono<AppEnv>();
