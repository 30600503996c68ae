import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { indexerProgress } from "../../../db/indexer-status.js";
import {
  detectIndexedBlock,
  detectPayments,
  expirePayments,
  toPublicView,
  paymentListItem,
  type PaymentRow,
} from "../../../modules/payments/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { signedIn, unescapeHtml } from "../../web/dashboard/forms.js";

// `waiting_for_confirmation` on the real stack (issue 17, item 1): the full amount seen on-chain (indexed) but not
// yet `blockConfirmations` deep. Detection is driven by hand at chosen indexed blocks B, B + 1, B + 2, in a service
// without processors (no detector of its own runs ahead of the test), as test (1b) of webhooks-e2e.test.ts does:
// the same code the detector runs (detect.ts). Going back to `pending` when a re-org takes the deposit away needs a
// chain of its own: test/chaos/reorg.test.ts.

vi.setConfig({ testTimeout: 180_000 });
const WAIT = 120_000;
const CHAIN = 777177;

let svc: TestService;
/** Signed in to the dashboard too: its list shows the confirmations of a waiting payment. */
let merchant: Awaited<ReturnType<typeof signedIn>>;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  merchant = await signedIn(svc, "Confirming");
});
afterAll(() => svc?.stop());

const chainOf = (id: number) => svc.deps.chains.find((c) => c.chainId === id)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(body: Record<string, unknown>): Promise<PaymentRow> {
  const res = await svc.http("POST", "/payments", {
    apiKey: merchant.apiKey,
    body: { merchant: payout(), chainId: String(CHAIN), orderId: `confirming-${Math.random()}`, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return row((res.body.url as string).split("/pay/")[1]!);
}
async function row(id: string): Promise<PaymentRow> {
  return (await svc.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0]!;
}
const state = async (id: string) => {
  const r = await row(id);
  return { status: r.status, received_units: r.received_units };
};
/** The payment as GET /v1/payments lists it. */
async function listed(p: PaymentRow) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(p.order_id)}`, { apiKey: merchant.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data[0];
}
/** The payment's confirmations on the dashboard's list ("2 of 3 confirmations"), or null when none are shown. */
async function onDashboard(p: PaymentRow): Promise<string | null> {
  const page = await merchant.browser.get(`/dashboard/payments?orderId=${encodeURIComponent(p.order_id)}`);
  expect(page.status).toBe(200);
  const m = /data-testid="payment-confirmations">([^<]*)</.exec(page.html);
  return m ? unescapeHtml(m[1]!).trim() : null;
}
/** The list item as serialize.ts makes it when the indexer is at `indexedBlock` (the node's head there too). */
const listedAt = (r: PaymentRow, indexedBlock: bigint) => paymentListItem(r, { terminal: null, latestBlock: indexedBlock, indexedBlock });
/** The audit trail: every status the payment moved to, with the reason. */
async function history(id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT to_status, reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
  return rows as { to_status: string; reason: string }[];
}
async function outbox(id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT event FROM webhook_deliveries WHERE payment_id = $1`, [id]);
  return rows.map((r) => r.event as string);
}
const indexedBlock = async (chainId: number) =>
  BigInt((await indexerProgress(svc.deps.db))?.find((p) => p.chainId === chainId)?.indexedBlock ?? 0);
/** The token transfer is indexed (the detector counts only indexed transfers), and block `last` exists on the chain. */
async function indexedAndMined(chainId: number, hash: Hex, last: bigint) {
  const t = svc.deps.db.views.transfer;
  await waitFor(async () => (await svc.deps.db.orm.select({ id: t.id }).from(t).where(eq(t.transactionHash, hash))).length, {
    timeout: WAIT,
    what: "the transfer indexed",
  });
  await waitFor(async () => (await chainHelpers(chainOf(chainId)).pub.getBlockNumber({ cacheTime: 0 })) >= last, {
    timeout: WAIT,
    what: `block ${last} mined`,
  });
}

