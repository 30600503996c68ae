import { Hono } from "hono";
import { requestId } from "hono/request-id";
import type { AppDeps } from "../core/deps.js";
import { logger, type Logger } from "../core/log.js";
import type { AppEnv } from "./context.js";
import { onError, STATUS } from "./errors.js";
import { idempotency } from "./middleware/idempotency.js";
import { ipLimits } from "./middleware/ip-limits.js";
import { agent } from "./routes/agent.js";
import { clientIp, ipBucket, rateLimit, takeFor } from "./middleware/rate-limit.js";
import { observe } from "./middleware/observe.js";
import type { RequestTally } from "./middleware/request-summary.js";
import { apiDocs } from "./openapi/docs-page.js";
import { auth } from "./routes/auth.js";
import { bridge } from "./routes/bridge.js";
import { events } from "./routes/events.js";
import { graphqlRoute } from "./routes/graphql.js";
import { health } from "./routes/health.js";
import { metricsRoute } from "./routes/metrics.js";
import { createDashboard } from "../web/dashboard/index.js";
import { payPage } from "../web/pay/page.js";
import { createPos } from "../web/pos/index.js";
import { account, payments, paymentsV1 } from "./routes/payments.js";
import { settings } from "./routes/settings.js";
import { oracle, tokens } from "./routes/tokens.js";
import { vaultConfig } from "./routes/vault-config.js";
import { vaultUsers } from "./routes/vault-users.js";
import { webhooks } from "./routes/webhooks.js";

/**
 * The HTTP service: routes mounted under /api (the spec's `{base_url}`) by resource prefix, and one
 * error handler (api/errors.ts) for every route: domain errors as the spec's bodies and statuses.
 * Every request gets an id (X-Request-Id: the client's when well-formed, else a UUID, echoed in the response),
 * a logger carrying it, an access line and a latency observation; GET /metrics sits at the root, outside /api.
 * `opts.log`: where the API logs (default the process's logger; tests pass one writing to a stream); the access line
 * at REQUEST_LOG_LEVEL. `opts.tally`: counts requests for the summary line (REQUEST_LOG_SUMMARY_S, api/server.ts).
 */
export function createApp(deps: AppDeps, opts: { log?: Logger; tally?: RequestTally } = {}) {
  const api = new Hono<AppEnv>();
  // Per-address limits before any route looks up a key (api/middleware/ip-limits.ts).
  api.use(ipLimits);
  // `Idempotency-Key` on API-key POSTs: claimed before the route runs, its final response replayed (docs/payments.md "Idempotency keys").
  api.use(idempotency);
  api.route("/payments", payments);
  api.route("/v1/payments", paymentsV1);
  // Cross-chain payment from the payer page (public): /payments/:paymentId/bridge/*.
  api.route("/payments", bridge);
  api.route("/tokens", tokens);
  api.route("/oracle", oracle);
  api.route("/graphql", graphqlRoute);
  api.route("/v1/webhooks", webhooks);
  api.route("/v1/agent", agent);
  // The event feed (docs/payments.md "Event feed"): every payment and Vault event, whatever the webhook configuration.
  api.route("/v1/events", events);
  // The merchant's own settings beyond the spec (docs/payments.md "Underpayment tolerance").
  api.route("/v1/settings", settings);
  api.route("/auth", auth);
  // The Vault: configuration, tokens, webhooks and the public token list; users and deposits share the prefix.
  api.route("/vault/v1", vaultConfig);
  api.route("/vault/v1", vaultUsers);
  // Single routes at the root of the API: /health, /balance, /promo-status.
  api.route("/", health);
  api.route("/", account);
  // GET /openapi.json and the reference page /docs with its assets (api/openapi/).
  api.route("/", apiDocs);

  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.use(requestId());
  app.use(observe(opts.log ?? logger("api"), { level: deps.config.REQUEST_LOG_LEVEL, tally: opts.tally }));
  app.route("/", metricsRoute());
  app.route("/api", api);
  app.route("/", payPage);
  // A flood guard per client address on the POS pages (the dashboard has its own, lent below).
  app.use("/pos/*", rateLimit("web.requests"));
  app.route(
    "/dashboard",
    createDashboard({ clientKey: (c) => ipBucket(clientIp(c)), limit: (scope) => rateLimit(scope), statusOf: (e) => STATUS[e.kind] }),
  );
  app.route(
    "/pos",
    createPos({
      clientKey: (c) => ipBucket(clientIp(c)),
      takeSale: (d, merchantId) => takeFor(d, "payments.create", { merchantId }),
      statusOf: (e) => STATUS[e.kind],
    }),
  );
  app.onError(onError);
  return app;
}
