import type { PayerStage, PublicPaymentView } from "../../modules/payments/index.js";
import { startBridge } from "./bridge-client.js";
import { confirmProgress, countdownText, showExpiry, showReceived, stageAt, stageLabel, stageNotice, type Notice } from "./texts.js";

/**
 * The payer page's script (bundled by assets.ts, served as /pay/assets/pay.js): polls the public
 * status route, keeps the page in step with it, runs the countdown on the server's clock, swaps
 * the QR after a partial payment, copies addresses, and follows the redirect once completed. With cross-chain
 * payments on, it runs the "Pay with another token or network" section too (bridge-client.ts).
 */

const POLL_MS = 2_000;

const $ = (id: string) => document.getElementById(id)!;

let state = JSON.parse($("payment-state").textContent!) as PublicPaymentView;
const statusUrl = `../api/payments/${encodeURIComponent(state.paymentId)}/status`;
const qrUrl = `${encodeURIComponent(state.paymentId)}/qr.svg`;
let skew = state.serverTime - Date.now();
let redirecting = false;
// Started before the first render; it asks for a render when an order starts or ends (the address is hidden meanwhile).
const bridge = startBridge(
  () => state,
  () => render(null),
);

function showNotice(n: Notice | null) {
  const el = $("msg");
  if (!n) {
    el.hidden = true;
    return;
  }
  el.className = `msg ${n.kind}`;
  el.textContent = n.text;
  if (n.link) {
    el.appendChild(document.createTextNode(" "));
    const a = document.createElement("a");
    a.href = n.link;
    a.textContent = "Continue";
    el.appendChild(a);
  }
  el.hidden = false;
}

function render(prev: PublicPaymentView | null): PayerStage {
  const s = state;
  const stage = stageAt(s, Date.now() + skew);
  $("badge").className = `badge ${stage}`;
  $("badge").textContent = stageLabel(s, stage);
  $("merchant-name").textContent = s.merchantName;
  const progress = confirmProgress(s, stage);
  const bar = $("confirm-progress") as HTMLProgressElement;
  bar.hidden = !progress;
  if (progress) {
    bar.max = progress.required;
    bar.value = progress.count;
  }
  $("figures").hidden = !showReceived(s, stage);
  $("remaining-cell").hidden = !showExpiry(stage);
  $("expiry").hidden = !showExpiry(stage);
  $("received").textContent = s.receivedAmount;
  $("remaining").textContent = s.remainingAmount;
  $("send-amount").textContent = s.remainingAmount;
  $("wallet-link").setAttribute("href", s.paymentUri);
  if (prev && prev.paymentUri !== s.paymentUri) refreshQr();
  if (bridge) bridge.paymentChanged(stage);
  $("pay").hidden = stage !== "awaiting_payment" || (bridge !== null && bridge.inFlight());
  showNotice(stageNotice(s, stage));
  const redirectUrl = s.redirectUrl;
  if (stage === "completed" && redirectUrl && !redirecting) {
    redirecting = true;
    setTimeout(() => location.replace(redirectUrl), 1500);
  }
  return stage;
}

function refreshQr() {
  fetch(qrUrl, { cache: "no-store" })
    .then((r) => (r.ok ? r.text() : null))
    .then((svg) => {
      if (svg && svg.indexOf("<svg") === 0) $("qr").innerHTML = svg;
    })
    .catch(() => {});
}

function tick() {
  const left = state.expiresAt - (Date.now() + skew);
  // Re-render only when the countdown runs out between polls (the stage may turn to expired).
  const stage = state.stage === "awaiting_payment" && left <= 0 ? render(null) : state.stage;
  $("countdown").textContent = countdownText(stage, left);
}

function poll() {
  if (state.stage === "completed") return;
  fetch(statusUrl, { cache: "no-store", headers: { accept: "application/json" } })
    .then((r) => (r.ok ? (r.json() as Promise<PublicPaymentView>) : null))
    .then((next) => {
      if (next && next.paymentId === state.paymentId) {
        const prev = state;
        state = next;
        skew = next.serverTime - Date.now();
        render(prev);
      }
    })
    .catch(() => {})
    .then(() => {
      if (state.stage !== "completed")
        setTimeout(poll, state.stage === "awaiting_payment" || state.stage === "processing" ? POLL_MS : POLL_MS * 5);
    });
}

function fallbackCopy(text: string): boolean {
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    // no clipboard at all: the address stays selectable on the page
  }
  document.body.removeChild(ta);
  return ok;
}

document.addEventListener("click", (e) => {
  const target = e.target as Element | null;
  const btn = target && target.closest ? target.closest("[data-copy]") : null;
  if (!btn) return;
  const text = $(btn.getAttribute("data-copy")!).textContent ?? "";
  const done = () => {
    btn.textContent = "Copied";
    setTimeout(() => (btn.textContent = "Copy"), 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text) && done());
  } else if (fallbackCopy(text)) done();
});

render(null);
tick();
setInterval(tick, 1000);
setTimeout(poll, POLL_MS);
