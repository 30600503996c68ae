import { describe, expect, it } from "vitest";
import { formatCountdown, stageLabel, stageNotice } from "./texts.js";
import { eip681Uri, payerStage, toPublicView } from "../../modules/payments/index.js";
import type { PaymentRow } from "../../modules/payments/index.js";
import { hashMatches, redirectHash } from "../../modules/payments/index.js";

// Pure parts of the payer view: no stack needed.
const SECRET = "test-secret";
const row = (over: Partial<PaymentRow> = {}): PaymentRow =>
  ({
    id: "0b8e2c1e-4a57-4f7e-9a61-3c2d1e0f9a8b",
    merchant_id: "m-internal",
    order_id: "order-1",
    description: null,
    status: "pending",
    chain_id: 777177,
    token_address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    token_symbol: "USDT",
    token_decimals: 6,
    amount_units: "5000000",
    due_units: "5100000",
    merchant_address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    recipient_address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    salt: "0xsalt",
    redirect_url: "https://shop.example/return?x=1",
    block_confirmations: 1,
    gasless: false,
    payer_covers_fee: true,
    custom_price_usd: null,
    price_usd: "1",
    price_source: "stablecoin",
    platform_fee_bps: 100,
    promo_applied: true,
    platform_fee_units: "0",
    gas_fee_units: "0",
    processing_fee_units: "100000",
    gas_tank_fee_micros: "0",
    received_units: "0",
    overpayment_units: "0",
    payment_tx_hash: null,
    payment_block_number: null,
    settlement_tx_hash: null,
    settled_units: null,
    withdrawn_units: null,
    withdrawal_tx_hash: null,
    failure_reason: null,
    terminal_id: null,
    expires_at: new Date(1_700_000_060_000),
    created_at: new Date(1_700_000_000_000),
    paid_at: null,
    completed_at: null,
    updated_at: new Date(1_700_000_000_000),
    ...over,
  }) as PaymentRow;

