import { Hono } from "hono";
import type { AppDeps } from "../core/deps.js";
import type { AppEnv } from "./context.js";
import { auth } from "./routes/auth.js";
import { graphqlRoute } from "./routes/graphql.js";
import { health } from "./routes/health.js";
import { payPage } from "../web/pay/page.js";
import { payments } from "./routes/payments.js";
import { tokens } from "./routes/tokens.js";
import { webhooks } from "./routes/webhooks.js";

/** The HTTP service: middleware composed here, routes mounted under /api (the spec's `{base_url}`). */
export function createApp(deps: AppDeps) {
  const api = new Hono<AppEnv>();
  api.route("/", health);
  api.route("/", tokens);
  api.route("/", payments);
  api.route("/", webhooks);
  api.route("/", auth);
  api.route("/", graphqlRoute);

  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.route("/api", api);
  app.route("/", payPage);
  app.onError((err, c) => {
    console.error("[api]", err);
    return c.json({ error: "Internal server error" }, 500);
  });
  return app;
}
