import { Hono } from "hono";
import { agentOfCaller, updateAgent } from "../../modules/agents/index.js";
import { agentBalances, referredMerchants } from "../../modules/agents/index.js";
import { listWithdrawals, requestWithdrawal } from "../../modules/agents/index.js";
import { errorsAs } from "../errors.js";
import { keyCaller } from "../middleware/api-key.js";
import { jsonBody } from "../middleware/input.js";
import { rateLimit } from "../middleware/rate-limit.js";
import type { AppEnv } from "../context.js";

/**
 * /v1/agent (API key of an agent's account; docs/agents.md): its terms and balances, the merchants it referred with
 * their volume, its markup and payout address, and withdrawals of its earnings. `{error}` bodies.
 */
export const agent = new Hono<AppEnv>()
  .use(errorsAs("plain"), rateLimit("agent", { first: true }))
  .get("/", async (c) => {
    const a = await agentOfCaller(c.var.deps, keyCaller(c));
    return c.json({ ...a, balances: await agentBalances(c.var.deps.db.pool, a.agentId) });
  })
  .patch("/", async (c) => {
    const a = await agentOfCaller(c.var.deps, keyCaller(c));
    return c.json(await updateAgent(c.var.deps.db, a.agentId, await jsonBody(c)));
  })
  .get("/merchants", async (c) => {
    const a = await agentOfCaller(c.var.deps, keyCaller(c));
    return c.json({ data: await referredMerchants(c.var.deps.db.pool, a.agentId) });
  })
  .get("/withdrawals", async (c) => {
    const a = await agentOfCaller(c.var.deps, keyCaller(c));
    return c.json({ data: await listWithdrawals(c.var.deps, a.agentId) });
  })
  .post("/withdrawals", async (c) => {
    const a = await agentOfCaller(c.var.deps, keyCaller(c));
    return c.json(await requestWithdrawal(c.var.deps, a.agentId, await jsonBody(c)), 201);
  });
