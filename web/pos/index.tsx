import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import QRCode from "qrcode";
import type { AppDeps } from "../../core/deps.js";
import { isDomainError, RateLimited, type DomainError } from "../../core/errors.js";
import { pathCookiePrefix, secureCookies } from "../../core/cookies.js";
import { logger } from "../../core/log.js";
import { createPosSale, posSaleView } from "../../flows/pos-sale.js";
import { POS_COOKIE, posLogin, posLogout, posSession, posTerminal, type PosSession } from "../../modules/terminals/index.js";
import { terminalTokens } from "../../modules/terminals/index.js";
import { isPageAsset, serveAsset } from "../assets.js";
import { csrfGuard } from "../dashboard/csrf.js";
import { formInput } from "../dashboard/form-input.js";
import { posAssets, posAssetUrls } from "./assets.js";
import type { PosEnv } from "./env.js";
import { NotFoundScreen, PinScreen, SaleScreen, SaleStatusScreen, page } from "./templates.js";

/** What the mounting app lends the POS: its notion of the caller's address, the merchant's creation budget, its error statuses. */
export type PosOptions = {
  /** The caller's address bucket (PIN throttle). */
  clientKey: (c: Context) => string;
  /** Takes one payment creation from the merchant's per-minute budget (the API's `payments.create`, shared with POST /payments). */
  takeSale: (deps: AppDeps, merchantId: string) => Promise<{ allowed: boolean; retryAfterMs: number }>;
  /** The HTTP status of a domain error (api/errors.ts, the one place that maps them). */
  statusOf: (e: DomainError) => number;
};

const MAX_FORM_BYTES = 16 * 1024;
type Status = 200 | 400 | 401 | 403 | 404 | 409 | 429 | 500 | 503;

/**
 * The point-of-sale page `/pos/{terminalId}`: a cashier signs in with a PIN (a `cp_pos` cookie scoped to the
 * terminal's path, 12 hours), types an amount, picks a token and gets a payment with its QR (the payer page URL)
 * and live status. Server-rendered (templates.tsx), styles in pos.css, script in client.ts; forms carry the
 * dashboard's form token (web/dashboard/csrf.ts). A deleted terminal's page is 404.
 */
