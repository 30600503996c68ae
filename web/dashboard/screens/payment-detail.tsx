import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDomainError, type DomainError } from "../../../core/errors.js";
import type { PaymentDetail } from "../../../modules/payments/index.js";
import { cancelPayment } from "../../../modules/payments/index.js";
import { paymentDetail, recoverFunds } from "../../../flows/payment-views.js";
import { withdrawPayment } from "../../../modules/payments/index.js";
import type { DashEnv } from "../env.js";
import { CsrfField, Notice, PostButton, screen } from "../layout.js";
import { StatusBadge, when } from "./payments.js";

// One payment (/dashboard/payments/:paymentId): its facts, state timeline, transactions, fees, redirect hash,
// webhook deliveries and unexpected funds, with the merchant's actions on it: manual withdraw of a partial
// payment, cancel of a payment whose address received nothing and recovery of unexpected funds (the same module functions as
// the API's routes).

type Ctx = Context<DashEnv>;

const DONE: Record<string, string> = {
  withdraw: "Withdrawal requested: the amount received will be sent to your wallet, with no fee, as soon as the settler takes it.",
  cancel: "Payment cancelled. Funds sent to its address later are listed below as unexpected funds, and can be recovered.",
  recover: "Recovery requested: the funds are being swept to the payout address.",
};

const Facts = (p: { d: PaymentDetail }) => {
  const x = p.d.payment;
  // Only a payment accepted short under the merchant's underpayment tolerance has the line ("0" when none).
  const underpaid: [string, unknown][] = /[1-9]/.test(p.d.underpayment)
    ? [["Underpayment accepted", `${p.d.underpayment} ${x.token.symbol}`]]
    : [];
  const rows: [string, unknown][] = [
    ["Payment id", <code>{x.paymentId}</code>],
    ["Order id", <code>{x.orderId}</code>],
    ["Description", x.description ?? "—"],
    ["Status", <StatusBadge status={x.status} />],
    ["Amount", `${x.amount} ${x.token.symbol}`],
    ["Due from the payer", `${p.d.dueAmount} ${x.token.symbol}`],
    ["Received", `${x.receivedAmount} ${x.token.symbol}`],
    ["Overpayment", `${p.d.overpayment} ${x.token.symbol}`],
    ...underpaid,
    ["Withdrawn", p.d.withdrawnAmount === null ? "—" : `${p.d.withdrawnAmount} ${x.token.symbol}`],
    ["Token", <code>{`${x.token.symbol} ${x.token.address} (${x.token.decimals} decimals)`}</code>],
    ["Chain", x.chainId],
    ["Merchant wallet", <code>{x.merchant}</code>],
    ["Payment address", <code>{x.recipientAddress}</code>],
    ["Created", when(x.createdAt)],
    ["Expires", when(x.expiresAt)],
    ["Completed", when(x.completedAt)],
    ["Terminal", x.terminal ? `${x.terminal.name} (${x.terminal.code})` : "—"],
    ["Price source", `${x.priceSource}${p.d.priceUsd ? ` (${p.d.priceUsd} USD)` : ""}`],
    ["Fee mode", x.gasless ? "gasless" : x.payerCoversFee ? "payer covers fee" : "Gas Tank"],
    ["Block confirmations", x.blockConfirmations],
    ["Failure reason", p.d.failureReason ?? "—"],
  ];
  return (
    <dl class="facts" data-testid="payment-facts">
      {rows.map(([k, v]) => (
        <>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </>
      ))}
    </dl>
  );
};

const Timeline = (p: { d: PaymentDetail }) => (
  <ol class="timeline">
    {p.d.timeline.map((e) => (
      <li data-testid="timeline-entry">
        <strong>{e.from ? `${e.from} → ${e.to}` : e.to}</strong> <span class="muted">{when(e.at)}</span>
        {e.reason ? <div class="muted">{e.reason}</div> : null}
      </li>
    ))}
  </ol>
);

