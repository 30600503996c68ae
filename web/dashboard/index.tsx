import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { cookiePrefix } from "../../core/cookies.js";
import { isDomainError, type DomainError } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { findAgent } from "../../modules/agents/index.js";
import { lowGasTank } from "../../modules/gas-tank/index.js";
import { SESSION_COOKIE } from "../../modules/merchants/index.js";
import { serveAsset } from "../assets.js";
import { dashboardAsset } from "./assets.js";
import { authPages } from "./auth.js";
import { csrfGuard } from "./csrf.js";
import { formInput } from "./form-input.js";
import type { DashEnv } from "./env.js";
import { Layout, Notice } from "./layout.js";
import { requireSession } from "./session.js";
import { gasTankScreen } from "./screens/gas-tank.js";
import { promotionScreen } from "./screens/promotion.js";
import { vaultScreen } from "./screens/vault.js";
import { webhooksScreen } from "./screens/webhooks.js";
import { apiKeysScreen } from "./screens/api-keys.js";
import { paymentDetailScreen } from "./screens/payment-detail.js";
import { paymentsScreen } from "./screens/payments.js";
import { terminalsScreen } from "./screens/terminals.js";
import { cashiersScreen } from "./screens/cashiers.js";
import { agentScreen } from "./screens/agent.js";

/** What the mounting app lends the dashboard: its notion of the caller's address, its rate limits, its error statuses. */
export type DashboardOptions = {
  /** The caller's address bucket (login throttle). */
  clientKey: (c: Context) => string;
  /** A per-address rate limit of the mounting app: `auth.login` for the login form, `dashboard.signup` for sign-up. */
  limit: (scope: "auth.login" | "dashboard.signup" | "web.requests") => MiddlewareHandler;
  /** The HTTP status of a domain error (api/errors.ts, the one place that maps them); screens read it as `c.var.statusOf`. */
  statusOf: (e: DomainError) => ContentfulStatusCode;
};

/** Form bodies of the dashboard are small: 64 KiB is far above any form. */
const MAX_FORM_BYTES = 64 * 1024;

/**
 * The merchant dashboard at /dashboard: server-rendered pages (Hono JSX), a session cookie, a form token on every
 * form. Log in and sign up are public; every screen under it requires a session and shows only the session's
 * merchant's rows (each screen's module queries take the merchant id). Screens live in web/dashboard/screens/.
 */
export function createDashboard(opts: DashboardOptions) {
  const dash = new Hono<DashEnv>();
  dash.use(async (c, next) => {
    c.set("statusOf", opts.statusOf);
    await next();
  });

  dash.get("/assets/:file", (c) => serveAsset(c, dashboardAsset(c.req.param("file"))));

  // A flood guard per client address, like /api's (every page reads the database).
  dash.use(opts.limit("web.requests"));
  dash.use(async (c, next) => {
    c.header("X-Frame-Options", "DENY");
    c.header("Referrer-Policy", "same-origin");
    c.header(
      "Content-Security-Policy",
      "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
    );
    await next();
  });
  dash.use(bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => c.text("Form too large", 413) }));
  dash.use(formInput);
  dash.use(csrfGuard((c) => getCookie(c, SESSION_COOKIE, cookiePrefix(c.var.deps.config))));
  dash.use("/login", async (c, next) => (c.req.method === "POST" ? opts.limit("auth.login")(c, next) : next()));
  dash.use("/signup", async (c, next) => (c.req.method === "POST" ? opts.limit("dashboard.signup")(c, next) : next()));
  dash.route("/", authPages(opts.clientKey));

  const screens = new Hono<DashEnv>();
  screens.use(requireSession);
  // The low-balance banner of every screen (layout.tsx): one statement per request, balance and threshold together.
  screens.use(async (c, next) => {
    c.set("lowGasTank", await lowGasTank(c.var.deps.db.pool, c.var.merchant.id));
    // The Agent screen's link shows only for agent accounts (and that screen reads the terms from here).
    c.set("agent", await findAgent(c.var.deps.db.pool, c.var.merchant.id));
    await next();
  });
  screens.get("/", (c) => c.redirect("/dashboard/payments", 303));
  // Screens (web/dashboard/screens/*.tsx), one router each:
  screens.route("/", paymentsScreen);
  screens.route("/", paymentDetailScreen);
  screens.route("/", apiKeysScreen);
  screens.route("/", webhooksScreen);
  screens.route("/", gasTankScreen);
  screens.route("/", promotionScreen);
  screens.route("/", vaultScreen);
  screens.route("/", terminalsScreen);
  screens.route("/", cashiersScreen);
  screens.route("/", agentScreen);
  dash.route("/", screens);

  dash.onError((err, c) => {
    if (!isDomainError(err)) {
      logger("dashboard").error({ err, path: c.req.path }, "dashboard request failed");
      return c.html(page(c, "Something went wrong", "The server could not finish this request. Try again in a moment."), 500);
    }
    if (err.kind === "rate_limited" && err.details?.retryAfter) c.header("Retry-After", String(err.details.retryAfter));
    return c.html(page(c, "Request refused", err.message), opts.statusOf(err));
  });
  return dash;
}

const page = (c: Context<DashEnv>, title: string, message: string) =>
  html`<!doctype html>${(
      <Layout title={title} csrf={c.var.csrf ?? ""}>
        <Notice kind="error">{message}</Notice>
        <p>
          <a href="/dashboard">Back to the dashboard</a>
        </p>
      </Layout>
    )}`;