export function createPos(opts: PosOptions) {
  const pos = new Hono<PosEnv>();

  pos.get("/assets/:file", async (c) => {
    const file = c.req.param("file");
    return serveAsset(c, isPageAsset("pos", file) ? (await posAssets())[file] : undefined);
  });

  pos.use(async (c, next) => {
    c.header("X-Frame-Options", "DENY");
    c.header("Referrer-Policy", "same-origin");
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
    c.header(
      "Content-Security-Policy",
      "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    await next();
  });
  pos.use(bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => c.text("Form too large", 413) }));
  // The dashboard's form guard; the token is bound to the cashier's session on this terminal.
  pos.use(formInput);
  pos.use(csrfGuard((c) => getCookie(c, POS_COOKIE, pathCookiePrefix(c.var.deps.config))));

  const render = async (c: Context<PosEnv>, title: string, body: Parameters<typeof page>[2], status: Status = 200) =>
    c.html(page(title, posAssetUrls(await posAssets()), body), status);
  const notFound = (c: Context<PosEnv>) => render(c, "Terminal not found", <NotFoundScreen />, 404);
  const cookiePath = (terminalId: string) => `/pos/${terminalId}`;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const statusOf = (c: Context<PosEnv>, err: DomainError): Status => {
    if (err.kind === "rate_limited" && err.details?.retryAfter) c.header("Retry-After", String(err.details.retryAfter));
    return opts.statusOf(err) as Status;
  };

  const saleScreen = (
    c: Context<PosEnv>,
    session: PosSession,
    extra: { error?: string; amount?: string; token?: string } = {},
    status?: Status,
  ) =>
    render(
      c,
      session.terminal.name,
      <SaleScreen session={session} tokens={terminalTokens(c.var.deps.chains, session.terminal)} csrf={c.var.csrf} {...extra} />,
      status,
    );

  /** The signed-in session of this terminal, or a response: 404 for no terminal, back to the PIN screen without a session. */
  async function sessionOr(c: Context<PosEnv>): Promise<PosSession | Response> {
    const id = c.req.param("terminalId")!;
    const session = await posSession(c.var.deps, id, getCookie(c, POS_COOKIE, pathCookiePrefix(c.var.deps.config)));
    if (session) return session;
    if (!(await posTerminal(c.var.deps.db, id))) return notFound(c);
    return c.redirect(`/pos/${id}`, 303);
  }

  pos.get("/:terminalId", async (c) => {
    const id = c.req.param("terminalId");
    const terminal = await posTerminal(c.var.deps.db, id);
    if (!terminal) return notFound(c);
    const session = await posSession(c.var.deps, id, getCookie(c, POS_COOKIE, pathCookiePrefix(c.var.deps.config)));
    if (!session) return render(c, terminal.name, <PinScreen terminal={terminal} csrf={c.var.csrf} />);
    return saleScreen(c, session);
  });

  pos.post("/:terminalId/login", async (c) => {
    const id = c.req.param("terminalId");
    const form = await c.req.parseBody();
    try {
      const { token, expiresAt } = await posLogin(c.var.deps, id, form.pin, opts.clientKey(c));
      setCookie(c, POS_COOKIE, token, {
        httpOnly: true,
        secure: secureCookies(c.var.deps.config),
        prefix: pathCookiePrefix(c.var.deps.config),
        sameSite: "Lax",
        path: cookiePath(id),
        expires: expiresAt,
      });
      return c.redirect(`/pos/${id}`, 303);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      const terminal = await posTerminal(c.var.deps.db, id);
      if (!terminal) return notFound(c);
      return render(c, terminal.name, <PinScreen terminal={terminal} csrf={c.var.csrf} error={err.message} />, statusOf(c, err));
    }
  });

  pos.post("/:terminalId/logout", async (c) => {
    const id = c.req.param("terminalId");
    const prefix = pathCookiePrefix(c.var.deps.config);
    await posLogout(c.var.deps, getCookie(c, POS_COOKIE, prefix));
    deleteCookie(c, POS_COOKIE, { path: cookiePath(id), secure: secureCookies(c.var.deps.config), prefix });
    return c.redirect(`/pos/${id}`, 303);
  });

  pos.post("/:terminalId/sale", async (c) => {
    const session = await sessionOr(c);
    if (session instanceof Response) return session;
    const form = await c.req.parseBody();
    const input = { amount: str(form.amount), token: str(form.token) };
    try {
      // The merchant's per-minute creation budget, the same one POST /payments takes from.
      const t = await opts.takeSale(c.var.deps, session.terminal.merchantId);
      if (!t.allowed) throw new RateLimited(Math.max(1, Math.ceil(t.retryAfterMs / 1000)));
      const { paymentId } = await createPosSale(c.var.deps, session, input);
      return c.redirect(`/pos/${session.terminal.id}/sale/${paymentId}`, 303);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      return saleScreen(c, session, { error: err.message, ...input }, statusOf(c, err));
    }
  });

  pos.get("/:terminalId/sale/:paymentId", async (c) => {
    const session = await sessionOr(c);
    if (session instanceof Response) return session;
    const view = await posSaleView(c.var.deps, session, c.req.param("paymentId"));
    const payUrl = `${c.var.deps.config.appUrl}/pay/${view.paymentId}`;
    const qrSvg = await QRCode.toString(payUrl, {
      type: "svg",
      margin: 1,
      errorCorrectionLevel: "M",
      color: { dark: "#111827", light: "#ffffff" },
    });
    return render(
      c,
      `${view.amountDue} ${view.token.symbol}`,
      <SaleStatusScreen session={session} csrf={c.var.csrf} view={view} payUrl={payUrl} qrSvg={qrSvg} />,
    );
  });

  pos.onError(async (err, c) => {
    if (isDomainError(err))
      return render(
        c,
        "Point of sale",
        <main class="pos-screen center">
          <p class="pos-error">{err.message}</p>
        </main>,
        statusOf(c, err),
      );
    logger("pos").error({ err, path: c.req.path }, "POS request failed");
    return render(
      c,
      "Point of sale",
      <main class="pos-screen center">
        <p class="pos-error">Something went wrong. Try again in a moment.</p>
      </main>,
      500,
    );
  });
  return pos;
}
