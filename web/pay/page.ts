import { randomBytes } from "node:crypto";
import { Hono, type Context } from "hono";
import QRCode from "qrcode";
import { isNativeToken } from "../../chains/registry.js";
import { formatAmount, parseAmount } from "../../core/money.js";
import { publicPaymentView, type PublicPaymentView } from "../../modules/payments/public-view.js";
import type { AppEnv } from "../../api/context.js";

/**
 * The payer page `{app_url}/pay/<paymentId>` (mounted at the root, outside /api), its QR image, and
 * the public status route it polls. The status route carries its full path
 * (`/api/payments/:paymentId/status`) because this app is mounted at the root; it cannot shadow
 * `/api/payments/verify` (one segment fewer, and matched first by the /api sub-app).
 *
 * Everything here is public: the payment id (a random UUID) is the only capability, and the view
 * holds nothing beyond what the payer needs (see payments/public-view.ts).
 */
export const payPage = new Hono<AppEnv>();

const POLL_MS = 2_000;

const noStore = (c: Context) => {
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
};

/** GET /api/payments/:paymentId/status: the public view, polled by the payer page. */
payPage.get("/api/payments/:paymentId/status", async (c) => {
  noStore(c);
  const view = await publicPaymentView(c.var.deps, c.req.param("paymentId"));
  if (!view) return c.json({ error: "Payment not found" }, 404);
  return c.json(view);
});

/** GET /pay/:paymentId/qr.svg: the QR of what is still to pay (the page swaps it in after a partial payment). */
payPage.get("/pay/:paymentId/qr.svg", async (c) => {
  noStore(c);
  const view = await publicPaymentView(c.var.deps, c.req.param("paymentId"));
  if (!view) return c.text("Payment not found", 404);
  c.header("Content-Security-Policy", "default-src 'none'");
  return c.body(await qrSvg(view.paymentUri), 200, { "Content-Type": "image/svg+xml; charset=utf-8" });
});

/** GET /pay/:paymentId: the server-rendered payer page. */
payPage.get("/pay/:paymentId", async (c) => {
  noStore(c);
  const nonce = randomBytes(16).toString("base64");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  c.header("Referrer-Policy", "no-referrer");
  const view = await publicPaymentView(c.var.deps, c.req.param("paymentId"));
  if (!view) return c.html(notFoundPage(nonce), 404);
  return c.html(payerPage(view, await qrSvg(view.paymentUri), nonce));
});

function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M", color: { dark: "#111827", light: "#ffffff" } });
}

// ---------------------------------------------------------------------------------------------
// HTML

