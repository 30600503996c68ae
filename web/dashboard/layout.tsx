import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { formatAmount } from "../../core/money.js";
import { GAS_TANK_DECIMALS } from "../../modules/gas-tank/index.js";
import { FAVICON_HREF } from "../favicon.js";
import { CSRF_FIELD } from "./csrf.js";
import type { DashEnv, DashMerchant, LowGasTank } from "./env.js";
import type { Flash } from "./flash.js";
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

/** The Agent screen: in the navigation of agent accounts only. */
export const AGENT_SCREEN = { path: "/dashboard/agent", label: "Agent" } as const;

type LayoutProps = {
  title: string;
  csrf: string;
  merchant?: DashMerchant;
  /** The merchant is an agent: its screen is in the navigation. */
  agent?: boolean;
  active?: string;
  /** The Gas Tank below its alert threshold: a banner above the screen. */
  lowGasTank?: LowGasTank | null;
  children?: Child;
};

const GAS_TANK_SCREEN = "/dashboard/gas-tank";

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

/** What a POST left for this screen (web/dashboard/flash.ts): the secret shown once, then the notices. */
export const FlashView = (p: { flash: Flash | null }) =>
  p.flash ? (
    <>
      {p.flash.secret ? <ShownOnce label={p.flash.secret.label} value={p.flash.secret.value} testId={p.flash.secret.testId} /> : null}
      {(p.flash.notices ?? []).map((n) => (
        <Notice kind={n.kind}>{n.testId ? <span data-testid={n.testId}>{n.text}</span> : n.text}</Notice>
      ))}
    </>
  ) : null;

const usdt = (micros: bigint) => formatAmount(micros, GAS_TANK_DECIMALS, { fixed: true });

/** The low-balance warning of every screen but the Gas Tank's own (which says more). */
const LowGasTankBanner = (p: { low: LowGasTank }) => (
  <div class="notice warn" role="status" data-testid="low-gas-tank">
    Your Gas Tank holds {usdt(p.low.balanceMicros)} USDT, below your alert threshold of {usdt(p.low.thresholdMicros)} USDT: settlements wait
    when it runs dry. <a href={GAS_TANK_SCREEN}>Top up the Gas Tank</a>
  </div>
);

const Nav = (p: { merchant: DashMerchant; csrf: string; active?: string; agent?: boolean }) => (
  <header class="top">
    <a class="brand" href="/dashboard">
      chainpay
    </a>
    <nav>
      {[...SCREENS, ...(p.agent ? [AGENT_SCREEN] : [])].map((s) => (
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
      <link rel="icon" type="image/svg+xml" href={FAVICON_HREF} />
      <title>{`${p.title} · chainpay`}</title>
      <link rel="stylesheet" href={assetUrl("dashboard.css")} />
      <script src={assetUrl("dashboard.js")} defer></script>
    </head>
    <body>
      {p.merchant ? <Nav merchant={p.merchant} csrf={p.csrf} active={p.active} agent={p.agent} /> : null}
      <main>
        {p.merchant && p.lowGasTank && p.active !== GAS_TANK_SCREEN ? <LowGasTankBanner low={p.lowGasTank} /> : null}
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
export function screen(c: Context<DashEnv>, p: { title: string; active?: string; status?: ContentfulStatusCode }, body: Child) {
  return c.html(
    html`<!doctype html>${(
        <Layout
          title={p.title}
          csrf={c.var.csrf}
          merchant={c.var.merchant}
          agent={!!c.var.agent}
          active={p.active}
          lowGasTank={c.var.lowGasTank}
        >
          {body}
        </Layout>
      )}`,
    p.status ?? 200,
  );
}

/** A page without navigation (login, sign-up). */
export function bare(c: Context<DashEnv>, p: { title: string; status?: ContentfulStatusCode }, body: Child) {
  return c.html(
    html`<!doctype html>${(
        <Layout title={p.title} csrf={c.var.csrf}>
          {body}
        </Layout>
      )}`,
    p.status ?? 200,
  );
}
