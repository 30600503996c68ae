import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { PublicPaymentView } from "../../modules/payments/index.js";
import type { PosSession, PosTerminal } from "../../modules/terminals/index.js";
import type { PosToken } from "../../modules/terminals/index.js";
import { CSRF_FIELD } from "../dashboard/csrf.js";
import type { PosAssetUrls } from "./assets.js";
import { FAVICON_HREF } from "../favicon.js";
import { isFinalStage, saleLabel, saleMessage, saleProgress } from "./texts.js";

/**
 * The POS screens (Hono JSX): PIN entry, the sale keypad and the sale's QR and live status. Full-screen, large
 * touch targets, usable on a phone; every form works without the script (client.ts adds the on-screen keypad's
 * typing and the status polling). data-testid attributes are the browser tests' handles.
 */

const Csrf = (p: { csrf: string }) => <input type="hidden" name={CSRF_FIELD} value={p.csrf} />;

const Page = (p: { title: string; assets: PosAssetUrls; children?: Child }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1" />
      <meta name="referrer" content="same-origin" />
      <meta name="robots" content="noindex" />
      <link rel="icon" type="image/svg+xml" href={FAVICON_HREF} />
      <title>{`${p.title} · POS`}</title>
      <link rel="stylesheet" href={p.assets.css} />
      <script src={p.assets.js} defer></script>
    </head>
    <body class="pos">{p.children}</body>
  </html>
);

/** The whole document, with its doctype. */
export const page = (title: string, assets: PosAssetUrls, body: Child) =>
  html`<!doctype html>${(
      <Page title={title} assets={assets}>
        {body}
      </Page>
    )}`;

const ErrorLine = (p: { message?: string }) =>
  p.message ? (
    <p class="pos-error" role="alert" data-testid="pos-error">
      {p.message}
    </p>
  ) : null;

/** The on-screen keypad writing into input `target` (client.ts); `kind` amount adds the decimal point. */
const Keypad = (p: { target: string; kind: "pin" | "amount" }) => {
  const keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", p.kind === "amount" ? "dot" : "clear", "0", "back"];
  const label: Record<string, string> = { dot: ".", clear: "C", back: "\u232B" };
  const aria: Record<string, string> = { dot: "Decimal point", clear: "Clear", back: "Delete last digit" };
  return (
    <div class="keypad" data-keypad={p.kind} data-target={p.target} data-testid="pos-keypad">
      {keys.map((k) => (
        <button type="button" class={`key key-${k}`} data-key={k} data-testid={`pos-key-${k}`} aria-label={aria[k]}>
          {label[k] ?? k}
        </button>
      ))}
    </div>
  );
};

export const NotFoundScreen = () => (
  <main class="pos-screen center">
    <h1>Terminal not found</h1>
    <p class="muted">This point-of-sale page does not exist or its terminal was deleted.</p>
  </main>
);

/** PIN entry: the first screen of a terminal. */
export const PinScreen = (p: { terminal: PosTerminal; csrf: string; error?: string }) => (
  <main class="pos-screen">
    <header class="pos-bar">
      <span class="pos-terminal" data-testid="pos-terminal-name">
        {p.terminal.name}
      </span>
    </header>
    <form method="post" action={`/pos/${p.terminal.id}/login`} class="pos-form" autocomplete="off">
      <Csrf csrf={p.csrf} />
      <h1>Enter your PIN</h1>
      <ErrorLine message={p.error} />
      <input
        id="pin"
        class="pos-display"
        type="password"
        name="pin"
        inputmode="numeric"
        pattern="[0-9]*"
        maxlength={32}
        required
        autofocus
        aria-label="PIN"
        data-testid="pos-pin"
      />
      <Keypad target="pin" kind="pin" />
      <button type="submit" class="pos-primary" data-testid="pos-login">
        Sign in
      </button>
    </form>
  </main>
);

const Bar = (p: { session: PosSession; csrf: string }) => (
  <header class="pos-bar">
    <span class="pos-terminal" data-testid="pos-terminal-name">
      {p.session.terminal.name}
    </span>
    <span class="pos-cashier" data-testid="pos-cashier-name">
      {p.session.cashier.name}
    </span>
    <form method="post" action={`/pos/${p.session.terminal.id}/logout`} class="pos-logout">
      <Csrf csrf={p.csrf} />
      <button type="submit" class="pos-secondary" data-testid="pos-logout">
        Log out
      </button>
    </form>
  </header>
);

