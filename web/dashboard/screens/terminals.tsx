import { Hono, type Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { Invalid, isDomainError } from "../../../core/errors.js";
import { listCashiers, type Cashier } from "../../../modules/terminals/index.js";
import { servedTokens, tokenKey, type PosToken } from "../../../modules/terminals/index.js";
import {
  createTerminal,
  deleteTerminalById,
  getTerminal,
  listTerminals,
  updateTerminal,
  type CashierAccess,
  type Terminal,
  type TerminalInput,
} from "../../../modules/terminals/index.js";
import type { DashEnv } from "../env.js";
import { CsrfField, Notice, PostButton, screen } from "../layout.js";

// The Terminals screen: the merchant's point-of-sale terminals (name, code, payout address, tokens, allowed cashiers),
// create, edit, delete, and the link to each terminal's POS page (/pos/<terminalId>).

type Ctx = Context<DashEnv>;
const ACTIVE = "/dashboard/terminals";

/** The form's values as typed, so a refused form comes back filled in. */
type Draft = {
  code?: string;
  name?: string;
  payoutAddress?: string;
  defaultToken?: string;
  allowedTokens?: string[];
  /** The radio "who may sell": `any` or `only` (the checked cashiers); empty when the form had none. */
  cashierAccess?: string;
  cashierIds?: string[];
};

const draftOf = (t: Terminal): Draft => ({
  code: t.code,
  name: t.name,
  payoutAddress: t.payoutAddress ?? "",
  defaultToken: t.defaultChainId && t.defaultToken ? tokenKey(t.defaultChainId, t.defaultToken) : "",
  allowedTokens: t.allowedTokens,
  cashierAccess: t.cashierIds.length ? "only" : "any",
  cashierIds: t.cashierIds,
});

const list = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string");
const str = (v: unknown) => (typeof v === "string" ? v : "");

async function formDraft(c: Ctx): Promise<Draft> {
  const f = await c.req.parseBody({ all: true });
  return {
    code: str(f.code).trim(),
    name: str(f.name),
    payoutAddress: str(f.payoutAddress),
    defaultToken: str(f.defaultToken),
    allowedTokens: list(f.allowedTokens),
    cashierAccess: str(f.cashierAccess),
    cashierIds: list(f.cashierIds),
  };
}

/**
 * Who may sell, as the form chose it. The radio decides; without it (a client posting its own form) checked cashiers
 * mean "only these", and no cashiers mean "any" for a new terminal and "unchanged" for an edit: saving a terminal
 * never opens it by accident.
 */
function accessOf(d: Draft, creating: boolean): CashierAccess | undefined {
  const ids = d.cashierIds ?? [];
  if (d.cashierAccess === "any") return "any";
  if (d.cashierAccess === "only") return { only: ids };
  if (d.cashierAccess) throw new Invalid("Choose who may sell on this terminal");
  if (ids.length) return { only: ids };
  return creating ? "any" : undefined;
}

const inputOf = (d: Draft, creating: boolean): TerminalInput => ({
  payoutAddress: d.payoutAddress,
  defaultToken: d.defaultToken,
  allowedTokens: d.allowedTokens,
  cashiers: accessOf(d, creating),
});

const tokenLabel = (t: PosToken) => `${t.symbol} · ${t.chainName} (${t.chainId})`;

/** The settings fields shared by the create and edit forms. */
const SettingsFields = (p: { draft: Draft; tokens: PosToken[]; cashiers: Cashier[]; closed?: boolean }) => (
  <>
    <label>
      Name <small>(shown on the POS page and in the payments' terminal field)</small>
      <input type="text" name="name" required maxlength={100} value={p.draft.name ?? ""} data-testid="terminal-name" />
    </label>
    <label>
      Payout address <small>(the wallet the terminal's sales settle to)</small>
      <input
        type="text"
        name="payoutAddress"
        class="mono"
        placeholder="0x…"
        maxlength={42}
        value={p.draft.payoutAddress ?? ""}
        data-testid="terminal-payout"
      />
    </label>
    <label>
      Default token <small>(preselected on the POS)</small>
      <select name="defaultToken" data-testid="terminal-default-token">
        <option value="">None</option>
        {p.tokens.map((t) => (
          <option value={t.key} selected={t.key === p.draft.defaultToken}>
            {tokenLabel(t)}
          </option>
        ))}
      </select>
    </label>
    <fieldset class="events" data-testid="terminal-tokens">
      <legend>Also accept</legend>
      {p.tokens.map((t) => (
        <label class="check">
          <input type="checkbox" name="allowedTokens" value={t.key} checked={p.draft.allowedTokens?.includes(t.key)} />
          {tokenLabel(t)}
        </label>
      ))}
    </fieldset>
    <CashierFields draft={p.draft} cashiers={p.cashiers} closed={p.closed} />
  </>
);

/**
 * Who may sell: an explicit choice between any cashier and only the checked ones. A terminal whose listed cashiers
 * were all deleted is closed; it says so, and stays closed until a cashier is checked or "any" chosen.
 */
const CashierFields = (p: { draft: Draft; cashiers: Cashier[]; closed?: boolean }) => {
  const only = p.draft.cashierAccess === "only" || (!p.draft.cashierAccess && !!p.draft.cashierIds?.length);
  return (
    <fieldset class="events" data-testid="terminal-cashiers">
      <legend>Who may sell on this terminal</legend>
      <label class="check">
        <input type="radio" name="cashierAccess" value="any" checked={!only} data-testid="terminal-cashiers-any" />
        Any cashier of the business
      </label>
      <label class="check">
        <input type="radio" name="cashierAccess" value="only" checked={only} data-testid="terminal-cashiers-only" />
        Only the cashiers checked below
      </label>
      {p.closed ? (
        <p class="muted" data-testid="terminal-cashiers-closed">
          Nobody may sell here now: the cashiers chosen for this terminal were deleted. Check a cashier or choose any cashier to open it.
        </p>
      ) : null}
      {p.cashiers.length === 0 ? (
        <p class="muted">
          No cashiers yet: <a href="/dashboard/cashiers">create one</a>.
        </p>
      ) : (
        p.cashiers.map((c) => (
          <label class="check">
            <input type="checkbox" name="cashierIds" value={c.id} checked={p.draft.cashierIds?.includes(c.id)} />
            {c.name} <code>{c.code}</code>
          </label>
        ))
      )}
    </fieldset>
  );
};

/** Whether the terminal lists cashiers, all of them deleted: nobody may sell there. */
const isClosed = (t: Terminal, cashiers: Cashier[]) => t.cashierIds.length > 0 && !cashiers.some((c) => t.cashierIds.includes(c.id));

/** Who may sign in, as the table says it. */
function cashierSummary(t: Terminal, cashiers: Cashier[]): string {
  if (!t.cashierIds.length) return "Any cashier";
  if (isClosed(t, cashiers)) return "Nobody (its cashiers were deleted)";
  return cashiers
    .filter((c) => t.cashierIds.includes(c.id))
    .map((c) => c.name)
    .join(", ");
}

function acceptedSummary(t: Terminal, tokens: PosToken[]): string {
  const def = t.defaultChainId && t.defaultToken ? tokenKey(t.defaultChainId, t.defaultToken) : null;
  const keys = [...new Set([...(def ? [def] : []), ...t.allowedTokens])];
  const label = (k: string) => {
    const tok = tokens.find((x) => x.key === k);
    return tok ? `${tok.symbol} (${tok.chainId})${k === def ? " default" : ""}` : k;
  };
  return keys.length ? keys.map(label).join(", ") : "None yet";
}

const TerminalRow = (p: { t: Terminal; tokens: PosToken[]; cashiers: Cashier[]; csrf: string }) => (
  <tr data-testid="terminal-row" data-terminal-id={p.t.id}>
    <td>
      <a href={`/dashboard/terminals/${p.t.id}`}>{p.t.name}</a>
    </td>
    <td class="mono terminal-code">{p.t.code}</td>
    <td class="mono">{p.t.payoutAddress ?? <span class="muted">not set</span>}</td>
    <td>{acceptedSummary(p.t, p.tokens)}</td>
    <td>{cashierSummary(p.t, p.cashiers)}</td>
    <td class="terminal-actions">
      <a href={`/pos/${p.t.id}`} target="_blank" rel="noopener" data-testid="terminal-pos-link">
        Open POS
      </a>{" "}
      <a href={`/dashboard/terminals/${p.t.id}`}>Edit</a>{" "}
      <PostButton
        action={`/dashboard/terminals/${p.t.id}/delete`}
        csrf={p.csrf}
        label="Delete"
        kind="danger"
        confirm={`Delete the terminal “${p.t.name}”? Its POS page stops working; its payments stay.`}
      />
    </td>
  </tr>
);

async function listPage(c: Ctx, top: Child, opts: { status?: ContentfulStatusCode; draft?: Draft } = {}) {
  const { db, chains } = c.var.deps;
  const [terminals, cashiers] = await Promise.all([listTerminals(db, c.var.merchant.id), listCashiers(db, c.var.merchant.id)]);
  const tokens = servedTokens(chains);
  return screen(
    c,
    { title: "Terminals", active: ACTIVE, status: opts.status },
    <>
      {top}
      <p class="muted">
        A terminal is a point-of-sale page for a shop counter, a phone or a tablet: a cashier signs in with a PIN, types an amount and shows
        the customer a QR code. Its payments carry <code>orderId</code> <code>POS-CODE-CASHIER-time</code> and the <code>terminal</code>{" "}
        field.
      </p>
      {terminals.length === 0 ? (
        <p class="muted" data-testid="terminals-empty">
          No terminals yet.
        </p>
      ) : (
        <table data-testid="terminals-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Code</th>
              <th>Payout address</th>
              <th>Accepts</th>
              <th>Cashiers</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {terminals.map((t) => (
              <TerminalRow t={t} tokens={tokens} cashiers={cashiers} csrf={c.var.csrf} />
            ))}
          </tbody>
        </table>
      )}
      <h2>New terminal</h2>
      <form method="post" action="/dashboard/terminals" class="card" data-testid="terminal-create">
        <CsrfField csrf={c.var.csrf} />
        <label>
          Code <small>(1-32 letters or digits, in each payment's orderId; cannot be changed later)</small>
          <input
            type="text"
            name="code"
            required
            maxlength={32}
            pattern="[A-Za-z0-9]{1,32}"
            value={opts.draft?.code ?? ""}
            data-testid="terminal-code"
          />
        </label>
        <SettingsFields draft={opts.draft ?? {}} tokens={tokens} cashiers={cashiers} />
        <button type="submit">Create terminal</button>
      </form>
    </>,
  );
}

async function editPage(c: Ctx, t: Terminal, top: Child, opts: { status?: ContentfulStatusCode; draft?: Draft } = {}) {
  const cashiers = await listCashiers(c.var.deps.db, c.var.merchant.id);
  const draft = opts.draft ?? draftOf(t);
  return screen(
    c,
    { title: `Terminal ${t.name}`, active: ACTIVE, status: opts.status },
    <>
      {top}
      <p>
        <a href="/dashboard/terminals">All terminals</a> ·{" "}
        <a href={`/pos/${t.id}`} target="_blank" rel="noopener" data-testid="terminal-pos-link">
          Open the POS page
        </a>
      </p>
      <dl class="facts card">
        <dt>Code</dt>
        <dd class="mono" data-testid="terminal-code">
          {t.code}
        </dd>
        <dt>Terminal id</dt>
        <dd class="mono">{t.id}</dd>
        <dt>POS page</dt>
        <dd class="mono">/pos/{t.id}</dd>
      </dl>
      <form method="post" action={`/dashboard/terminals/${t.id}`} class="card" data-testid="terminal-edit">
        <CsrfField csrf={c.var.csrf} />
        <SettingsFields draft={draft} tokens={servedTokens(c.var.deps.chains)} cashiers={cashiers} closed={isClosed(t, cashiers)} />
        <button type="submit">Save</button>
      </form>
      <PostButton
        action={`/dashboard/terminals/${t.id}/delete`}
        csrf={c.var.csrf}
        label="Delete terminal"
        kind="danger"
        confirm={`Delete the terminal “${t.name}”? Its POS page stops working; its payments stay.`}
      />
    </>,
  );
}

const NOTICES: Record<string, string> = { saved: "Terminal saved.", created: "Terminal created.", deleted: "Terminal deleted." };
const noticeOf = (c: Ctx) => {
  const text = NOTICES[c.req.query("done") ?? ""];
  return text ? <Notice kind="ok">{text}</Notice> : null;
};

export const terminalsScreen = new Hono<DashEnv>()
  .get("/terminals", (c) => listPage(c, noticeOf(c)))
  .post("/terminals", async (c) => {
    const draft = await formDraft(c);
    try {
      const t = await createTerminal(
        c.var.deps.db,
        c.var.merchant.id,
        draft.code ?? "",
        draft.name ?? "",
        inputOf(draft, true),
        c.var.deps.chains,
      );
      return c.redirect(`/dashboard/terminals/${t.id}?done=created`, 303);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      return listPage(c, <Notice kind="error">{err.message}</Notice>, { status: c.var.statusOf(err), draft });
    }
  })
  .get("/terminals/:id", async (c) => editPage(c, await getTerminal(c.var.deps.db, c.var.merchant.id, c.req.param("id")), noticeOf(c)))
  .post("/terminals/:id", async (c) => {
    const id = c.req.param("id");
    // Another merchant's (or a deleted) terminal: 404 before the form is read.
    const t = await getTerminal(c.var.deps.db, c.var.merchant.id, id);
    const draft = await formDraft(c);
    try {
      await updateTerminal(c.var.deps.db, c.var.merchant.id, id, { ...inputOf(draft, false), name: draft.name }, c.var.deps.chains);
      return c.redirect(`/dashboard/terminals/${id}?done=saved`, 303);
    } catch (err) {
      if (!isDomainError(err) || err.kind === "not_found") throw err;
      return editPage(c, t, <Notice kind="error">{err.message}</Notice>, { status: c.var.statusOf(err), draft });
    }
  })
  .post("/terminals/:id/delete", async (c) => {
    await deleteTerminalById(c.var.deps.db, c.var.merchant.id, c.req.param("id"));
    return c.redirect("/dashboard/terminals?done=deleted", 303);
  });