const Transactions = (p: { d: PaymentDetail }) =>
  p.d.transactions.length === 0 ? (
    <p class="muted">No transaction yet.</p>
  ) : (
    <table>
      <thead>
        <tr>
          <th>Kind</th>
          <th>Hash</th>
          <th class="num">Block</th>
          <th class="num">Confirmations</th>
          <th>Status</th>
        </tr>
      </thead>
      <tbody>
        {p.d.transactions.map((t) => (
          <tr data-testid="transaction-row" data-kind={t.kind}>
            <td>{t.kind}</td>
            <td class="mono">{t.hash}</td>
            <td class="num">{t.blockNumber ?? "—"}</td>
            <td class="num">{t.confirmations ?? "—"}</td>
            <td>{t.status ?? (t.kind === "payment" ? "received" : "—")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const Fees = (p: { d: PaymentDetail }) => {
  const { fees, token } = p.d.payment;
  return (
    <dl class="facts" data-testid="payment-fees">
      <dt>Platform fee</dt>
      <dd>{`${fees.platformFee} ${token.symbol} (${fees.feePercentage}%${p.d.promoApplied ? ", waived by the promotion" : ""})`}</dd>
      {fees.agentFee !== "0" && (
        <>
          <dt>Agent fee</dt>
          <dd>{`${fees.agentFee} ${token.symbol} (your referring agent's markup)`}</dd>
        </>
      )}
      <dt>Gas fee</dt>
      <dd>{`${fees.gasFee} ${token.symbol}`}</dd>
      <dt>Processing fee</dt>
      <dd>{`${fees.processingFee} ${token.symbol}`}</dd>
      <dt>Total fee</dt>
      <dd>{`${fees.totalFee} ${token.symbol}`}</dd>
      <dt>Charged to the Gas Tank</dt>
      <dd>{p.d.gasTankFee === null ? "—" : `${p.d.gasTankFee} USDT`}</dd>
    </dl>
  );
};

const Redirect = (p: { d: PaymentDetail }) => {
  const verify = `/api/payments/verify?${new URLSearchParams({ id: p.d.payment.paymentId, hash: p.d.redirect.hash })}`;
  return (
    <dl class="facts">
      <dt>Redirect URL</dt>
      <dd>
        {p.d.redirect.url ? (
          <code data-testid="redirect-url">{p.d.redirect.url}</code>
        ) : (
          <span class="muted">No redirect URL was given for this payment.</span>
        )}
      </dd>
      <dt>Redirect hash</dt>
      <dd>
        <code data-testid="redirect-hash">{p.d.redirect.hash}</code>
      </dd>
      <dt>Verify</dt>
      <dd>
        <a href={verify} class="mono">
          GET {verify}
        </a>
      </dd>
    </dl>
  );
};

const Deliveries = (p: { d: PaymentDetail; csrf: string }) =>
  p.d.deliveries.length === 0 ? (
    <p class="muted">No webhook was sent for this payment.</p>
  ) : (
    <table>
      <thead>
        <tr>
          <th>Event</th>
          <th>Status</th>
          <th class="num">Attempts</th>
          <th class="num">Last HTTP code</th>
          <th>Time</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {p.d.deliveries.map((d) => (
          <tr data-testid="delivery-row" data-delivery-id={d.id}>
            <td>{d.event}</td>
            <td>
              <span class={`badge ${d.status}`}>{d.status}</span>
            </td>
            <td class="num">{`${d.attempts} / ${d.maxAttempts}`}</td>
            <td class="num">{d.httpStatus ?? "—"}</td>
            <td>{when(d.lastAttemptAt ?? d.createdAt)}</td>
            <td>
              {d.status === "pending" && d.attempts === 0 ? null : (
                <PostButton action={`/dashboard/webhooks/deliveries/${d.id}/resend`} csrf={p.csrf} label="Resend" kind="secondary" />
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const UnexpectedFunds = (p: { d: PaymentDetail; csrf: string }) => {
  const funds = p.d.payment.unexpectedFunds;
  if (funds.length === 0) return <p class="muted">Nothing unexpected on the payment address.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Token</th>
          <th class="num">Amount</th>
          <th>Recovery</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {funds.map((f) => (
          <tr data-testid="unexpected-funds-row" data-token={f.token}>
            <td>
              {f.symbol ?? "unknown token"} <code>{f.token}</code>
            </td>
            <td class="num">{f.amount ?? `${f.units} units`}</td>
            <td>
              {f.recovery ? (
                <>
                  <span class={`badge ${f.recovery.status}`} data-testid="recovery-status">
                    {f.recovery.status}
                  </span>
                  {f.recovery.transactionHash ? <div class="mono">{f.recovery.transactionHash}</div> : null}
                  {f.recovery.error ? <div class="muted">{f.recovery.error}</div> : null}
                </>
              ) : (
                "—"
              )}
            </td>
            <td>
              {f.recoverable ? (
                <form
                  method="post"
                  action={`/dashboard/payments/${p.d.payment.paymentId}/recover`}
                  class="inline"
                  data-confirm={`Send all ${f.symbol ?? "of this token"} on the payment address to ${p.d.payment.merchant}?`}
                >
                  <CsrfField csrf={p.csrf} />
                  <input type="hidden" name="token" value={f.token} />
                  <button type="submit">Recover</button>
                </form>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
};

function detailPage(c: Ctx, d: PaymentDetail, notice?: { kind: "ok" | "error"; text: string }, status: ContentfulStatusCode = 200) {
  const x = d.payment;
  return screen(
    c,
    { title: `Payment ${x.orderId}`, active: "/dashboard/payments", status },
    <>
      <p>
        <a href="/dashboard/payments">← All payments</a>
      </p>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <section class="card">
        <Facts d={d} />
      </section>
      {d.canWithdraw ? (
        <section class="card" data-testid="withdraw">
          <p>
            This payment received {x.receivedAmount} {x.token.symbol} of {d.dueAmount} {x.token.symbol}. You can withdraw what was received
            to {x.merchant}, with no fee; the payment then ends as withdrawn.
          </p>
          <PostButton
            action={`/dashboard/payments/${x.paymentId}/withdraw`}
            csrf={c.var.csrf}
            label="Withdraw the partial payment"
            confirm={`Withdraw ${x.receivedAmount} ${x.token.symbol} to ${x.merchant}?`}
          />
        </section>
      ) : null}
      {d.canCancel ? (
        <section class="card" data-testid="cancel">
          <p>
            Nothing has reached {x.recipientAddress} yet. You can cancel the payment: the payer page closes, and anything sent to that
            address later stays recoverable to {x.merchant}.
          </p>
          <PostButton
            action={`/dashboard/payments/${x.paymentId}/cancel`}
            csrf={c.var.csrf}
            label="Cancel the payment"
            kind="danger"
            confirm={`Cancel payment ${x.orderId}? This cannot be undone.`}
          />
        </section>
      ) : null}
      <div class="grid">
        <section>
          <h2>Timeline</h2>
          <Timeline d={d} />
        </section>
        <section>
          <h2>Fees</h2>
          <div class="card">
            <Fees d={d} />
          </div>
        </section>
      </div>
      <h2>Transactions</h2>
      <Transactions d={d} />
      <h2>Redirect</h2>
      <div class="card">
        <Redirect d={d} />
      </div>
      <h2>Webhook deliveries</h2>
      <Deliveries d={d} csrf={c.var.csrf} />
      <h2>Unexpected funds</h2>
      <UnexpectedFunds d={d} csrf={c.var.csrf} />
    </>,
  );
}

const notFound = (c: Ctx, err: DomainError) =>
  screen(
    c,
    { title: "Payment not found", active: "/dashboard/payments", status: c.var.statusOf(err) },
    <>
      <Notice kind="error">{err.message}</Notice>
      <p>
        <a href="/dashboard/payments">Back to the payments</a>
      </p>
    </>,
  );

/** A refused action shown on the payment's page with the module's message; a missing payment is the 404 page. */
async function refused(c: Ctx, paymentId: string, err: DomainError) {
  if (err.kind === "not_found") return notFound(c, err);
  if (err.kind !== "invalid" && err.kind !== "conflict") throw err;
  const d = await paymentDetail(c.var.deps, { merchantId: c.var.merchant.id }, paymentId);
  return detailPage(c, d, { kind: "error", text: err.message }, c.var.statusOf(err));
}

/** Runs a payment action; PRG to the payment's page with a notice, or the refusal on the page. */
async function act(c: Ctx, done: keyof typeof DONE, run: (caller: { merchantId: string }, paymentId: string) => Promise<unknown>) {
  const paymentId = c.req.param("paymentId")!;
  try {
    await run({ merchantId: c.var.merchant.id }, paymentId);
  } catch (err) {
    if (isDomainError(err)) return refused(c, paymentId, err);
    throw err;
  }
  return c.redirect(`/dashboard/payments/${paymentId}?done=${done}`, 303);
}

export const paymentDetailScreen = new Hono<DashEnv>()
  .get("/payments/:paymentId", async (c) => {
    let d: PaymentDetail;
    try {
      d = await paymentDetail(c.var.deps, { merchantId: c.var.merchant.id }, c.req.param("paymentId"));
    } catch (err) {
      if (isDomainError(err) && err.kind === "not_found") return notFound(c, err);
      throw err;
    }
    const done = c.req.query("done") ?? "";
    return detailPage(c, d, Object.hasOwn(DONE, done) ? { kind: "ok", text: DONE[done]! } : undefined);
  })
  .post("/payments/:paymentId/withdraw", (c) => act(c, "withdraw", (caller, id) => withdrawPayment(c.var.deps, caller, id)))
  .post("/payments/:paymentId/cancel", (c) => act(c, "cancel", (caller, id) => cancelPayment(c.var.deps, caller, id)))
  .post("/payments/:paymentId/recover", async (c) => {
    const token = (await c.req.parseBody()).token;
    return act(c, "recover", (caller, id) => recoverFunds(c.var.deps, caller, id, { token }));
  });
