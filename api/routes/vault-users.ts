import { Hono } from "hono";
import { listVaultDeposits, requestDepositRecovery } from "../../modules/vault/index.js";
import { createVaultUser, getVaultUser } from "../../modules/vault/index.js";
import { errorsAs } from "../errors.js";
import { requireVaultKey } from "./vault-config.js";
import { keyCaller } from "../middleware/api-key.js";
import { jsonBody, queryOf } from "../middleware/input.js";
import { rateLimit } from "../middleware/rate-limit.js";
import type { AppEnv } from "../context.js";

/**
 * Vault users and deposits (mounted at /vault/v1 beside api/routes/vault-config.ts): API key, the spec's rate
 * limits per merchant, `{success: true, data}` bodies and `{success: false, error}` errors (api/errors.ts). The
 * operations authenticate the key and find its vault themselves (modules/vault/config-access.ts).
 */
export const vaultUsers = new Hono<AppEnv>();

// The key first (401), then the rate limit, the body's size and the body.
for (const path of ["/users", "/deposits", "/deposits/*"]) vaultUsers.use(path, errorsAs("vault"), requireVaultKey);

/** POST /users: the user's deposit address; 201 the first time for this user, wallet and chain, 200 after. */
vaultUsers.post("/users", rateLimit("vault.users.create"), async (c) => {
  const data = await createVaultUser(c.var.deps, keyCaller(c), await jsonBody(c));
  return c.json({ success: true, data }, data.isNew ? 201 : 200);
});

/** GET /users?externalUserId=…[&chainId][&tokenAddress]: the user's address and deposit totals. */
vaultUsers.get("/users", rateLimit("vault.users.read"), async (c) =>
  c.json({ success: true, data: await getVaultUser(c.var.deps, keyCaller(c), queryOf(c)) }),
);

/** GET /deposits?limit&status&externalUserId: the vault's deposits, newest first, with the count of all matches. */
vaultUsers.get("/deposits", rateLimit("vault.deposits"), async (c) =>
  c.json({ success: true, data: await listVaultDeposits(c.var.deps, keyCaller(c), queryOf(c)) }),
);

/** POST /deposits/{depositId}/recover: a held deposit queued for a sweep to the wallet at the vault's fee (202). */
vaultUsers.post("/deposits/:depositId/recover", rateLimit("vault.deposits.recover"), async (c) =>
  c.json({ success: true, data: await requestDepositRecovery(c.var.deps, keyCaller(c), c.req.param("depositId")) }, 202),
);
