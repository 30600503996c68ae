import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "./csrf.js";
import type { DashEnv, DashMerchant } from "./env.js";
import { assetUrl } from "./assets.js";

/** The dashboard's screens, in the order of the navigation. */
export const SCREENS = [
  { path: "/dashboard/payments", label: "Payments" },
  { path: "/dashboard/api-keys", label: "API keys" },
  { path: "/dashboard/webhooks", label: "Webhooks" },
  { path: "/dashboard/gas-tank", label: "Gas Tank" },
  { path: "/dashboard/promotion", label: "Promotion" },
  { path: "/dashboard/vault", label: "Vault" },
  { path: "/dashboard/terminals", label: "Terminals" },
  { path: "/dashboard/cashiers", label: "Cashiers" },
] as const;

type LayoutProps = { title: string; csrf: string; merchant?: DashMerchant; active?: string; children?: Child };

/** The hidden form token every POST form carries (web/dashboard/csrf.ts). */
export const CsrfField = (p: { csrf: string }) => <input type="hidden" name={CSRF_FIELD} value={p.csrf} />;

/** A one-button POST form (revoke, resend, logout…); `confirm` asks before sending. */
export const PostButton = (p: { action: string; csrf: string; label: string; confirm?: string; kind?: "danger" | "secondary" }) => (
  <form method="post" action={p.action} class="inline" data-confirm={p.confirm}>
    <CsrfField csrf={p.csrf} />
    <button type="submit" class={p.kind ?? ""}>
      {p.label}
    </button>
  </form>
);

/** A success or error message above a screen's content. */
export const Notice = (p: { kind: "ok" | "error" | "warn"; children?: Child }) => (
  <div class={`notice ${p.kind}`} role={p.kind === "error" ? "alert" : "status"}>
    {p.children}
  </div>
);

/** A secret shown once (new API key, webhook secret): a copyable field and the warning. */
export const ShownOnce = (p: { label: string; value: string; testId?: string }) => (
  <div class="notice warn shown-once">
    <p>
      <strong>{p.label}</strong>: copy it now, it will not be shown again.
    </p>
    <input type="text" readonly value={p.value} data-testid={p.testId} class="secret" />
  </div>
);

const Nav = (p: { merchant: DashMerchant; csrf: string; active?: string }) => (
  <header class="top">
    <a class="brand" href="/dashboard">
      chainpay
    </a>
    <nav>
      {SCREENS.map((s) => (
        <a href={s.path} class={p.active === s.path ? "active" : ""}>
          {s.label}
        </a>
      ))}
    </nav>
    <div class="who">
      <span title={p.merchant.email ?? ""}>{p.merchant.name}</span>
      <PostButton action="/dashboard/logout" csrf={p.csrf} label="Log out" kind="secondary" />
    </div>
  </header>
);

/** The page around every dashboard screen (and the login and sign-up forms, without navigation). */
export const Layout = (p: LayoutProps) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>{`${p.title} · chainpay`}</title>
      <link rel="stylesheet" href={assetUrl("dashboard.css")} />
      <script src={assetUrl("dashboard.js")} defer></script>
    </head>
    <body>
      {p.merchant ? <Nav merchant={p.merchant} csrf={p.csrf} active={p.active} /> : null}
      <main>
        <h1>{p.title}</h1>
        {p.children}
      </main>
    </body>
  </html>
);

/**
 * Renders a screen of the signed-in merchant with the layout.
 *
 * @example
 * return screen(c, { title: "API keys", active: "/dashboard/api-keys" }, <KeysTable keys={keys} />);
 */
export function screen(
  c: Context<DashEnv>,
  p: { title: string; active?: string; status?: 200 | 400 | 403 | 404 | 409 | 429 },
  body: Child,
) {
  return c.html(
    html`<!doctype html>${(
        <Layout title={p.title} csrf={c.var.csrf} merchant={c.var.merchant} active={p.active}>
          {body}
        </Layout>
      )}`,
    p.status ?? 200,
  );
}

/** A page without navigation (login, sign-up). */
export function bare(c: Context<DashEnv>, p: { title: string; status?: 200 | 400 | 401 | 403 | 409 | 429 }, body: Child) {
  return c.html(
    html`<!doctype html>${(
        <Layout title={p.title} csrf={c.var.csrf}>
          {body}
        </Layout>
      )}`,
    p.status ?? 200,
  );
}
