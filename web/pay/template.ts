import { isNativeToken } from "../../chains/registry.js";
import { formatAmount, parseAmount } from "../../core/money.js";
import type { PublicPaymentView } from "../../modules/payments/index.js";
import type { PayerBridgeState } from "./bridge-types.js";
import { FAVICON_HREF } from "../favicon.js";
import {
  BRIDGE_STAGES,
  BRIDGE_STAGE_LABEL,
  BRIDGE_TEXT,
  confirmProgress,
  countdownText,
  PAY_TO,
  showExpiry,
  showReceived,
  stageLabel,
  stageNotice,
} from "./texts.js";

/** The payer page's HTML. Every interpolated value goes through `esc` (markup) or `scriptJson` (the state block). */

/** Where the page finds its stylesheet and script (relative to /pay/<id>; `?v=` is the content hash). */
export type AssetUrls = { css: string; js: string };

const esc = (s: unknown) =>
  String(s ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

/** JSON inside <script>: no `</script>`, no HTML comment openers, no JS line separators. */
const scriptJson = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

/** The part of amountDue that is fees the payer covers (payer-covers-fee mode), or null. */
function payerFee(v: PublicPaymentView): string | null {
  const d = v.token.decimals;
  const fee = parseAmount(v.amountDue, d) - parseAmount(v.amount, d);
  return fee > 0n ? formatAmount(fee, d) : null;
}

/** Doctype, head and stylesheet shared by every page (`title` must already be escaped). */
function htmlHead(title: string, nonce: string, assets: AssetUrls): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" type="image/svg+xml" href="${esc(FAVICON_HREF)}">
<link rel="stylesheet" href="${esc(assets.css)}" nonce="${nonce}">`;
}

/**
 * "Pay with another token or network": rendered hidden, as its controls need the script (bridge-client.ts shows it and
 * fills the wallets, the sources and the quote); the stages are listed here so the page reads the same once they run.
 */
function bridgeSection(): string {
  return `<section id="bridge" class="bridge" data-testid="bridge" data-stage="" hidden>
    <h2>${esc(BRIDGE_TEXT.title)}</h2>
    <p id="bridge-intro" class="sub">${esc(BRIDGE_TEXT.intro)}</p>
    <div id="bridge-wallets" class="wallets"></div>
    <p id="bridge-account" class="sub" data-testid="bridge-account" hidden></p>
    <div id="bridge-pick" class="field" hidden>
      <label class="label" for="bridge-source">${esc(BRIDGE_TEXT.pickSource)}</label>
      <select id="bridge-source" class="select" data-testid="bridge-source"></select>
    </div>
    <div id="bridge-quote" class="quote" data-testid="bridge-quote" hidden>
      <dl id="bridge-quote-rows"></dl>
      <button id="bridge-pay" class="btn primary wide" type="button" data-testid="bridge-pay">${esc(BRIDGE_TEXT.pay)}</button>
    </div>
    <ol id="bridge-stages" class="stages" data-testid="bridge-stages" hidden>
      ${BRIDGE_STAGES.map((s) => `<li data-stage="${s}">${esc(BRIDGE_STAGE_LABEL[s])}</li>`).join("\n      ")}
    </ol>
    <div id="bridge-msg" class="msg" data-testid="bridge-msg" role="status" aria-live="polite" hidden></div>
  </section>`;
}

/**
 * The page for a payment; `client.ts` reads the view from the `payment-state` block and keeps it current. With
 * `bridge` (cross-chain payments on), the bridge section and its `bridge-state` block.
 */
export function payerPage(
  v: PublicPaymentView,
  qrSvg: string,
  nonce: string,
  assets: AssetUrls,
  bridge: PayerBridgeState | null = null,
): string {
  const sym = esc(v.token.symbol);
  const fee = payerFee(v);
  const showPay = v.stage === "awaiting_payment";
  const native = isNativeToken(v.token.address);
  const msg = stageNotice(v);
  const progress = confirmProgress(v);
  return `${htmlHead(`Pay ${esc(v.amountDue)} ${sym}${v.merchantName ? ` to ${esc(v.merchantName)}` : ""}`, nonce, assets)}
</head>
<body>
<main>
<div class="card">
  <div class="top"><p class="payee"${v.merchantName ? "" : " hidden"}><span class="label">${esc(PAY_TO)}</span><b id="merchant-name" data-testid="merchant-name">${esc(v.merchantName)}</b></p><span id="badge" class="badge ${esc(v.stage)}">${esc(stageLabel(v))}</span></div>
  <p class="amount"><span id="amount-due">${esc(v.amountDue)}</span> <small>${sym}</small></p>
  <p class="sub">on <b>${esc(v.chainName)}</b> (chain id ${esc(v.chainId)})</p>
  ${fee ? `<p class="sub">Includes ${esc(fee)} ${sym} of fees (order amount ${esc(v.amount)} ${sym})</p>` : ""}
  ${v.description ? `<p class="desc">${esc(v.description)}</p>` : ""}

  <div id="msg" class="msg${msg ? ` ${msg.kind}` : ""}" role="status" aria-live="polite"${msg ? "" : " hidden"}>${msg ? esc(msg.text) : ""}${msg?.link ? ` <a href="${esc(msg.link)}">Continue</a>` : ""}</div>
  <progress id="confirm-progress" class="progress" max="${esc(progress?.required ?? 1)}" value="${esc(progress?.count ?? 0)}" aria-label="Confirmations"${progress ? "" : " hidden"}></progress>

  <section id="pay"${showPay ? "" : " hidden"}>
    <div id="qr" class="qr" role="img" aria-label="QR code of the payment request">${qrSvg}</div>
    <p class="center label">Scan with a wallet, or <a id="wallet-link" href="${esc(v.paymentUri)}">open in wallet</a></p>
    <div class="field">
      <span class="label">Send exactly <b id="send-amount">${esc(v.remainingAmount)}</b> ${sym} to</span>
      <div class="addr"><code id="recipient">${esc(v.recipientAddress)}</code><button class="btn" type="button" data-copy="recipient">Copy</button></div>
    </div>
    ${
      native
        ? `<p class="sub note">${sym} is the native coin of ${esc(v.chainName)}: send it directly, no token contract.</p>`
        : `<div class="field">
      <span class="label">${sym} token contract</span>
      <div class="addr"><code id="token-address">${esc(v.token.address)}</code><button class="btn" type="button" data-copy="token-address">Copy</button></div>
    </div>`
    }
    <p class="warn">Send only ${sym} on ${esc(v.chainName)}. Other tokens or networks sent to this address are not credited to this payment.</p>
  </section>
  ${bridge ? bridgeSection() : ""}

  <div id="figures" class="grid"${showReceived(v, v.stage) ? "" : " hidden"}>
    <div><span class="label">Received</span><b><span id="received">${esc(v.receivedAmount)}</span> ${sym}</b></div>
    <div id="remaining-cell"${showExpiry(v.stage) ? "" : " hidden"}><span class="label">Remaining</span><b><span id="remaining">${esc(v.remainingAmount)}</span> ${sym}</b></div>
    <div id="expiry"${showExpiry(v.stage) ? "" : " hidden"}><span class="label">Expires in</span><b id="countdown">${esc(countdownText(v.stage, v.expiresAt - v.serverTime))}</b></div>
  </div>

  <p class="foot">Order ${esc(v.orderId)} · Payment ${esc(v.paymentId)}</p>
</div>
</main>
<script type="application/json" id="payment-state">${scriptJson(v)}</script>
${bridge ? `<script type="application/json" id="bridge-state">${scriptJson(bridge)}</script>\n` : ""}<script src="${esc(assets.js)}" nonce="${nonce}"></script>
</body>
</html>`;
}

export function notFoundPage(nonce: string, assets: AssetUrls): string {
  return `${htmlHead("Payment not found", nonce, assets)}
</head>
<body>
<main>
<div class="card">
  <p class="amount">Payment not found</p>
  <p class="sub">This payment link does not exist. Check the link, or ask the merchant for a new one.</p>
</div>
</main>
</body>
</html>`;
}