const esc = (s: unknown) =>
  String(s ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

/** JSON inside <script>: no `</script>`, no HTML comment openers, no JS line separators. */
const scriptJson = (v: unknown) =>
  JSON.stringify(v).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");

/** The part of amountDue that is fees the payer covers (payer-covers-fee mode), or null. */
function payerFee(v: PublicPaymentView): string | null {
  const d = v.token.decimals;
  const fee = parseAmount(v.amountDue, d) - parseAmount(v.amount, d);
  return fee > 0n ? formatAmount(fee, d) : null;
}

export function formatCountdown(ms: number): string {
  if (ms <= 0) return "Expired";
  const s = Math.floor(ms / 1000);
  const days = Math.floor(s / 86400);
  const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, "0")).join(":");
  return days > 0 ? `${days}d ${hms}` : hms;
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:440px;margin:0 auto;padding:20px 14px 32px}
.card{background:#fff;border-radius:14px;box-shadow:0 1px 3px rgba(0,0,0,.08);padding:20px}
.top{display:flex;justify-content:space-between;align-items:center;gap:8px}
.label{color:#6b7280;font-size:13px}
.badge{font-size:12px;font-weight:600;padding:3px 10px;border-radius:999px;background:#e5e7eb;color:#374151;white-space:nowrap}
.badge.awaiting_payment{background:#dbeafe;color:#1e40af}.badge.processing{background:#fef3c7;color:#92400e}
.badge.completed{background:#d1fae5;color:#065f46}.badge.expired,.badge.closed{background:#fee2e2;color:#991b1b}
.amount{font-size:30px;font-weight:700;margin:10px 0 0;word-break:break-all}
.amount small{font-size:18px;font-weight:600;color:#374151}
.sub{color:#4b5563;font-size:14px;margin:2px 0 0}
.desc{margin:12px 0 0;color:#374151}
.note{margin-top:12px}
.qr{width:220px;max-width:100%;margin:18px auto 6px;border:1px solid #e5e7eb;border-radius:10px;padding:6px;background:#fff}
.qr svg{display:block;width:100%;height:auto}
.center{text-align:center}
.btn{display:inline-block;border:1px solid #d1d5db;background:#fff;color:#111827;border-radius:8px;padding:6px 12px;font:inherit;font-size:13px;cursor:pointer;text-decoration:none}
.btn:hover{background:#f9fafb}.btn.primary{background:#111827;color:#fff;border-color:#111827}
.field{margin-top:16px}
.addr{display:flex;gap:8px;align-items:center;margin-top:4px}
.addr code{flex:1;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f9fafb;border:1px solid #e5e7eb;border-radius:8px;padding:8px;word-break:break-all}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:10px;margin-top:16px}
.grid div{background:#f9fafb;border-radius:8px;padding:8px 10px}
.grid b{display:block;font-size:15px;word-break:break-all}
.warn{margin-top:16px;font-size:13px;color:#92400e;background:#fffbeb;border:1px solid #fde68a;border-radius:8px;padding:8px 10px}
.msg{margin-top:16px;padding:12px;border-radius:10px;font-size:14px}
.msg.ok{background:#ecfdf5;color:#065f46}.msg.info{background:#eff6ff;color:#1e3a8a}.msg.bad{background:#fef2f2;color:#991b1b}
.foot{margin-top:14px;color:#9ca3af;font-size:12px;text-align:center;word-break:break-all}
[hidden]{display:none!important}
`;

const STAGE_LABEL: Record<PublicPaymentView["stage"], string> = {
  awaiting_payment: "Awaiting payment",
  processing: "Confirming",
  completed: "Paid",
  expired: "Expired",
  closed: "Closed",
};

/** The notice under the amount; the script shows the same texts as the status changes. */
function stageMessage(v: PublicPaymentView): { kind: "ok" | "info" | "bad"; text: string; link?: string } | null {
  switch (v.stage) {
    case "completed":
      return v.redirectUrl ? { kind: "ok", text: MESSAGES.redirecting, link: v.redirectUrl } : { kind: "ok", text: MESSAGES.completed };
    case "processing":
      return { kind: "info", text: MESSAGES.processing };
    case "expired":
      return { kind: "bad", text: MESSAGES.expired };
    case "closed":
      return { kind: "bad", text: MESSAGES.closed.replace("{status}", v.status) };
    default:
      return /[1-9]/.test(v.receivedAmount) ? { kind: "info", text: MESSAGES.partial.replace("{remaining}", `${v.remainingAmount} ${v.token.symbol}`) } : null;
  }
}

const MESSAGES = {
  redirecting: "Payment complete. Returning you to the merchant\u2026",
  completed: "Payment complete. Thank you! You can close this page.",
  processing: "Payment received. It is being confirmed and settled; this page updates by itself.",
  expired: "This payment link has expired. Do not send funds to it; ask the merchant for a new link.",
  closed: "This payment can no longer be paid here (status: {status}). Please contact the merchant.",
  partial: "Partial payment received. Send the remaining {remaining} to complete it.",
};

function payerPage(v: PublicPaymentView, qr: string, nonce: string): string {
  const sym = esc(v.token.symbol);
  const fee = payerFee(v);
  const showPay = v.stage === "awaiting_payment";
  const native = isNativeToken(v.token.address);
  const msg = stageMessage(v);
  return `${htmlHead(`Pay ${esc(v.amountDue)} ${sym}`, nonce)}
</head>
<body>
<main>
<div class="card">
  <div class="top"><span class="label">Payment request</span><span id="badge" class="badge ${esc(v.stage)}">${esc(STAGE_LABEL[v.stage])}</span></div>
  <p class="amount"><span id="amount-due">${esc(v.amountDue)}</span> <small>${sym}</small></p>
  <p class="sub">on <b>${esc(v.chainName)}</b> (chain id ${esc(v.chainId)})</p>
  ${fee ? `<p class="sub">Includes ${esc(fee)} ${sym} of fees (order amount ${esc(v.amount)} ${sym})</p>` : ""}
  ${v.description ? `<p class="desc">${esc(v.description)}</p>` : ""}

  <div id="msg" class="msg${msg ? ` ${msg.kind}` : ""}" role="status" aria-live="polite"${msg ? "" : " hidden"}>${msg ? esc(msg.text) : ""}${msg?.link ? ` <a href="${esc(msg.link)}">Continue</a>` : ""}</div>

  <section id="pay"${showPay ? "" : " hidden"}>
    <div id="qr" class="qr" role="img" aria-label="QR code of the payment request">${qr}</div>
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

  <div class="grid">
    <div><span class="label">Received</span><b><span id="received">${esc(v.receivedAmount)}</span> ${sym}</b></div>
    <div><span class="label">Remaining</span><b><span id="remaining">${esc(v.remainingAmount)}</span> ${sym}</b></div>
    <div><span class="label">Expires in</span><b id="countdown">${esc(v.stage === "awaiting_payment" ? formatCountdown(v.expiresAt - v.serverTime) : v.stage === "expired" ? "Expired" : "\u2014")}</b></div>
    <div><span class="label">Status</span><b id="status">${esc(v.status)}</b></div>
  </div>

  <p class="foot">Order ${esc(v.orderId)} · Payment ${esc(v.paymentId)}</p>
</div>
</main>
<script nonce="${nonce}">
(function () {
  "use strict";
  var state = ${scriptJson(v)};
  var POLL_MS = ${POLL_MS};
  var statusUrl = "../api/payments/" + encodeURIComponent(state.paymentId) + "/status";
  var qrUrl = encodeURIComponent(state.paymentId) + "/qr.svg";
  var labels = ${scriptJson(STAGE_LABEL)};
  var M = ${scriptJson(MESSAGES)};
  var skew = state.serverTime - Date.now();
  var redirecting = false;
  var $ = function (id) { return document.getElementById(id); };

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function countdown(ms) {
    if (ms <= 0) return "Expired";
    var s = Math.floor(ms / 1000), d = Math.floor(s / 86400);
    var hms = pad(Math.floor((s % 86400) / 3600)) + ":" + pad(Math.floor((s % 3600) / 60)) + ":" + pad(s % 60);
    return d > 0 ? d + "d " + hms : hms;
  }
  function msg(kind, text, link) {
    var el = $("msg");
    el.className = "msg " + kind;
    el.textContent = text;
    if (link) {
      el.appendChild(document.createTextNode(" "));
      var a = document.createElement("a");
      a.href = link; a.textContent = "Continue";
      el.appendChild(a);
    }
    el.hidden = false;
  }
  function isZero(s) { return !/[1-9]/.test(s); }
  function expiredLocally() { return state.expiresAt - (Date.now() + skew) <= 0; }

  function render(prev) {
    var s = state;
    var partial = !isZero(s.receivedAmount);
    // Between polls the countdown can run out: nothing received -> expired here too.
    var stage = s.stage === "awaiting_payment" && expiredLocally() && !partial ? "expired" : s.stage;
    $("badge").className = "badge " + stage;
    $("badge").textContent = labels[stage] || s.status;
    $("status").textContent = s.status;
    $("received").textContent = s.receivedAmount;
    $("remaining").textContent = s.remainingAmount;
    $("send-amount").textContent = s.remainingAmount;
    $("wallet-link").setAttribute("href", s.paymentUri);
    if (prev && prev.paymentUri !== s.paymentUri) refreshQr();
    $("pay").hidden = stage !== "awaiting_payment";
    if (stage === "completed") {
      if (s.redirectUrl) {
        msg("ok", M.redirecting, s.redirectUrl);
        if (!redirecting) { redirecting = true; setTimeout(function () { location.replace(s.redirectUrl); }, 1500); }
      } else {
        msg("ok", M.completed);
      }
    } else if (stage === "processing") {
      msg("info", M.processing);
    } else if (stage === "expired") {
      msg("bad", M.expired);
    } else if (stage === "closed") {
      msg("bad", M.closed.replace("{status}", s.status));
    } else if (partial) {
      msg("info", M.partial.replace("{remaining}", s.remainingAmount + " " + s.token.symbol));
    } else {
      $("msg").hidden = true;
    }
    return stage;
  }
  function refreshQr() {
    fetch(qrUrl, { cache: "no-store" }).then(function (r) { return r.ok ? r.text() : null; }).then(function (svg) {
      if (svg && svg.indexOf("<svg") === 0) $("qr").innerHTML = svg;
    }).catch(function () {});
  }
  function tick() {
    var left = state.expiresAt - (Date.now() + skew);
    var stage = state.stage === "awaiting_payment" && left <= 0 ? render(null) : state.stage;
    $("countdown").textContent = stage === "awaiting_payment" ? countdown(left) : stage === "expired" ? "Expired" : "\\u2014";
  }
  function poll() {
    if (state.stage === "completed") return;
    fetch(statusUrl, { cache: "no-store", headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (next) {
        if (next && next.paymentId === state.paymentId) {
          var prev = state;
          state = next;
          skew = next.serverTime - Date.now();
          render(prev);
        }
      })
      .catch(function () {})
      .then(function () {
        if (state.stage !== "completed") setTimeout(poll, state.stage === "awaiting_payment" || state.stage === "processing" ? POLL_MS : POLL_MS * 5);
      });
  }
  document.addEventListener("click", function (e) {
    var btn = e.target && e.target.closest ? e.target.closest("[data-copy]") : null;
    if (!btn) return;
    var text = $(btn.getAttribute("data-copy")).textContent;
    var done = function () { btn.textContent = "Copied"; setTimeout(function () { btn.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text) && done(); });
    } else if (fallbackCopy(text)) done();
  });
  function fallbackCopy(text) {
    var ta = document.createElement("textarea");
    ta.value = text; ta.setAttribute("readonly", ""); ta.style.position = "fixed"; ta.style.opacity = "0";
    document.body.appendChild(ta); ta.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (err) {}
    document.body.removeChild(ta);
    return ok;
  }
  render(null);
  tick();
  setInterval(tick, 1000);
  setTimeout(poll, POLL_MS);
})();
</script>
</body>
</html>`;
}

/** Doctype, head and styles shared by every page (`title` must already be escaped). */
function htmlHead(title: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style nonce="${nonce}">${STYLE}</style>`;
}

function notFoundPage(nonce: string): string {
  return `${htmlHead("Payment not found", nonce)}
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
