import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, toPublicView, type PaymentRow, type PaymentStatus } from "../modules/payments/index.js";
import type { PosSession } from "../modules/terminals/index.js";
import { PAYER_STATUS_TEXT, payerStatusText } from "./payer-status.js";
import { payerPage } from "./pay/template.js";
import { SaleStatusScreen } from "./pos/templates.js";

// Every payment status, as a payer (or the cashier beside them) reads it: a label and a line in payer words, and
// neither the payer page nor the POS sale screen ever shows a raw status name. No stack needed.

const SNAKE = PAYMENT_STATUSES.filter((s) => s.includes("_"));
const NOW = 1_700_000_000_000;
const ORDER_ID = "order-7";

/** The fields toPublicView reads, for `status` (received in full past `pending`). */
function row(status: PaymentStatus, over: Partial<PaymentRow> = {}): PaymentRow {
  return {
    id: "0b8e2c1e-4a57-4f7e-9a61-3c2d1e0f9a8b",
    status,
    order_id: ORDER_ID,
    description: "Two coffees",
    chain_id: 777177,
    token_address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    token_symbol: "USDT",
    token_decimals: 6,
    amount_units: "5000000",
    due_units: "5000000",
    received_units: status === "pending" || status === "expired" || status === "cancelled" ? "0" : "5000000",
    recipient_address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    redirect_url: null,
    block_confirmations: 3,
    received_block_number: status === "waiting_for_confirmation" ? "100" : null,
    expires_at: new Date(NOW + 60_000),
    merchant_name: "Corner Café",
    ...over,
  } as unknown as PaymentRow;
}

/** The text a payer sees: no scripts (the embedded state), no tags, no hidden elements' text left out on purpose. */
function visibleText(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, " ")
    .replace(/<(section|p|div|progress)\b[^>]*\shidden[^>]*>[\s\S]*?<\/\1>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");
}

function expectNoRawStatus(text: string, what: string) {
  for (const raw of SNAKE) expect(text, `${what}: ${raw}`).not.toContain(raw);
  // "Status pending", "status: failed": a raw name printed as such.
  expect(text, what).not.toMatch(new RegExp(`status:?\\s+(${PAYMENT_STATUSES.join("|")})\\b`, "i"));
}

const session = {
  terminal: { id: "t-1", merchantId: "m-1", code: "FRONT", name: "Front desk", payoutAddress: "0x1", allowedTokens: [] },
  cashier: { id: "c-1", code: "ALICE", name: "Alice" },
} as unknown as PosSession;
const posHtml = (r: PaymentRow) =>
  String(
    SaleStatusScreen({
      session,
      csrf: "x",
      view: toPublicView(r, "s", NOW, 101n),
      payUrl: "https://pay.example/pay/x",
      qrSvg: "<svg></svg>",
    }),
  );
const payHtml = (r: PaymentRow, now = NOW) =>
  payerPage(toPublicView(r, "s", now, 101n), "<svg></svg>", "n", { css: "pay.css", js: "pay.js" });
const badge = (html: string) => /<span id="badge" class="badge [a-z_]+">([^<]*)</.exec(html)?.[1];

describe("payer texts of every status", () => {
  it.each(PAYMENT_STATUSES)("%s has a payer label and a one-line explanation, never its raw name", (status) => {
    const t = PAYER_STATUS_TEXT[status];
    expect(t, status).toBeDefined();
    expect(t.label.trim()).not.toBe("");
    expect(t.explanation.trim().length).toBeGreaterThan(20);
    expect(t.explanation).not.toContain("\n");
    // Not the raw name, not even capitalised ("Expired" for `expired` reads as an enum): a label of its own.
    expect(t.label.toLowerCase()).not.toBe(status.replace(/_/g, " "));
    for (const raw of SNAKE) {
      expect(t.label).not.toContain(raw);
      expect(t.explanation).not.toContain(raw);
    }
    expect(t.label).not.toContain("_");
    expect(t.explanation).not.toContain("_");
  });

  it("a pending link past its expiry reads as expired; an unknown status never shows its name", () => {
    expect(payerStatusText({ status: "pending" }, "expired")).toBe(PAYER_STATUS_TEXT.expired);
    expect(payerStatusText({ status: "some_new_state" }).label).not.toContain("some_new_state");
    expect(payerStatusText({ status: "constructor" }).label).toBe("In progress");
    expect(payerStatusText({ status: "waiting_for_confirmation", confirmations: { count: 2, required: 3 } }).label).toBe(
      "Confirming 2 of 3",
    );
  });
});

