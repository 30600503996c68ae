import { Hono, type Context } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { createVault, getVault, updateVault } from "../../modules/vault/index.js";
import { keyOwner } from "../../modules/merchants/index.js";
import { addVaultToken, publicVaultTokens, removeVaultToken } from "../../modules/vault/index.js";
import { deleteVaultWebhook, getVaultWebhook, putVaultWebhook, regenerateVaultWebhook } from "../../modules/vault/index.js";
import { errorsAs } from "../errors.js";
import { keyCaller } from "../middleware/api-key.js";
import { jsonBody } from "../middleware/input.js";
import { rateLimit } from "../middleware/rate-limit.js";
import type { AppEnv } from "../context.js";

/**
 * The Vault's configuration (mounted at /vault/v1): /config, /config/tokens, /config/webhooks (API key, 100
 * requests a minute per merchant for all of them together) and the public /business/{publicId}/tokens (60 a
 * minute per IP). Success is `{success: true, data}`, errors `{success: false, error}` (api/errors.ts).
 * Middleware is registered on these paths only: the users and deposits routes share the /vault/v1 prefix.
 */
export const vaultConfig = new Hono<AppEnv>();

const ok = (c: Context<AppEnv>, data: unknown, status: ContentfulStatusCode = 200) => c.json({ success: true, data }, status);

/** 401 `Unauthorized` before anything of the request is read (its size, type and body): the key comes first. */
export const requireVaultKey = createMiddleware<AppEnv>(async (c, next) => {
  await keyOwner(c.var.deps, keyCaller(c));
  await next();
});

// "/config/*" also matches "/config": one rate-limit bucket per merchant for every config endpoint.
vaultConfig.use("/config/*", errorsAs("vault"), requireVaultKey, rateLimit("vault.config"));

/** POST /config: creates the key's vault (once), 201. */
vaultConfig.post("/config", async (c) => ok(c, await createVault(c.var.deps, keyCaller(c), await jsonBody(c)), 201));
/** GET /config. */
vaultConfig.get("/config", async (c) => ok(c, await getVault(c.var.deps, keyCaller(c))));
/** PATCH /config `{businessName?, walletAddress?, isActive?}`. */
vaultConfig.patch("/config", async (c) => ok(c, await updateVault(c.var.deps, keyCaller(c), await jsonBody(c))));

/** POST /config/tokens `{chainId, token, tokenSymbol}`: 201 when added, 200 when it was enabled already (symbol updated). */
vaultConfig.post("/config/tokens", async (c) => {
  const r = await addVaultToken(c.var.deps, keyCaller(c), await jsonBody(c));
  return ok(c, r.config, r.added ? 201 : 200);
});
/** DELETE /config/tokens `{chainId, token}`. */
vaultConfig.delete("/config/tokens", async (c) => ok(c, await removeVaultToken(c.var.deps, keyCaller(c), await jsonBody(c))));

/** GET /config/webhooks: masked secret. */
vaultConfig.get("/config/webhooks", async (c) => ok(c, await getVaultWebhook(c.var.deps, keyCaller(c))));
/** PUT /config/webhooks `{url, events}`: 201 with the whole secret when created, 200 (masked) when updated. */
vaultConfig.put("/config/webhooks", async (c) => {
  const r = await putVaultWebhook(c.var.deps, keyCaller(c), await jsonBody(c));
  return ok(c, r.webhook, r.created ? 201 : 200);
});
/** POST /config/webhooks: a new secret, shown whole. */
vaultConfig.post("/config/webhooks", async (c) => ok(c, await regenerateVaultWebhook(c.var.deps, keyCaller(c), await jsonBody(c))));
/** DELETE /config/webhooks. */
vaultConfig.delete("/config/webhooks", async (c) => ok(c, await deleteVaultWebhook(c.var.deps, keyCaller(c))));

/** GET /business/{publicId}/tokens: public (any origin may read it), `{tokens}` of an active vault. */
vaultConfig.get(
  "/business/:publicId/tokens",
  errorsAs("vault"),
  rateLimit("vault.public-tokens"),
  cors({ origin: "*", allowMethods: ["GET"] }),
  async (c) => c.json(await publicVaultTokens(c.var.deps, c.req.param("publicId"))),
);
