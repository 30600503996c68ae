import { Hono } from "hono";
import { isDomainError, type DomainError } from "../../../core/errors.js";
import type { PaymentPage } from "../../../modules/payments/index.js";
import { listPayments } from "../../../flows/payment-views.js";
import type { paymentListItem } from "../../../modules/payments/index.js";
import { PAYMENT_STATUSES } from "../../../modules/payments/index.js";
import type { DashEnv } from "../env.js";
import { Notice, screen } from "../layout.js";

// The payments screen: the merchant's payments with the filters and cursor pagination of GET /v1/payments
// (the same module function, so the same validation and messages), each row linking to its detail.

type Payment = ReturnType<typeof paymentListItem>;

/** The query parameters of GET /v1/payments the screen passes on (empty form fields are left out). */
const PARAMS = ["status", "createdAfter", "createdBefore", "orderId", "cursor", "limit"] as const;

/** A Unix ms time as the dashboard shows it (UTC, to the second). */
export const when = (ms: number | null | undefined) => (ms ? `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC` : "—");

/** A payment status as a badge (data-testid `payment-status`). */
export const StatusBadge = (p: { status: string }) => (
  <span class={`badge ${p.status}`} data-testid="payment-status">
    {p.status}
  </span>
);

/**
 * While the full amount waits for its confirmations (`waiting_for_confirmation`): how many it has, of those the payment
 * requires (data-testid `payment-confirmations`); nothing in any other status. The list item's
 * `transaction.confirmations` as it is: for a waiting payment that is the payer page's count (serialize.ts,
 * confirmations.ts waitingConfirmations), already between 1 and `blockConfirmations`. A native-coin payment has no
 * `transaction` (no log names its transaction): only the confirmations required are shown.
 */
export const Confirmations = (p: { payment: Pick<Payment, "status" | "transaction" | "blockConfirmations"> }) =>
  p.payment.status === "waiting_for_confirmation" ? (
    <small class="muted" data-testid="payment-confirmations">
      {" "}
      {p.payment.transaction
        ? `${p.payment.transaction.confirmations} of ${p.payment.blockConfirmations} confirmations`
        : `${p.payment.blockConfirmations} confirmations required`}
    </small>
  ) : null;

const Filters = (p: { q: Record<string, string> }) => (
  <form method="get" action="/dashboard/payments" class="row card filters">
    <label>
      Status
      <select name="status">
        <option value="">any</option>
        {PAYMENT_STATUSES.map((s) => (
          <option value={s} selected={p.q.status === s}>
            {s}
          </option>
        ))}
      </select>
    </label>
    <label>
      Created after <small>(ISO 8601 or Unix ms)</small>
      <input type="text" name="createdAfter" value={p.q.createdAfter ?? ""} placeholder="2025-01-31T00:00:00Z" />
    </label>
    <label>
      Created before <small>(inclusive)</small>
      <input type="text" name="createdBefore" value={p.q.createdBefore ?? ""} placeholder="2025-02-01T00:00:00Z" />
    </label>
    <label>
      Order id <small>(exact)</small>
      <input type="text" name="orderId" value={p.q.orderId ?? ""} maxlength={100} />
    </label>
    {p.q.limit ? <input type="hidden" name="limit" value={p.q.limit} /> : null}
    <button type="submit">Filter</button>
    <a href="/dashboard/payments">Clear</a>
  </form>
);

const PaymentsTable = (p: { payments: Payment[] }) =>
  p.payments.length === 0 ? (
    <p class="muted" data-testid="no-payments">
      No payments match.
    </p>
  ) : (
    <table>
      <thead>
        <tr>
          <th>Created</th>
          <th>Order</th>
          <th class="num">Amount</th>
          <th>Status</th>
          <th>Terminal</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {p.payments.map((x) => (
          <tr data-testid="payment-row" data-payment-id={x.paymentId}>
            <td>{when(x.createdAt)}</td>
            <td class="mono">{x.orderId}</td>
            <td class="num">
              {x.amount} {x.token.symbol}
            </td>
            <td>
              <StatusBadge status={x.status} />
              <Confirmations payment={x} />
            </td>
            <td>{x.terminal?.name ?? <span class="muted">—</span>}</td>
            <td>
              <a href={`/dashboard/payments/${x.paymentId}`}>Details</a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const Pager = (p: { q: Record<string, string>; page: PaymentPage }) => {
  const next = new URLSearchParams({ ...p.q, cursor: p.page.nextCursor ?? "" });
  const first = new URLSearchParams(Object.entries(p.q).filter(([k]) => k !== "cursor"));
  return (
    <div class="pager">
      {p.q.cursor ? <a href={`/dashboard/payments?${first}`}>First page</a> : null}
      {p.page.hasMore && p.page.nextCursor ? (
        <a href={`/dashboard/payments?${next}`} data-testid="next-page">
          Next page
        </a>
      ) : null}
    </div>
  );
};

export const paymentsScreen = new Hono<DashEnv>().get("/payments", async (c) => {
  const q: Record<string, string> = {};
  for (const k of PARAMS) {
    const v = c.req.query(k);
    if (v !== undefined && v !== "") q[k] = v;
  }
  const view = (page: PaymentPage | null, error?: DomainError) =>
    screen(
      c,
      { title: "Payments", active: "/dashboard/payments", status: error ? c.var.statusOf(error) : 200 },
      <>
        <Filters q={q} />
        {error ? <Notice kind="error">{error.message}</Notice> : null}
        {page ? (
          <>
            <PaymentsTable payments={page.data as Payment[]} />
            <Pager q={q} page={page} />
          </>
        ) : null}
      </>,
    );
  try {
    // The same call as GET /v1/payments: its validation, its messages, its page.
    return view(await listPayments(c.var.deps, { merchantId: c.var.merchant.id }, q));
  } catch (err) {
    if (isDomainError(err) && err.kind === "invalid") return view(null, err);
    throw err;
  }
});