describe("the payer page and the POS sale screen, rendered for every status", () => {
  it.each(PAYMENT_STATUSES)("%s: no raw status name in the visible text; the status's own label and line", (status) => {
    const html = payHtml(row(status));
    const text = visibleText(html);
    expectNoRawStatus(text, `payer page ${status}`);
    expect(text).toContain("Corner Café");
    const expected = payerStatusText({
      status,
      confirmations: status === "waiting_for_confirmation" ? { count: 2, required: 3 } : undefined,
    });
    expect(badge(html)).toBe(expected.label);
    if (status !== "pending" && status !== "completed") expect(text).toContain(expected.explanation);
    // The expiry only while the link can be paid.
    expect(/<div id="expiry"( hidden)?>/.exec(html)?.[1] === undefined, status).toBe(status === "pending");

    const pos = visibleText(posHtml(row(status)));
    expectNoRawStatus(pos, `POS ${status}`);
    expect(pos).toContain("Payment to Corner Café");
    expect(pos).toContain(expected.label);
  });

  it("pending past expiresAt: expired at once on both screens, before the expiry job runs", () => {
    const late = row("pending", { expires_at: new Date(NOW - 1) });
    const html = payHtml(late);
    expect(badge(html)).toBe(PAYER_STATUS_TEXT.expired.label);
    expect(visibleText(html)).toContain(PAYER_STATUS_TEXT.expired.explanation);
    expect(html).toContain('<section id="pay" hidden>');
    expect(html).toContain('<div id="expiry" hidden>');
    expectNoRawStatus(visibleText(html), "expired pending");
    const pos = visibleText(posHtml(late));
    expect(pos).toContain(PAYER_STATUS_TEXT.expired.label);
    expect(pos).toContain("Start a new sale.");
  });

  it("waiting for confirmations: 'Confirming n of m' and a progress bar at that depth", () => {
    const html = payHtml(row("waiting_for_confirmation"));
    expect(badge(html)).toBe("Confirming 2 of 3");
    expect(html).toMatch(/<progress id="confirm-progress" class="progress" max="3" value="2" aria-label="Confirmations"><\/progress>/);
    expect(payHtml(row("paid"))).toMatch(/<progress id="confirm-progress"[^>]* hidden>/);
    expect(posHtml(row("waiting_for_confirmation"))).toMatch(/<progress[^>]*max="3"[^>]*value="2"/);
  });

  it("a partly paid link: 'Partly paid' and what is left", () => {
    const html = payHtml(row("pending", { received_units: "2000000" }));
    expect(badge(html)).toBe("Partly paid");
    expect(visibleText(html)).toContain("Send the remaining 3 USDT");
    expect(visibleText(posHtml(row("pending", { received_units: "2000000" })))).toContain("3 USDT still to pay");
  });

  it("who is paid: the business name in the title and above the amount, escaped; a favicon in the head", () => {
    const html = payHtml(row("pending", { merchant_name: `Bob's <b>Bikes</b>` } as Partial<PaymentRow>));
    expect(html).toContain("<title>Pay 5 USDT to Bob&#39;s &lt;b&gt;Bikes&lt;/b&gt;</title>");
    expect(html).toContain('<b id="merchant-name" data-testid="merchant-name">Bob&#39;s &lt;b&gt;Bikes&lt;/b&gt;</b>');
    expect(html).toMatch(/<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml,%3Csvg/);
    // No name known: no empty "Payment to" line.
    expect(payHtml(row("pending", { merchant_name: undefined } as Partial<PaymentRow>))).toContain('<p class="payee" hidden>');
  });
});
