import { zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCashier, deleteCashier } from "../../../modules/terminals/index.js";
import { FormClient } from "./forms.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { formFields, payout, signedInMerchant, tokenKeyOf } from "../pos/helpers.js";

// The Terminals screen of the dashboard over HTTP: create with settings, edit, validation against the served
// networks, delete, and another merchant's terminal invisible (404).
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

const PAGE = "/dashboard/terminals";

async function terminalRow(id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT * FROM terminals WHERE id = $1`, [id]);
  return rows[0];
}

describe("dashboard terminals", () => {
  it("creates a terminal with payout, tokens and cashiers, edits it, lists it with its POS link, deletes it", async () => {
    const m = await signedInMerchant(svc);
    const { cashier: alice } = await createCashier(svc.deps, m.id, { name: "Alice", code: "ALICE", pin: "11112222" });
    const usdt = tokenKeyOf(svc, 777177, "USDT");
    const usdc = tokenKeyOf(svc, 777177, "USDC");
    const pol = `137:${zeroAddress}`;
    const to = payout();

    const created = await m.browser.submit(PAGE, PAGE, {
      code: "SHOP1",
      name: "Front desk",
      payoutAddress: to.toLowerCase(),
      defaultToken: usdt,
      allowedTokens: [usdc, pol],
      cashierAccess: "only",
      cashierIds: [alice.id],
    });
    expect(created.status).toBe(303);
    const id = /^\/dashboard\/terminals\/([0-9a-f-]{36})\?done=created$/.exec(created.location ?? "")?.[1];
    expect(id).toBeTruthy();
    const row = await terminalRow(id!);
    expect(row).toMatchObject({
      merchant_id: m.id,
      code: "SHOP1",
      name: "Front desk",
      payout_address: to,
      default_chain_id: 777177,
      default_token: usdt.split(":")[1],
      allowed_tokens: [usdc, pol],
      deleted_at: null,
    });
    const links = await svc.deps.db.pool.query(`SELECT cashier_id FROM terminal_cashiers WHERE terminal_id = $1`, [id]);
    expect(links.rows).toEqual([{ cashier_id: alice.id }]);

    const list = await m.browser.get(PAGE);
    expect(list.status).toBe(200);
    expect(list.html).toContain(`data-terminal-id="${id}"`);
    expect(list.html).toContain(`href="/pos/${id}"`);
    expect(list.html).toContain("Alice");

    const edit = await m.browser.get(`${PAGE}/${id}`);
    expect(edit.status).toBe(200);
    expect(edit.html).toContain(`value="${usdt}" selected=""`);
    expect(formFields(edit.html, "terminal-edit")).toMatchObject({ cashierAccess: ["only"], cashierIds: [alice.id] });

    // Edit: new name, no more USDC, any cashier.
    const saved = await m.browser.submit(`${PAGE}/${id}`, `${PAGE}/${id}`, {
      name: "Till 2",
      payoutAddress: to,
      defaultToken: usdt,
      allowedTokens: [pol],
      cashierAccess: "any",
      cashierIds: [alice.id],
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${PAGE}/${id}?done=saved`);
    expect(await terminalRow(id!)).toMatchObject({ name: "Till 2", code: "SHOP1", allowed_tokens: [pol] });
    expect((await svc.deps.db.pool.query(`SELECT 1 FROM terminal_cashiers WHERE terminal_id = $1`, [id])).rows).toHaveLength(0);

    const del = await m.browser.submit(PAGE, `${PAGE}/${id}/delete`, {});
    expect(del.status).toBe(303);
    expect((await terminalRow(id!)).deleted_at).not.toBeNull();
    expect((await m.browser.get(`${PAGE}/${id}`)).status).toBe(404);
    expect((await m.browser.get(`/pos/${id}`)).status).toBe(404);
    // The code is free again.
    expect((await m.browser.submit(PAGE, PAGE, { code: "SHOP1", name: "Front desk again" })).status).toBe(303);
  });

  it("saving the edit form as shown never changes who may sell: a terminal whose cashiers were deleted stays closed", async () => {
    const m = await signedInMerchant(svc);
    const { cashier: alice } = await createCashier(svc.deps, m.id, { name: "Alice", code: "ALICE", pin: "11113333" });
    const created = await m.browser.submit(PAGE, PAGE, { code: "TILL", name: "Till", cashierAccess: "only", cashierIds: [alice.id] });
    const id = created.location!.split("/").pop()!.split("?")[0]!;
    await deleteCashier(svc.deps.db, m.id, { id: alice.id });
    await createCashier(svc.deps, m.id, { name: "Bob", code: "BOB", pin: "22224444" });
    const links = async () =>
      (await svc.deps.db.pool.query(`SELECT cashier_id FROM terminal_cashiers WHERE terminal_id = $1`, [id])).rows.map((r) => r.cashier_id);

    // The screen says the terminal is closed and shows "only" chosen with no cashier checked.
    expect((await m.browser.get(PAGE)).html).toContain("Nobody (its cashiers were deleted)");
    const edit = await m.browser.get(`${PAGE}/${id}`);
    expect(edit.html).toContain('data-testid="terminal-cashiers-closed"');
    const fields = formFields(edit.html, "terminal-edit");
    expect(fields.cashierAccess).toEqual(["only"]);
    expect(fields.cashierIds).toBeUndefined();

    // A rename, everything else posted as the page shows it: the leftover row stays, Bob may not sell.
    const renamed = await m.browser.post(`${PAGE}/${id}`, { ...fields, name: ["Till renamed"] });
    expect(renamed.status).toBe(303);
    expect((await terminalRow(id)).name).toBe("Till renamed");
    expect(await links()).toEqual([alice.id]);
    const pos = new FormClient(new URL(svc.url).origin);
    const bob = await pos.submit(`/pos/${id}`, `/pos/${id}/login`, { pin: "22224444" });
    expect(bob.status).toBe(401);
    expect(bob.html).toContain("Wrong PIN");
    // Without the radio (a client posting its own form), an edit leaves the cashiers alone too.
    expect((await m.browser.submit(`${PAGE}/${id}`, `${PAGE}/${id}`, { name: "Till 3" })).status).toBe(303);
    expect(await links()).toEqual([alice.id]);

    // Opening it takes the explicit choice.
    const opened = await m.browser.post(`${PAGE}/${id}`, { ...fields, cashierAccess: ["any"] });
    expect(opened.status).toBe(303);
    expect(await links()).toEqual([]);
    expect((await pos.submit(`/pos/${id}`, `/pos/${id}/login`, { pin: "22224444" })).status).toBe(303);
  });

  it("keeps an open terminal open and a restricted one restricted on a rename; refuses 'only' with no cashier", async () => {
    const m = await signedInMerchant(svc);
    const { cashier: alice } = await createCashier(svc.deps, m.id, { name: "Alice", code: "ALICE", pin: "11115555" });
    const open = (await m.browser.submit(PAGE, PAGE, { code: "OPEN", name: "Open" })).location!.split("/").pop()!.split("?")[0]!;
    const shut = (await m.browser.submit(PAGE, PAGE, { code: "SHUT", name: "Shut", cashierAccess: "only", cashierIds: [alice.id] }))
      .location!.split("/")
      .pop()!
      .split("?")[0]!;
    const links = async (id: string) =>
      (await svc.deps.db.pool.query(`SELECT cashier_id FROM terminal_cashiers WHERE terminal_id = $1`, [id])).rows.map((r) => r.cashier_id);

    for (const [id, expected, access] of [
      [open, [], "any"],
      [shut, [alice.id], "only"],
    ] as const) {
      const fields = formFields((await m.browser.get(`${PAGE}/${id}`)).html, "terminal-edit");
      expect(fields.cashierAccess).toEqual([access]);
      expect((await m.browser.post(`${PAGE}/${id}`, { ...fields, name: ["Renamed"] })).status).toBe(303);
      expect(await links(id)).toEqual(expected);
    }

    // "Only" with nothing checked would mean anybody: refused, nothing changed.
    const fields = formFields((await m.browser.get(`${PAGE}/${shut}`)).html, "terminal-edit");
    expect(fields.cashierIds).toEqual([alice.id]);
    const refused = await m.browser.post(`${PAGE}/${shut}`, { ...fields, cashierIds: [] });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("Check at least one cashier, or let any cashier sell");
    expect(await links(shut)).toEqual([alice.id]);
    const fresh = await m.browser.submit(PAGE, PAGE, { code: "NONE", name: "None", cashierAccess: "only" });
    expect(fresh.status).toBe(400);
    expect(fresh.html).toContain("Check at least one cashier, or let any cashier sell");
    const odd = await m.browser.submit(`${PAGE}/${open}`, `${PAGE}/${open}`, { name: "Open", cashierAccess: "some" });
    expect(odd.status).toBe(400);
    expect(odd.html).toContain("Choose who may sell on this terminal");
    expect(await links(open)).toEqual([]);
  });

  it("refuses bad settings with the reason and keeps the form filled in", async () => {
    const m = await signedInMerchant(svc);
    const other = await svc.newMerchant();
    const { cashier: foreign } = await createCashier(svc.deps, other.id, { name: "Eve", code: "EVE", pin: "55556666" });
    const cases: [Record<string, string | string[]>, number, string][] = [
      [{ code: "BAD-CODE", name: "X" }, 400, "terminal code must be 1-32 letters or digits"],
      [{ code: "T1", name: " " }, 400, "Terminal name is required"],
      [{ code: "T1", name: "X", payoutAddress: "0x1234" }, 400, "Payout address must be 0x followed by 40 hex characters"],
      [{ code: "T1", name: "X", payoutAddress: zeroAddress }, 400, "Payout address must be 0x followed by 40 hex characters"],
      [{ code: "T1", name: "X", defaultToken: `1:${zeroAddress}` }, 400, "Network Ethereum (1) is not served here"],
      [{ code: "T1", name: "X", defaultToken: `999:${zeroAddress}` }, 400, "Unknown network 999"],
      [
        { code: "T1", name: "X", allowedTokens: [`777177:${"0x" + "ab".repeat(20)}`] },
        400,
        "is not a token of Service Chain Testnet (777177)",
      ],
      [{ code: "T1", name: "X", allowedTokens: ["USDT"] }, 400, "A token is written chainId:address"],
      [{ code: "T1", name: "X", cashierIds: [foreign.id] }, 400, "Unknown cashier"],
    ];
    for (const [fields, status, message] of cases) {
      const res = await m.browser.submit(PAGE, PAGE, fields);
      expect(res.status, JSON.stringify(fields)).toBe(status);
      expect(res.html, JSON.stringify(fields)).toContain(message);
    }
    const kept = await m.browser.submit(PAGE, PAGE, { code: "KEEP1", name: "Kept name", payoutAddress: "0xnope" });
    expect(kept.html).toContain('value="Kept name"');
    expect((await svc.deps.db.pool.query(`SELECT 1 FROM terminals WHERE merchant_id = $1`, [m.id])).rows).toHaveLength(0);

    expect((await m.browser.submit(PAGE, PAGE, { code: "DUP", name: "One" })).status).toBe(303);
    const dup = await m.browser.submit(PAGE, PAGE, { code: "DUP", name: "Two" });
    expect(dup.status).toBe(409);
    expect(dup.html).toContain("A terminal with this code already exists");
  });

  it("another merchant's terminal is 404 on every route and stays as it was", async () => {
    const a = await signedInMerchant(svc);
    const b = await signedInMerchant(svc);
    const created = await a.browser.submit(PAGE, PAGE, { code: "MINE", name: "A's terminal" });
    const id = created.location!.split("/").pop()!.split("?")[0]!;

    const view = await b.browser.get(`${PAGE}/${id}`);
    expect(view.status).toBe(404);
    expect(view.html).toContain("Terminal not found");
    expect((await b.browser.get(PAGE)).html).not.toContain(id);
    expect((await b.browser.submit(PAGE, `${PAGE}/${id}`, { name: "Taken over", payoutAddress: payout() })).status).toBe(404);
    expect((await b.browser.submit(PAGE, `${PAGE}/${id}/delete`, {})).status).toBe(404);
    expect(await terminalRow(id)).toMatchObject({ name: "A's terminal", payout_address: null, deleted_at: null });
    expect((await b.browser.get(`${PAGE}/not-a-uuid`)).status).toBe(404);
  });
});