describe("waiting_for_confirmation", () => {
  it("3 confirmations: waiting at 1 and 2 of 3 (listed, payer view, page and dashboard), paid at the 3rd", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const p = await create({
      token: h.token("USDT").address,
      amount: "10",
      gasless: true,
      blockConfirmations: 3,
      expiresAt: svc.clock.now() + 60_000,
    });
    const transfer = await h.pay("USDT", p.recipient_address as Address, parseUnits("10", 6));
    const B = transfer.blockNumber;
    await indexedAndMined(CHAIN, transfer.transactionHash, B + 2n);
    const c = chainOf(CHAIN);

    // Indexed up to B: 1 of 3. The full amount is seen; nothing counts yet.
    await detectPayments(svc.deps, c, B);
    expect(await state(p.id)).toEqual({ status: "waiting_for_confirmation", received_units: "0" });
    let r = await row(p.id);
    expect(r.paid_at).toBeNull();
    expect(r.payment_tx_hash).toBe(transfer.transactionHash);
    expect(r.payment_block_number).toBe(B.toString());
    expect(r.received_block_number).toBe(B.toString()); // the block that completed the amount
    expect(await history(p.id)).toEqual([{ to_status: "waiting_for_confirmation", reason: "full amount seen, 1 of 3 confirmations" }]);
    expect(await outbox(p.id)).toEqual([]); // no event: the merchant hears of it at payment.completed

    // The payer's view and the list item at the detector's indexed block: confirming 1 of 3, nothing left to send.
    const at = (latest: bigint) => toPublicView(r, svc.deps.config.HASH_SECRET, svc.clock.now(), latest);
    expect(at(B)).toMatchObject({
      status: "waiting_for_confirmation",
      stage: "processing",
      confirmations: { count: 1, required: 3 },
      receivedAmount: "0",
      remainingAmount: "0",
    });
    expect(listedAt(r, B).transaction).toEqual({ hash: transfer.transactionHash, blockNumber: Number(B), confirmations: 1 });
    expect(at(B + 1n).confirmations).toEqual({ count: 2, required: 3 });
    expect(listedAt(r, B + 1n).transaction?.confirmations).toBe(2);
    expect(at(B + 10n).confirmations).toEqual({ count: 3, required: 3 }); // capped
    expect(listedAt(r, B + 10n).transaction?.confirmations).toBe(3);

    // Over HTTP every view counts against the block Ponder has indexed, not the test's B + k. Once Ponder is past
    // B + 2 that is 3 of 3 everywhere, exactly, though the payment waits for the detector's next pass (none runs here).
    await waitFor(async () => (await indexedBlock(CHAIN)) >= B + 2n, { timeout: WAIT, what: `block ${B + 2n} indexed` });
    // GET /v1/payments: the status, receivedAmount what counts, the first deposit with the payer page's confirmations.
    const item = await listed(p);
    expect(item).toMatchObject({ status: "waiting_for_confirmation", receivedAmount: "0", blockConfirmations: 3 });
    expect(item.transaction).toEqual({ hash: transfer.transactionHash, blockNumber: Number(B), confirmations: 3 });
    const filtered = await svc.http("GET", "/v1/payments?status=waiting_for_confirmation", { apiKey: merchant.apiKey });
    expect(filtered.body.data.map((x: any) => x.paymentId)).toContain(p.id);
    expect(await onDashboard(p)).toBe("3 of 3 confirmations");
    const { body: v } = await svc.http("GET", `/payments/${p.id}/status`);
    expect(v).toMatchObject({ status: "waiting_for_confirmation", stage: "processing", remainingAmount: "0" });
    expect(v.confirmations).toEqual({ count: 3, required: 3 });
    const html = await (await fetch(`${new URL(svc.url).origin}/pay/${p.id}`)).text();
    expect(html).toMatch(/<span id="badge" class="badge processing">Confirming 3 of 3<\/span>/);
    expect(html).toContain("waiting for confirmations");
    expect(html).not.toMatch(/<section id="pay"(?! hidden)/); // nothing more to pay

    // The same pass again, and two replicas at once: no second audit row.
    await Promise.all([detectPayments(svc.deps, c, B), detectPayments(svc.deps, c, B)]);
    expect(await history(p.id)).toHaveLength(1);

    // Indexed up to B + 1, with no transfer in the window (changedAfter B): a waiting payment is looked at anyway.
    await detectPayments(svc.deps, c, B + 1n, { changedAfter: B });
    expect(await state(p.id)).toEqual({ status: "waiting_for_confirmation", received_units: "0" });
    r = await row(p.id);
    expect(at(B + 1n).confirmations).toEqual({ count: 2, required: 3 });
    // Never expired while it waits, even past expiresAt.
    svc.clock.advance(120_000);
    await expirePayments(svc.deps);
    expect((await row(p.id)).status).toBe("waiting_for_confirmation");

    // B + 2: 3 of 3, paid in full (the same columns as a payment paid straight from pending).
    await detectPayments(svc.deps, c, B + 2n, { changedAfter: B + 1n });
    expect(await state(p.id)).toEqual({ status: "paid", received_units: "10000000" });
    r = await row(p.id);
    expect(r.paid_at).not.toBeNull();
    expect(r.payment_tx_hash).toBe(transfer.transactionHash);
    expect(r.payment_block_number).toBe(B.toString());
    expect(r.received_block_number).toBe(B.toString());
    expect(r.overpayment_units).toBe("0");
    expect((await history(p.id)).map((e) => e.to_status)).toEqual(["waiting_for_confirmation", "paid"]);
    const paid = await listed(p);
    expect(paid.status).toBe("paid");
    // Paid: the spec's count, the node's head from the first deposit; never below the 3 shown while waiting.
    expect(paid.transaction.confirmations).toBeGreaterThanOrEqual(3);
    expect(toPublicView(r, svc.deps.config.HASH_SECRET, svc.clock.now(), B + 2n).confirmations).toBeUndefined();
  });

  it("a partial amount is never waiting: it stays pending, and counts at depth", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const p = await create({ token: h.token("USDC").address, amount: "10", gasless: true, blockConfirmations: 3 });
    const transfer = await h.pay("USDC", p.recipient_address as Address, parseUnits("4", 6));
    const B = transfer.blockNumber;
    await indexedAndMined(CHAIN, transfer.transactionHash, B + 2n);
    const c = chainOf(CHAIN);
    for (const k of [0n, 1n]) {
      await detectPayments(svc.deps, c, B + k);
      expect(await state(p.id), `${k + 1n} of 3`).toEqual({ status: "pending", received_units: "0" });
    }
    await detectPayments(svc.deps, c, B + 2n);
    expect(await state(p.id)).toEqual({ status: "pending", received_units: "4000000" });
    expect(await history(p.id)).toEqual([]);
    expect((await listed(p)).receivedAmount).toBe("4");
  });

  it("the rest of a partial payment arriving: waiting from the block that completes the amount", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const p = await create({ token: h.token("USDT").address, amount: "10", gasless: true, blockConfirmations: 3 });
    const first = await h.pay("USDT", p.recipient_address as Address, parseUnits("4", 6));
    const second = await h.pay("USDT", p.recipient_address as Address, parseUnits("6", 6));
    const [B1, B2] = [first.blockNumber, second.blockNumber];
    expect(B2).toBeGreaterThan(B1);
    await indexedAndMined(CHAIN, second.transactionHash, B2 + 2n);
    const c = chainOf(CHAIN);
    // At B2 the first transfer may already be 3 deep (it counts: 4), the second is 1 deep: waiting, 1 of 3.
    await detectPayments(svc.deps, c, B2);
    const r = await row(p.id);
    expect(r.status).toBe("waiting_for_confirmation");
    expect(r.received_units).toBe(B2 - B1 >= 2n ? "4000000" : "0");
    expect(r.received_block_number).toBe(B2.toString());
    expect(r.payment_tx_hash).toBe(first.transactionHash); // the first deposit, as once paid
    expect((await history(p.id))[0]!.reason).toBe("full amount seen, 1 of 3 confirmations");
    await detectPayments(svc.deps, c, B2 + 2n);
    expect(await state(p.id)).toEqual({ status: "paid", received_units: "10000000" });
  });

  it("two instalments, the first 20 blocks older: the list, the dashboard and the payer page show one count, from the second", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const c = chainOf(CHAIN);
    // 100 confirmations (the most allowed): the count is not capped while the test reads it.
    const p = await create({ token: h.token("USDT").address, amount: "10", gasless: true, blockConfirmations: 100 });
    const first = await h.pay("USDT", p.recipient_address as Address, parseUnits("4", 6));
    await h.mine(20);
    const second = await h.pay("USDT", p.recipient_address as Address, parseUnits("6", 6));
    const [B1, B2] = [first.blockNumber, second.blockNumber];
    expect(B2 - B1).toBeGreaterThan(20n);
    await indexedAndMined(CHAIN, second.transactionHash, B2);
    await detectPayments(svc.deps, c, B2);
    const r = await row(p.id);
    expect(r).toMatchObject({
      status: "waiting_for_confirmation",
      received_units: "0",
      payment_tx_hash: first.transactionHash,
      payment_block_number: B1.toString(),
      received_block_number: B2.toString(),
    });
    expect((await history(p.id))[0]!.reason).toBe("full amount seen, 1 of 100 confirmations");

    // At chosen indexed blocks: the list item keeps the first deposit (hash, blockNumber) and counts as the payer page.
    for (const [k, n] of [
      [0n, 1],
      [1n, 2],
      [98n, 99],
      [150n, 100],
    ] as const) {
      const view = toPublicView(r, svc.deps.config.HASH_SECRET, svc.clock.now(), B2 + k);
      expect(view.confirmations, `B2 + ${k}`).toEqual({ count: n, required: 100 });
      expect(listedAt(r, B2 + k).transaction, `B2 + ${k}`).toEqual({
        hash: first.transactionHash,
        blockNumber: Number(B1),
        confirmations: n,
      });
    }

    // Over HTTP, each view counts against the block Ponder has indexed when it is read: read all four while that
    // block stays the same (blocks come every second; retried until one such read), then they must agree exactly.
    const seen = await waitFor(
      async () => {
        const at = await indexedBlock(CHAIN);
        const [item, dashboard, view, html] = await Promise.all([
          listed(p),
          onDashboard(p),
          svc.http("GET", `/payments/${p.id}/status`).then((res) => res.body),
          fetch(`${new URL(svc.url).origin}/pay/${p.id}`).then((res) => res.text()),
        ]);
        return (await indexedBlock(CHAIN)) === at && { at, item, dashboard, view, html };
      },
      { timeout: WAIT, what: "the four views read at one indexed block" },
    );
    const n = Number(seen.at - B2 + 1n);
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThan(100); // not capped: counted from B2 (from the first deposit it would be at least n + 20)
    expect(seen.item.status).toBe("waiting_for_confirmation");
    expect(seen.item.transaction).toEqual({ hash: first.transactionHash, blockNumber: Number(B1), confirmations: n });
    expect(seen.dashboard).toBe(`${n} of 100 confirmations`);
    expect(seen.view.confirmations).toEqual({ count: n, required: 100 });
    expect(seen.html).toContain(`<span id="badge" class="badge processing">Confirming ${n} of 100</span>`);
  });

  it("1 confirmation: seen is counted, straight to paid as before", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const p = await create({ token: h.token("USDT").address, amount: "3", gasless: true, blockConfirmations: 1 });
    const transfer = await h.pay("USDT", p.recipient_address as Address, parseUnits("3", 6));
    await indexedAndMined(CHAIN, transfer.transactionHash, transfer.blockNumber);
    await detectPayments(svc.deps, chainOf(CHAIN), transfer.blockNumber);
    expect(await state(p.id)).toEqual({ status: "paid", received_units: "3000000" });
    expect((await history(p.id)).map((e) => e.to_status)).toEqual(["paid"]);
  });

  it("native coin, 3 confirmations: waiting by its balance at the indexed block, paid by its balance 3 deep", async () => {
    const native = chainOf(137); // MATIC
    expect(native.native).toBeTruthy();
    const h = chainHelpers(native);
    const res = await svc.http("POST", "/payments", {
      apiKey: merchant.apiKey,
      body: {
        merchant: payout(),
        chainId: String(native.chainId),
        token: zeroAddress,
        amount: "1",
        orderId: `confirming-native-${Math.random()}`,
        blockConfirmations: 3,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const p = await row((res.body.url as string).split("/pay/")[1]!);
    const sent = await h.sendNative(p.recipient_address as Address, BigInt(p.due_units));
    const B = sent.blockNumber;
    await waitFor(async () => (await h.pub.getBlockNumber({ cacheTime: 0 })) >= B + 2n, { timeout: WAIT, what: `block ${B + 2n}` });

    await detectPayments(svc.deps, native, B - 1n);
    expect(await state(p.id)).toEqual({ status: "pending", received_units: "0" });
    await detectPayments(svc.deps, native, B);
    expect(await state(p.id)).toEqual({ status: "waiting_for_confirmation", received_units: "0" });
    expect((await row(p.id)).received_block_number).toBe(B.toString());
    await detectPayments(svc.deps, native, B + 1n);
    expect((await row(p.id)).status).toBe("waiting_for_confirmation");
    await detectPayments(svc.deps, native, B + 2n);
    expect(await state(p.id)).toEqual({ status: "paid", received_units: p.due_units });
    expect((await history(p.id)).map((e) => e.to_status)).toEqual(["waiting_for_confirmation", "paid"]);
  });

  it("the detector's incremental pass (detectIndexedBlock) moves a waiting payment with no new transfer", async () => {
    const h = chainHelpers(chainOf(CHAIN));
    const c = chainOf(CHAIN);
    const p = await create({ token: h.token("USDT").address, amount: "2", gasless: true, blockConfirmations: 3 });
    const transfer = await h.pay("USDT", p.recipient_address as Address, parseUnits("2", 6));
    const B = transfer.blockNumber;
    await indexedAndMined(CHAIN, transfer.transactionHash, B + 2n);
    // The cursor this file's detector keeps is its own (a fresh schema): the first pass is a full scan.
    const finalized = B - BigInt(c.finalityBlocks);
    await detectIndexedBlock(svc.deps, c, { latest: B, finalized });
    expect((await row(p.id)).status).toBe("waiting_for_confirmation");
    await detectIndexedBlock(svc.deps, c, { latest: B + 1n, finalized: finalized + 1n });
    expect((await row(p.id)).status).toBe("waiting_for_confirmation");
    await detectIndexedBlock(svc.deps, c, { latest: B + 2n, finalized: finalized + 2n });
    expect(await state(p.id)).toEqual({ status: "paid", received_units: "2000000" });
  });
});
