import { Hono } from "hono";
import type { AppEnv } from "../context.js";

/** Payment webhook configuration (/v1/webhooks) and delivery logs. */
export const webhooks = new Hono<AppEnv>();
