import { Hono, type Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ActiveChain } from "../../../chains/runtime.js";
import { isDomainError, NotFound, type DomainError } from "../../../core/errors.js";
import { formatAmount } from "../../../core/money.js";
import { NOT_AN_AGENT, updateAgent, type Agent } from "../../../modules/agents/index.js";
import { agentBalances, referredMerchants, USD_CURRENCY, type AgentBalance, type ReferredMerchant } from "../../../modules/agents/index.js";
import { listWithdrawals, requestWithdrawal, type AgentWithdrawal } from "../../../modules/agents/index.js";
import type { DashEnv } from "../env.js";
import { setFlash, takeFlash, type Flash } from "../flash.js";
import { AGENT_SCREEN, CsrfField, FlashView, Notice, screen } from "../layout.js";
import { when } from "./payments.js";

// /dashboard/agent (agent accounts only; docs/agents.md): the referral code and link, the markup within the operator's
// cap, the payout address, the balances with a withdrawal per balance, the withdrawals and the referred merchants.
// The module functions of /v1/agent, so the same validation. Every action answers 303 with a flash; a refused one
// shows the screen again with the module's message and the mounting app's status.

type Ctx = Context<DashEnv>;
const ACTIVE = AGENT_SCREEN.path;

/** What a refused form sent, shown again in its field. */
type Draft = { markupBps?: string; payoutAddress?: string };

const str = (v: unknown) => (typeof v === "string" ? v : "");
const pct = (bps: number) => `${formatAmount(BigInt(bps), 2)}%`;
/** A decimal string above zero (no float: the module's exact amounts). */
const positive = (amount: string) => !amount.startsWith("-") && /[1-9]/.test(amount);
const chainName = (chains: readonly ActiveChain[], chainId: string) =>
  chains.find((ch) => String(ch.chainId) === chainId)?.name ?? `chain ${chainId}`;

/** The 6-decimal stablecoins the USD balance can be paid in (withdrawals.ts accepts these only). */
const usdStables = (chains: readonly ActiveChain[]) =>
  chains.flatMap((ch) =>
    ch.tokens
      .filter((t) => t.decimals === 6 && /^(USDT|USDC)/i.test(t.symbol))
      .map((t) => ({ value: `${ch.chainId}:${t.address}`, label: `${t.symbol} on ${ch.name}` })),
  );

const Terms = (p: { agent: Agent; link: string; csrf: string; draft: Draft }) => (
  <section class="card">
    <h2>Referrals and terms</h2>
    <dl class="facts" data-testid="agent-terms">
      <dt>Referral code</dt>
      <dd>
        <code data-testid="referral-code">{p.agent.referralCode}</code>
      </dd>
      <dt>Referral link</dt>
      <dd>
        <code data-testid="referral-link">{p.link}</code>{" "}
        <button type="button" class="secondary" data-copy={p.link}>
          Copy
        </button>
      </dd>
      <dt>Markup</dt>
      <dd data-testid="agent-markup">
        {`${p.agent.markupBps} bps (${pct(p.agent.markupBps)}) of each referred payment, at most ${p.agent.markupCapBps} bps (${pct(p.agent.markupCapBps)})`}
      </dd>
      <dt>Platform-fee share</dt>
      <dd data-testid="agent-share">{pct(p.agent.platformShareBps)} of your referred merchants' platform fees</dd>
      <dt>Payout address</dt>
      <dd class="mono" data-testid="agent-payout">
        {p.agent.payoutAddress ?? <span class="muted">not set: withdrawals need one</span>}
      </dd>
    </dl>
    <form method="post" action={`${ACTIVE}/markup`} class="row">
      <CsrfField csrf={p.csrf} />
      <label>
        Markup <small>(basis points, 0 to {p.agent.markupCapBps}; new payments only)</small>
        <input
          type="number"
          name="markupBps"
          required
          min={0}
          max={p.agent.markupCapBps}
          step={1}
          value={p.draft.markupBps ?? String(p.agent.markupBps)}
        />
      </label>
      <button type="submit">Set markup</button>
    </form>
    <form method="post" action={`${ACTIVE}/payout-address`} class="row">
      <CsrfField csrf={p.csrf} />
      <label>
        Payout address <small>(EVM address your withdrawals are sent to, on every chain)</small>
        <input
          type="text"
          name="payoutAddress"
          required
          maxlength={42}
          placeholder="0x…"
          value={p.draft.payoutAddress ?? p.agent.payoutAddress ?? ""}
        />
      </label>
      <button type="submit">Save payout address</button>
    </form>
  </section>
);

