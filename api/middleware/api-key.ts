import { createMiddleware } from "hono/factory";
import { hashApiKey } from "../../modules/merchants/api-keys.js";
import type { Merchant } from "../../core/deps.js";
import type { AppEnv } from "../context.js";

/** Looks up the merchant of an `x-api-key`; null for a missing, unknown or revoked key. */
export async function merchantForKey(deps: AppEnv["Variables"]["deps"], key: string | undefined): Promise<Merchant | null> {
  if (!key) return null;
  const { rows } = await deps.db.pool.query(
    `UPDATE api_keys k SET last_used_at = now()
       FROM merchants m
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND m.id = k.merchant_id
      RETURNING m.id, m.name, m.merchant_type, m.platform_fee_bps, m.promo_used`,
    [hashApiKey(key)],
  );
  const r = rows[0];
  return r ? { id: r.id, name: r.name, merchantType: r.merchant_type, platformFeeBps: r.platform_fee_bps, promoUsed: r.promo_used } : null;
}

/** K routes: 401 with the given body when the key is missing or invalid. */
export const requireApiKey = (unauthorized: () => object = () => ({ error: "Unauthorized" })) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header("x-api-key");
    const merchant = await merchantForKey(c.var.deps, key);
    if (!merchant) return c.json(unauthorized(), 401);
    c.set("merchant", merchant);
    c.set("apiKey", key);
    await next();
  });
