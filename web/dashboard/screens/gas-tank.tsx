import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { raw } from "hono/html";
import QRCode from "qrcode";
import { Invalid } from "../../../core/errors.js";
import { formatAmount, parseAmount } from "../../../core/money.js";
import { belowAlert, gasTankAlert, parseAlertThreshold, setGasTankAlert } from "../../../modules/gas-tank/index.js";
import { ledgerPage, settlementSpendSince, type LedgerEntryView } from "../../../modules/gas-tank/index.js";
import { runway, RUNWAY_WINDOW_DAYS, type Runway } from "../../../modules/gas-tank/index.js";
import { GAS_TANK_DECIMALS } from "../../../modules/gas-tank/index.js";
import { gasTankView } from "../../../modules/gas-tank/index.js";
import type { DashEnv } from "../env.js";
import { CsrfField, Notice, screen } from "../layout.js";

// /dashboard/gas-tank: the balance and deposit addresses of GET /balance (the same module function), the
// ledger, a runway estimate from the last 7 days' settlement spend, and the low-balance alert threshold.

const ACTIVE = "/dashboard/gas-tank";
const DAY_MS = 86_400_000;

const usdt = (micros: bigint) => formatAmount(micros, GAS_TANK_DECIMALS, { fixed: true });
const signed = (micros: bigint) => (micros > 0n ? `+${usdt(micros)}` : usdt(micros));
/** The balance string of GET /balance back to micros (it may be negative after a re-org). */
const microsOf = (s: string) => (s.startsWith("-") ? -parseAmount(s.slice(1), GAS_TANK_DECIMALS) : parseAmount(s, GAS_TANK_DECIMALS));
const when = (d: Date) => `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;

const KINDS: Record<string, string> = {
  gas_tank_deposit: "Deposit",
  gas_tank_reorg: "Deposit reversed (re-org)",
  settlement_fee: "Settlement fee",
  settlement_refund: "Settlement fee refunded",
  settlement_gas: "Settlement gas at its mined price",
  recovery_fee: "Recovery fee",
  recovery_refund: "Recovery fee refunded",
  vault_sweep_fee: "Vault sweep gas (custom token)",
  vault_sweep_refund: "Vault sweep gas refunded",
  adjustment: "Adjustment",
};

const qrSvg = (text: string) => QRCode.toString(text, { type: "svg", margin: 1, errorCorrectionLevel: "M" });

const RunwayText = (p: { r: Runway }) => {
  if (p.r.kind === "no-spend") return <span>No spend in the last {String(RUNWAY_WINDOW_DAYS)} days: no estimate.</span>;
  const pace = <span class="muted"> (at {usdt(p.r.dailySpendMicros)} USDT a day, the last 7 days' average)</span>;
  if (p.r.kind === "empty") return <span>Empty: settlements wait until you top it up.{pace}</span>;
  return (
    <span>
      {p.r.days === 0n ? "Less than a day left" : `About ${p.r.days} day${p.r.days === 1n ? "" : "s"} left`}
      {pace}
    </span>
  );
};

const Ledger = (p: { entries: LedgerEntryView[]; nextBefore: string | null; paged: boolean }) => (
  <section>
    <h2>Ledger</h2>
    {p.entries.length === 0 ? (
      <p class="muted">No entries {p.paged ? "on this page" : "yet"}.</p>
    ) : (
      <table data-testid="ledger">
        <thead>
          <tr>
            <th>Time</th>
            <th>Kind</th>
            <th class="num">Amount (USDT)</th>
            <th>Payment</th>
          </tr>
        </thead>
        <tbody>
          {p.entries.map((e) => (
            <tr data-testid="ledger-row">
              <td>{when(e.createdAt)}</td>
              <td>
                {KINDS[e.kind] ?? e.kind}
                {e.chainId ? <span class="muted"> · chain {e.chainId}</span> : null}
              </td>
              <td class="num mono" data-testid="ledger-amount">
                {signed(e.amountMicros)}
              </td>
              <td>
                {e.paymentId ? (
                  <a href={`/dashboard/payments/${e.paymentId}`} class="mono">
                    {e.paymentId}
                  </a>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <nav class="pager">
      {p.paged ? <a href={ACTIVE}>Newest</a> : null}
      {p.nextBefore ? <a href={`${ACTIVE}?before=${p.nextBefore}`}>Older entries</a> : null}
    </nav>
  </section>
);

async function gasTankPage(
  c: Context<DashEnv>,
  opts: { notice?: { kind: "ok" | "error"; text: string }; typed?: string; status?: ContentfulStatusCode } = {},
) {
  const { deps, merchant, csrf } = c.var;
  const before = c.req.query("before") || undefined;
  const now = deps.now();
  const [view, alert, spent, ledger] = await Promise.all([
    gasTankView(deps, merchant.id),
    gasTankAlert(deps.db.pool, merchant.id),
    settlementSpendSince(deps.db.pool, merchant.id, new Date(now - Number(RUNWAY_WINDOW_DAYS) * DAY_MS)),
    ledgerPage(deps.db.pool, merchant.id, { before }),
  ]);
  const balance = microsOf(view.balance);
  const addresses = await Promise.all(
    view.depositAddresses.map(async (a) => ({
      ...a,
      chainName: deps.chains.find((ch) => ch.chainId === a.chainId)?.name ?? `Chain ${a.chainId}`,
      qr: await qrSvg(a.address),
    })),
  );
  return screen(
    c,
    { title: "Gas Tank", active: ACTIVE, status: opts.status },
    <>
      {opts.notice ? <Notice kind={opts.notice.kind}>{opts.notice.text}</Notice> : null}
      {belowAlert(balance, alert) ? (
        <div data-testid="low-balance">
          <Notice kind="warn">
            The balance is below your alert threshold of {usdt(alert!)} USDT: top up the Gas Tank so settlements do not wait.
          </Notice>
        </div>
      ) : null}
      <section class="card">
        <dl class="facts">
          <dt>Balance</dt>
          <dd>
            <strong data-testid="gas-balance">{view.balance}</strong> USDT
          </dd>
          <dt>Runway</dt>
          <dd data-testid="gas-runway">
            <RunwayText r={runway(balance, spent)} />
          </dd>
        </dl>
      </section>
      <h2>Deposit addresses</h2>
      <p class="muted">Send USDT to your address on a chain below; it is credited once confirmed. Other tokens are not credited.</p>
      {addresses.length === 0 ? (
        <p class="muted">No chain with a Gas Tank token is served by this deployment.</p>
      ) : (
        <div class="grid">
          {addresses.map((a) => (
            <section class="card deposit-address" data-testid="gas-address" data-chain-id={a.chainId}>
              <h3>
                {a.chainName} <span class="muted">({a.chainId})</span>
              </h3>
              <div class="qr">{raw(a.qr)}</div>
              <p class="mono">{a.address}</p>
              <p class="muted">Accepts: {a.tokens.map((t) => t.symbol).join(", ")}</p>
            </section>
          ))}
        </div>
      )}
      <section class="card">
        <h2>Low-balance alert</h2>
        <form method="post" action={`${ACTIVE}/alert`} class="row" data-testid="alert-form">
          <CsrfField csrf={csrf} />
          <label>
            Warn me below (USDT) <small>(empty: no alert)</small>
            <input
              type="text"
              name="threshold"
              inputmode="decimal"
              autocomplete="off"
              placeholder="25"
              value={opts.typed ?? (alert === null ? "" : formatAmount(alert, GAS_TANK_DECIMALS))}
            />
          </label>
          <button type="submit">Save</button>
        </form>
      </section>
      <Ledger entries={ledger.entries} nextBefore={ledger.nextBefore} paged={!!before} />
    </>,
  );
}

export const gasTankScreen = new Hono<DashEnv>()
  .get("/gas-tank", (c) => {
    const saved = c.req.query("alert");
    const notice =
      saved === "saved"
        ? { kind: "ok" as const, text: "Alert threshold saved." }
        : saved === "cleared"
          ? { kind: "ok" as const, text: "Alert removed." }
          : undefined;
    return gasTankPage(c, { notice });
  })
  .post("/gas-tank/alert", async (c) => {
    const form = await c.req.parseBody();
    const typed = typeof form.threshold === "string" ? form.threshold : "";
    try {
      const micros = parseAlertThreshold(typed);
      await setGasTankAlert(c.var.deps.db.pool, c.var.merchant.id, micros);
      return c.redirect(`${ACTIVE}?alert=${micros === null ? "cleared" : "saved"}`, 303);
    } catch (e) {
      if (!(e instanceof Invalid)) throw e;
      return gasTankPage(c, { notice: { kind: "error", text: e.message }, typed, status: c.var.statusOf(e) });
    }
  });