/** The keypad screen: amount, token, charge. */
export const SaleScreen = (p: {
  session: PosSession;
  tokens: PosToken[];
  csrf: string;
  error?: string;
  amount?: string;
  token?: string;
}) => {
  const { terminal } = p.session;
  const chosen = p.tokens.find((t) => t.key === p.token) ?? p.tokens[0];
  const blocked = !terminal.payoutAddress
    ? "This terminal has no payout address yet: set one in the dashboard."
    : !p.tokens.length
      ? "This terminal accepts no token yet: choose one in the dashboard."
      : undefined;
  return (
    <main class="pos-screen">
      <Bar session={p.session} csrf={p.csrf} />
      <form method="post" action={`/pos/${terminal.id}/sale`} class="pos-form" autocomplete="off">
        <Csrf csrf={p.csrf} />
        <ErrorLine message={p.error ?? blocked} />
        <div class="pos-amount-row">
          <input
            id="amount"
            class="pos-display"
            type="text"
            name="amount"
            inputmode="decimal"
            placeholder="0"
            value={p.amount ?? ""}
            maxlength={40}
            required
            aria-label="Amount"
            data-testid="pos-amount"
          />
          <span class="pos-currency" id="currency" data-testid="pos-currency">
            {chosen?.symbol ?? ""}
          </span>
        </div>
        <fieldset class="pos-tokens" data-testid="pos-tokens">
          <legend>Pay in</legend>
          {p.tokens.map((t) => (
            <label class="pos-token" data-testid={`pos-token-${t.chainId}-${t.symbol}`}>
              <input
                type="radio"
                name="token"
                value={t.key}
                checked={t === chosen}
                data-symbol={t.symbol}
                data-decimals={String(t.decimals)}
              />
              <span>
                <strong>{t.symbol}</strong> <small>{t.chainName}</small>
              </span>
            </label>
          ))}
        </fieldset>
        <Keypad target="amount" kind="amount" />
        <button type="submit" class="pos-primary" disabled={Boolean(blocked)} data-testid="pos-charge">
          Charge
        </button>
      </form>
    </main>
  );
};

/** A sale's payment: amount, QR of the payer page, live status, then Paid and a new sale. */
export const SaleStatusScreen = (p: { session: PosSession; csrf: string; view: PublicPaymentView; payUrl: string; qrSvg: string }) => {
  const { view } = p;
  const final = isFinalStage(view.stage);
  const progress = saleProgress(view);
  return (
    <main class="pos-screen">
      <Bar session={p.session} csrf={p.csrf} />
      <section
        class={`pos-sale stage-${view.stage}`}
        id="sale"
        data-payment-id={view.paymentId}
        data-status-url={`/api/payments/${view.paymentId}/status`}
        data-testid="pos-sale"
      >
        {view.merchantName ? (
          <p class="pos-payee" data-testid="pos-merchant-name">
            Payment to <b id="merchant-name">{view.merchantName}</b>
          </p>
        ) : null}
        <p class="pos-sale-amount" data-testid="pos-sale-amount">
          {view.amountDue} {view.token.symbol}
        </p>
        <p class="muted">on {view.chainName}</p>
        <div class="pos-qr" id="qr" hidden={final} data-testid="pos-qr" dangerouslySetInnerHTML={{ __html: p.qrSvg }} />
        <p>
          <a href={p.payUrl} target="_blank" rel="noopener" data-testid="pos-payment-link">
            Open the payment page
          </a>
        </p>
        <p class={`pos-status ${view.stage}`} id="status" data-status={view.status} data-stage={view.stage} data-testid="pos-status">
          {saleLabel(view)}
        </p>
        <progress
          class="pos-progress"
          id="confirm-progress"
          max={progress?.required ?? 1}
          value={progress?.count ?? 0}
          aria-label="Confirmations"
          hidden={!progress}
          data-testid="pos-progress"
        />
        <p class="pos-paid" id="paid" hidden={view.stage !== "completed"} data-testid="pos-paid">
          Paid
        </p>
        <p class="muted" id="sale-message" data-testid="pos-sale-message">
          {saleMessage(view)}
        </p>
        <a
          href={`/pos/${p.session.terminal.id}`}
          class={final ? "pos-primary button" : "pos-secondary button"}
          id="new-sale"
          data-testid="pos-new-sale"
        >
          New sale
        </a>
      </section>
    </main>
  );
};