/** A balance's withdrawal: its own token, or for the USD balance a stablecoin picked here. */
const WithdrawForm = (p: { b: AgentBalance; csrf: string; chains: readonly ActiveChain[]; to: string | null }) => {
  const usd = p.b.currency === USD_CURRENCY;
  const stables = usd ? usdStables(p.chains) : [];
  if (usd && stables.length === 0) return <span class="muted">no stablecoin to pay it in</span>;
  return (
    <form
      method="post"
      action={`${ACTIVE}/withdrawals`}
      class="inline"
      data-confirm={`Withdraw ${p.b.available} ${p.b.symbol} to ${p.to ?? "your payout address"}?`}
    >
      <CsrfField csrf={p.csrf} />
      <input type="hidden" name="balance" value={usd ? "usd" : "token"} />
      {usd ? (
        <select name="stablecoin" aria-label="Pay in">
          {stables.map((s) => (
            <option value={s.value}>{s.label}</option>
          ))}
        </select>
      ) : (
        <>
          <input type="hidden" name="chainId" value={p.b.chainId} />
          <input type="hidden" name="token" value={p.b.currency} />
        </>
      )}{" "}
      <button type="submit">Withdraw</button>
    </form>
  );
};

const Balances = (p: { balances: AgentBalance[]; csrf: string; chains: readonly ActiveChain[]; to: string | null }) => (
  <section>
    <h2>Balances</h2>
    {p.balances.length === 0 ? (
      <p class="muted">No earnings yet: they accrue when your referred merchants' payments complete.</p>
    ) : (
      <div class="table-wrap">
        <table data-testid="agent-balances">
          <thead>
            <tr>
              <th>Chain</th>
              <th>Currency</th>
              <th class="num">Markup</th>
              <th class="num">Fee share</th>
              <th class="num">Withdrawn</th>
              <th class="num">Available</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {p.balances.map((b) => (
              <tr data-testid="balance-row" data-chain-id={b.chainId} data-currency={b.currency}>
                <td>{b.currency === USD_CURRENCY ? <span class="muted">any (Gas Tank payments)</span> : chainName(p.chains, b.chainId)}</td>
                <td>
                  {b.symbol}
                  {b.currency === USD_CURRENCY ? null : <div class="muted mono">{b.currency}</div>}
                </td>
                <td class="num mono">{b.markup}</td>
                <td class="num mono">{b.platformShare}</td>
                <td class="num mono">{b.withdrawn}</td>
                <td class="num mono" data-testid="balance-available">
                  {b.available}
                </td>
                <td>{positive(b.available) ? <WithdrawForm b={b} csrf={p.csrf} chains={p.chains} to={p.to} /> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </section>
);

const Withdrawals = (p: { withdrawals: AgentWithdrawal[]; chains: readonly ActiveChain[] }) => (
  <section>
    <h2>Withdrawals</h2>
    {p.withdrawals.length === 0 ? (
      <p class="muted">No withdrawals yet.</p>
    ) : (
      <div class="table-wrap">
        <table data-testid="agent-withdrawals">
          <thead>
            <tr>
              <th>Requested</th>
              <th>Chain</th>
              <th class="num">Amount</th>
              <th>To</th>
              <th>Status</th>
              <th>Transaction</th>
            </tr>
          </thead>
          <tbody>
            {p.withdrawals.map((w) => (
              <tr data-testid="withdrawal-row">
                <td>{when(w.createdAt)}</td>
                <td>{chainName(p.chains, w.chainId)}</td>
                <td class="num mono">
                  {w.amount} {w.symbol}
                </td>
                <td class="mono">{w.to}</td>
                <td>
                  <span class={`badge ${w.status}`} data-testid="withdrawal-status">
                    {w.status}
                  </span>
                  {w.error && (
                    <div class="muted" data-testid="withdrawal-error">
                      {w.status === "requested" ? `Waiting: ${w.error}` : w.error}
                    </div>
                  )}
                </td>
                <td class="mono">{w.transactionHash ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </section>
);

const Referred = (p: { merchants: ReferredMerchant[]; chains: readonly ActiveChain[] }) => (
  <section>
    <h2>Referred merchants</h2>
    {p.merchants.length === 0 ? (
      <p class="muted">No referred merchants yet: share your referral link.</p>
    ) : (
      <div class="table-wrap">
        <table data-testid="referred-merchants">
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Joined</th>
              <th class="num">Completed payments</th>
              <th>Volume</th>
              <th>Earned</th>
            </tr>
          </thead>
          <tbody>
            {p.merchants.map((m) => (
              <tr data-testid="referred-row" data-merchant-id={m.merchantId}>
                <td>{m.name}</td>
                <td>{m.merchantType}</td>
                <td>{when(m.createdAt)}</td>
                <td class="num">{m.completedPayments}</td>
                <td>
                  {m.volume.length === 0 ? (
                    <span class="muted">—</span>
                  ) : (
                    m.volume.map((v) => (
                      <div class="mono">
                        {v.amount} {v.symbol} <span class="muted">on {chainName(p.chains, v.chainId)}</span>
                      </div>
                    ))
                  )}
                </td>
                <td>
                  {m.earnings.length === 0 ? (
                    <span class="muted">—</span>
                  ) : (
                    m.earnings.map((e) => (
                      <div class="mono">
                        {e.amount} {e.symbol} {e.currency === "usd" ? null : <span class="muted">on {chainName(p.chains, e.chainId)}</span>}
                      </div>
                    ))
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </section>
);

/** The screen of agent `agent`: `top` (notices) above its terms, balances, withdrawals and referred merchants. */
async function agentPage(c: Ctx, agent: Agent, top: Child, opts: { status?: ContentfulStatusCode; draft?: Draft } = {}) {
  const { deps, csrf } = c.var;
  const balances = await agentBalances(deps.db.pool, agent.agentId);
  const withdrawals = await listWithdrawals(deps, agent.agentId);
  const merchants = await referredMerchants(deps.db.pool, agent.agentId);
  const link = `${deps.config.appUrl}/dashboard/signup?ref=${encodeURIComponent(agent.referralCode)}`;
  return screen(
    c,
    { title: "Agent", active: ACTIVE, status: opts.status },
    <>
      {top}
      <Terms agent={agent} link={link} csrf={csrf} draft={opts.draft ?? {}} />
      <Balances balances={balances} csrf={csrf} chains={deps.chains} to={agent.payoutAddress} />
      <Withdrawals withdrawals={withdrawals} chains={deps.chains} />
      <Referred merchants={merchants} chains={deps.chains} />
    </>,
  );
}

/** What a non-agent account gets here: the not-found page other screens show for what the merchant does not have. */
const notFound = (c: Ctx, err: DomainError) =>
  screen(
    c,
    { title: "Not found", status: c.var.statusOf(err) },
    <>
      <Notice kind="error">{err.message}</Notice>
      <p>
        <a href="/dashboard">Back to the dashboard</a>
      </p>
    </>,
  );

/** Runs an action of the signed-in agent: PRG with the flash it returns, or the screen with the refusal. */
async function act(c: Ctx, run: (agent: Agent) => Promise<Flash>, draft?: Draft) {
  const agent = c.var.agent;
  if (!agent) return notFound(c, new NotFound(NOT_AN_AGENT));
  try {
    setFlash(c, ACTIVE, await run(agent));
    return c.redirect(ACTIVE, 303);
  } catch (err) {
    if (!isDomainError(err)) throw err;
    if (err.kind === "not_found") return notFound(c, err);
    if (err.kind !== "invalid" && err.kind !== "conflict") throw err;
    return agentPage(c, agent, <Notice kind="error">{err.message}</Notice>, { status: c.var.statusOf(err), draft });
  }
}

/** A whole number as a number; anything else as typed, for updateAgent to refuse with its message. */
const bpsOf = (s: string) => (/^[0-9]{1,5}$/.test(s.trim()) ? Number(s.trim()) : s);

export const agentScreen = new Hono<DashEnv>()
  .get("/agent", (c) => {
    const agent = c.var.agent;
    if (!agent) return notFound(c, new NotFound(NOT_AN_AGENT));
    return agentPage(c, agent, <FlashView flash={takeFlash(c, ACTIVE)} />);
  })
  .post("/agent/markup", async (c) => {
    const markupBps = str((await c.req.parseBody()).markupBps);
    return act(
      c,
      async (agent) => {
        const a = await updateAgent(c.var.deps.db, agent.agentId, { markupBps: bpsOf(markupBps) });
        return { notices: [{ kind: "ok", text: `Markup set to ${a.markupBps} bps (${pct(a.markupBps)}) for new payments.` }] };
      },
      { markupBps },
    );
  })
  .post("/agent/payout-address", async (c) => {
    const payoutAddress = str((await c.req.parseBody()).payoutAddress).trim();
    return act(
      c,
      async (agent) => {
        const a = await updateAgent(c.var.deps.db, agent.agentId, { payoutAddress });
        return { notices: [{ kind: "ok", text: `Withdrawals are now sent to ${a.payoutAddress}.` }] };
      },
      { payoutAddress },
    );
  })
  .post("/agent/withdrawals", async (c) => {
    const form = await c.req.parseBody();
    // The USD balance's form sends the stablecoin picked as `chainId:token`; a token balance's, its own two fields.
    const [chainId, token] = form.stablecoin !== undefined ? str(form.stablecoin).split(":") : [str(form.chainId), str(form.token)];
    const balance = str(form.balance) || "token";
    return act(c, async (agent) => {
      const w = await requestWithdrawal(c.var.deps, agent.agentId, { chainId: chainId ?? "", token: token ?? "", balance });
      return {
        notices: [
          {
            kind: "ok",
            text: `Withdrawal of ${w.amount} ${w.symbol} to ${w.to} requested: it is sent on-chain shortly.`,
            testId: "withdrawal-requested",
          },
        ],
      };
    });
  });
