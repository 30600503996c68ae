import { Hono, type Context } from "hono";
import type { Child } from "hono/jsx";
import { isDomainError } from "../../../core/errors.js";
import { createCashier, deleteCashier, listCashiers, type Cashier } from "../../../modules/terminals/index.js";
import type { DashEnv } from "../env.js";
import { setFlash, takeFlash } from "../flash.js";
import { CsrfField, FlashView, Notice, PostButton, screen } from "../layout.js";
import { when } from "./payments.js";

// The Cashiers screen: who may sell on the merchant's POS terminals. Create (the PIN is shown once, on the screen the
// form redirects to (web/dashboard/flash.ts), and never again: only its keyed hash is stored) and delete (the cashier is signed out everywhere).

type Ctx = Context<DashEnv>;
type Draft = { name?: string; code?: string };

const str = (v: unknown) => (typeof v === "string" ? v : "");

const CashierRow = (p: { cashier: Cashier; csrf: string }) => (
  <tr data-testid="cashier-row" data-cashier-id={p.cashier.id}>
    <td>{p.cashier.name}</td>
    <td class="mono" data-testid="cashier-code">
      {p.cashier.code}
    </td>
    <td>{when(p.cashier.createdAt.getTime())}</td>
    <td>
      <PostButton
        action={`/dashboard/cashiers/${p.cashier.id}/delete`}
        csrf={p.csrf}
        label="Delete"
        kind="danger"
        confirm={`Delete the cashier “${p.cashier.name}”? They are signed out of every terminal.`}
      />
    </td>
  </tr>
);

async function cashiersPage(c: Ctx, top: Child, opts: { status?: Parameters<typeof screen>[1]["status"]; draft?: Draft } = {}) {
  const cashiers = await listCashiers(c.var.deps.db, c.var.merchant.id);
  return screen(
    c,
    { title: "Cashiers", active: "/dashboard/cashiers", status: opts.status },
    <>
      {top}
      <p class="muted">
        A cashier signs in on a <a href="/dashboard/terminals">terminal</a>'s POS page with a PIN. The code appears in the orderId of their
        sales (<code>POS-TERMINAL-CODE-time</code>).
      </p>
      {cashiers.length === 0 ? (
        <p class="muted" data-testid="cashiers-empty">
          No cashiers yet.
        </p>
      ) : (
        <table data-testid="cashiers-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Code</th>
              <th>Created</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {cashiers.map((cashier) => (
              <CashierRow cashier={cashier} csrf={c.var.csrf} />
            ))}
          </tbody>
        </table>
      )}
      <h2>New cashier</h2>
      <form method="post" action="/dashboard/cashiers" class="card" autocomplete="off" data-testid="cashier-create">
        <CsrfField csrf={c.var.csrf} />
        <label>
          Name
          <input type="text" name="name" required maxlength={100} value={opts.draft?.name ?? ""} data-testid="cashier-name" />
        </label>
        <label>
          Code <small>(1-16 letters or digits)</small>
          <input
            type="text"
            name="code"
            required
            maxlength={16}
            pattern="[A-Za-z0-9]{1,16}"
            value={opts.draft?.code ?? ""}
            data-testid="cashier-code-input"
          />
        </label>
        <label>
          PIN <small>(at least 8 digits, different from your other cashiers'; leave empty to draw one)</small>
          <input
            type="password"
            name="pin"
            inputmode="numeric"
            pattern="[0-9]{8,32}"
            maxlength={32}
            autocomplete="new-password"
            data-testid="cashier-pin-input"
          />
        </label>
        <button type="submit">Create cashier</button>
      </form>
    </>,
  );
}

export const cashiersScreen = new Hono<DashEnv>()
  .get("/cashiers", (c) =>
    cashiersPage(
      c,
      c.req.query("done") === "deleted" ? (
        <Notice kind="ok">Cashier deleted.</Notice>
      ) : (
        <FlashView flash={takeFlash(c, "/dashboard/cashiers")} />
      ),
    ),
  )
  .post("/cashiers", async (c) => {
    const f = await c.req.parseBody();
    const draft = { name: str(f.name), code: str(f.code) };
    try {
      const { cashier, pin } = await createCashier(c.var.deps, c.var.merchant.id, { ...draft, pin: str(f.pin) });
      // PRG: the PIN is shown once on the screen (a reload neither shows it again nor re-posts the form).
      setFlash(c, "/dashboard/cashiers", {
        secret: { label: `PIN of ${cashier.name}`, value: pin, testId: "cashier-pin" },
        notices: [{ kind: "ok", text: `Cashier ${cashier.name} created.` }],
      });
      return c.redirect("/dashboard/cashiers", 303);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      return cashiersPage(c, <Notice kind="error">{err.message}</Notice>, { status: c.var.statusOf(err), draft });
    }
  })
  .post("/cashiers/:id/delete", async (c) => {
    await deleteCashier(c.var.deps.db, c.var.merchant.id, { id: c.req.param("id") });
    return c.redirect("/dashboard/cashiers?done=deleted", 303);
  });