describe("toPublicView", () => {
  it("has the payer's fields only, with amountDue from due_units (payer covers the fee)", () => {
    const v = toPublicView(row(), SECRET, 1_700_000_000_000);
    expect(v).toEqual({
      paymentId: "0b8e2c1e-4a57-4f7e-9a61-3c2d1e0f9a8b",
      merchantName: "",
      status: "pending",
      stage: "awaiting_payment",
      chainId: 777177,
      chainName: "Service Chain Testnet",
      token: { address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", symbol: "USDT", decimals: 6 },
      amountDue: "5.1",
      amount: "5",
      receivedAmount: "0",
      remainingAmount: "5.1",
      recipientAddress: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      expiresAt: 1_700_000_060_000,
      serverTime: 1_700_000_000_000,
      description: null,
      orderId: "order-1",
      paymentUri:
        "ethereum:0x5FbDB2315678afecb367f032d93F642f64180aa3@777177/transfer?address=0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC&uint256=5100000",
      redirectUrl: null,
    });
    const text = JSON.stringify(v);
    for (const secret of ["m-internal", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "platform", "gas_tank", "salt", "price"])
      expect(text).not.toContain(secret);
  });

  it("after a partial payment: remaining amount, and the URI asks for the rest", () => {
    const v = toPublicView(row({ received_units: "2000000" }), SECRET, 0);
    expect(v.receivedAmount).toBe("2");
    expect(v.remainingAmount).toBe("3.1");
    expect(v.paymentUri.endsWith("&uint256=3100000")).toBe(true);
  });

  it("past expiresAt with nothing received the payer sees `expired` (before the expiry job runs); a partial payment stays open", () => {
    const after = 1_700_000_060_000;
    expect(toPublicView(row(), SECRET, after).stage).toBe("expired");
    expect(toPublicView(row(), SECRET, after - 1).stage).toBe("awaiting_payment");
    expect(toPublicView(row({ received_units: "1" }), SECRET, after).stage).toBe("awaiting_payment");
    expect(toPublicView(row({ status: "paid", received_units: "5100000" }), SECRET, after).stage).toBe("processing");
  });

  it("overpaid: nothing remaining, the URI keeps the due amount", () => {
    const v = toPublicView(row({ status: "paid", received_units: "9000000" }), SECRET, 0);
    expect(v.remainingAmount).toBe("0");
    expect(v.paymentUri.endsWith("&uint256=5100000")).toBe(true);
  });

  it("accepted short under the underpayment tolerance (paid and on): nothing remaining; still pending: the rest is asked", () => {
    const short = { received_units: "5090000", underpayment_tolerance_units: "25500", underpayment_units: "10000" };
    for (const status of ["paid", "deploying_wallet", "awaiting_gas", "completed"])
      expect(toPublicView(row({ ...short, status }), SECRET, 0).remainingAmount, status).toBe("0");
    expect(toPublicView(row({ ...short, underpayment_units: "0" }), SECRET, 0).remainingAmount).toBe("0.01");
  });

  it("waiting for confirmations: nothing left to send, the depth at the indexed block, capped, on the badge", () => {
    const p = row({
      status: "waiting_for_confirmation",
      block_confirmations: 3,
      payment_tx_hash: "0xabc",
      payment_block_number: "100",
      received_block_number: "100",
    });
    const v = toPublicView(p, SECRET, 0, 100n);
    expect(v).toMatchObject({ stage: "processing", receivedAmount: "0", remainingAmount: "0", confirmations: { count: 1, required: 3 } });
    expect(v.paymentUri.endsWith("&uint256=5100000")).toBe(true);
    expect(toPublicView(p, SECRET, 0, 101n).confirmations).toEqual({ count: 2, required: 3 });
    expect(toPublicView(p, SECRET, 0, 150n).confirmations).toEqual({ count: 3, required: 3 });
    expect(toPublicView(p, SECRET, 0, 99n).confirmations).toEqual({ count: 1, required: 3 }); // the indexer behind
    expect(toPublicView(p, SECRET, 0).confirmations).toEqual({ count: 1, required: 3 }); // no indexed block known
    expect(stageLabel(v)).toBe("Confirming 1 of 3");
    expect(stageNotice(v)?.text).toContain("(1 of 3)");
    // Every other status: no confirmations, the status's own payer label.
    const paid = toPublicView(row({ status: "paid", received_units: "5100000", block_confirmations: 3 }), SECRET, 0, 100n);
    expect(paid).not.toHaveProperty("confirmations");
    expect(stageLabel(paid)).toBe("Payment received");
  });

  it("redirectUrl only once completed; it carries service, success and a hash verify accepts", () => {
    for (const status of ["pending", "paid", "deploying_wallet", "awaiting_gas", "failed", "expired", "withdrawn"])
      expect(toPublicView(row({ status }), SECRET, 0).redirectUrl, status).toBeNull();
    const p = row({ status: "completed" });
    const url = new URL(toPublicView(p, SECRET, 0).redirectUrl!);
    expect(url.origin + url.pathname).toBe("https://shop.example/return");
    expect(url.searchParams.get("x")).toBe("1");
    expect(url.searchParams.get("service")).toBe(p.id);
    expect(url.searchParams.get("success")).toBe("true");
    expect(hashMatches(redirectHash(SECRET, p), url.searchParams.get("hash")!)).toBe(true);
    expect(toPublicView(row({ status: "completed", redirect_url: null }), SECRET, 0).redirectUrl).toBeNull();
    // Never a script URL, even if one got into the row.
    expect(toPublicView(row({ status: "completed", redirect_url: "javascript:alert(1)" }), SECRET, 0).redirectUrl).toBeNull();
    expect(toPublicView(row({ status: "completed", redirect_url: "not a url" }), SECRET, 0).redirectUrl).toBeNull();
  });
});

describe("helpers", () => {
  it("EIP-681 URIs for ERC-20 and native", () => {
    expect(
      eip681Uri({ chainId: 137, tokenAddress: "0x0000000000000000000000000000000000000000", recipient: "0xabc", units: 10n ** 18n }),
    ).toBe("ethereum:0xabc@137?value=1000000000000000000");
    expect(eip681Uri({ chainId: 1, tokenAddress: "0xdAC17F958D2ee523a2206206994597C13D831ec7", recipient: "0xabc", units: 1n })).toBe(
      "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0xabc&uint256=1",
    );
  });

  it("stages", () => {
    expect(payerStage("pending")).toBe("awaiting_payment");
    for (const s of ["paid", "deploying_wallet", "awaiting_gas", "waiting_for_confirmation"]) expect(payerStage(s)).toBe("processing");
    expect(payerStage("completed")).toBe("completed");
    expect(payerStage("expired")).toBe("expired");
    for (const s of ["failed", "cancelled", "withdrawn", "withdraw_request", "withdrawing", "sanctioned"])
      expect(payerStage(s)).toBe("closed");
  });

  it("countdown", () => {
    expect(formatCountdown(0)).toBe("Expired");
    expect(formatCountdown(61_000)).toBe("00:01:01");
    expect(formatCountdown(86_400_000 + 3_600_000)).toBe("1d 01:00:00");
  });
});
