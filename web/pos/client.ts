import type { PublicPaymentView } from "../../modules/payments/index.js";
import { isFinalStage, saleLabel, saleMessage, saleProgress } from "./texts.js";

/**
 * The POS page's script (bundled by assets.ts, served as /pos/assets/pos.js): the on-screen keypads type into
 * their inputs (PIN digits; an amount with at most the chosen token's decimals), the currency follows the chosen
 * token, and the sale screen polls the public status route until the payment is paid, expired or closed.
 * Every form works without it.
 */

const POLL_MS = 2_000;
const MAX_INTEGER_DIGITS = 15;
const MAX_PIN = 32;

const byId = (id: string) => document.getElementById(id);

function chosenToken(): HTMLInputElement | null {
  return document.querySelector<HTMLInputElement>('input[name="token"]:checked');
}

/** The amount after one key, within the chosen token's decimals. */
function typeAmount(value: string, key: string, decimals: number): string {
  if (key === "back") return value.slice(0, -1);
  if (key === "clear") return "";
  if (key === "dot") return value.includes(".") || decimals === 0 ? value : `${value || "0"}.`;
  const [whole, fraction] = value.split(".");
  if (fraction !== undefined) return fraction.length >= decimals ? value : value + key;
  if (whole === "0") return key;
  return (whole ?? "").length >= MAX_INTEGER_DIGITS ? value : value + key;
}

function typePin(value: string, key: string): string {
  if (key === "back") return value.slice(0, -1);
  if (key === "clear") return "";
  return /^\d$/.test(key) && value.length < MAX_PIN ? value + key : value;
}

function updateCharge() {
  const amount = byId("amount") as HTMLInputElement | null;
  const charge = document.querySelector<HTMLButtonElement>('[data-testid="pos-charge"]');
  if (amount && charge && !charge.dataset.blocked) charge.disabled = !/[1-9]/.test(amount.value);
}

function setupKeypads() {
  for (const pad of Array.from(document.querySelectorAll<HTMLElement>("[data-keypad]"))) {
    const input = byId(pad.dataset.target ?? "") as HTMLInputElement | null;
    if (!input) continue;
    // The on-screen keypad is the way in on a phone: no system keyboard over it (a hardware keyboard still types).
    input.setAttribute("inputmode", "none");
    pad.addEventListener("click", (e) => {
      const key = (e.target as HTMLElement).closest<HTMLButtonElement>("[data-key]")?.dataset.key;
      if (!key) return;
      const decimals = Number(chosenToken()?.dataset.decimals ?? 18);
      input.value = pad.dataset.keypad === "amount" ? typeAmount(input.value, key, decimals) : typePin(input.value, key);
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  const charge = document.querySelector<HTMLButtonElement>('[data-testid="pos-charge"]');
  if (charge?.disabled) charge.dataset.blocked = "1";
  byId("amount")?.addEventListener("input", updateCharge);
  updateCharge();
}

function setupTokens() {
  document.addEventListener("change", (e) => {
    const radio = e.target as HTMLInputElement;
    if (radio.name !== "token") return;
    const currency = byId("currency");
    if (currency) currency.textContent = radio.dataset.symbol ?? "";
    // Cut fraction digits the newly chosen token does not have.
    const amount = byId("amount") as HTMLInputElement | null;
    const decimals = Number(radio.dataset.decimals ?? 18);
    if (amount && amount.value.includes(".")) {
      const [whole, fraction] = amount.value.split(".");
      amount.value = decimals === 0 ? (whole ?? "") : `${whole}.${(fraction ?? "").slice(0, decimals)}`;
      updateCharge();
    }
  });
}

function showSale(sale: HTMLElement, v: PublicPaymentView) {
  const status = byId("status")!;
  status.textContent = saleLabel(v);
  status.className = `pos-status ${v.stage}`;
  status.dataset.status = v.status;
  status.dataset.stage = v.stage;
  sale.className = `pos-sale stage-${v.stage}`;
  byId("qr")!.hidden = isFinalStage(v.stage);
  byId("paid")!.hidden = v.stage !== "completed";
  byId("sale-message")!.textContent = saleMessage(v);
  const bar = byId("confirm-progress") as HTMLProgressElement | null;
  const progress = saleProgress(v);
  if (bar) {
    bar.hidden = !progress;
    if (progress) {
      bar.max = progress.required;
      bar.value = progress.count;
    }
  }
  const payee = byId("merchant-name");
  if (payee && v.merchantName) payee.textContent = v.merchantName;
  if (isFinalStage(v.stage)) byId("new-sale")!.className = "pos-primary button";
}

function pollSale() {
  const sale = byId("sale");
  const url = sale?.dataset.statusUrl;
  if (!sale || !url) return;
  const stage = () => byId("status")?.dataset.stage as PublicPaymentView["stage"];
  const poll = () => {
    if (isFinalStage(stage())) return;
    fetch(url, { cache: "no-store", headers: { accept: "application/json" } })
      .then((r) => (r.ok ? (r.json() as Promise<PublicPaymentView>) : null))
      .then((v) => {
        if (v && v.paymentId === sale.dataset.paymentId) showSale(sale, v);
      })
      .catch(() => {})
      .then(() => {
        if (!isFinalStage(stage())) setTimeout(poll, POLL_MS);
      });
  };
  setTimeout(poll, POLL_MS);
}

setupKeypads();
setupTokens();
pollSale();
