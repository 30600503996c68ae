import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../../helpers/service.js";
import { signedInMerchant, testIdValue } from "../pos/helpers.js";

// The Cashiers screen of the dashboard over HTTP: PIN rules, the PIN shown once and stored only as a keyed hash,
// and another merchant's cashier invisible.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

const PAGE = "/dashboard/cashiers";

describe("dashboard cashiers", () => {
  it("refuses a 7-digit PIN, a duplicate PIN and a duplicate code; shows the PIN once and stores only its HMAC", async () => {
    const m = await signedInMerchant(svc);
    const short = await m.browser.submit(PAGE, PAGE, { name: "Alice", code: "ALICE", pin: "1234567" });
    expect(short.status).toBe(400);
    expect(short.html).toContain("PIN must be at least 8 digits");
    const letters = await m.browser.submit(PAGE, PAGE, { name: "Alice", code: "ALICE", pin: "1234abcd" });
    expect(letters.status).toBe(400);
    expect(letters.html).toContain("PIN must contain digits only");
    const badCode = await m.browser.submit(PAGE, PAGE, { name: "Alice", code: "AL-ICE", pin: "20481024" });
    expect(badCode.status).toBe(400);
    expect(badCode.html).toContain("Cashier code must be 1-16 letters or digits");

    const posted = await m.browser.submit(PAGE, PAGE, { name: "Alice", code: "ALICE", pin: "20481024" });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(PAGE);
    expect(posted.html).not.toContain("20481024");
    // Shown once on the screen the form redirects to; a reload shows it no more.
    const ok = await m.browser.follow(posted);
    expect(ok.status).toBe(200);
    expect(testIdValue(ok.html, "cashier-pin")).toBe("20481024");
    expect(ok.html).toContain('data-testid="cashier-row"');

    const { rows } = await svc.deps.db.pool.query(`SELECT * FROM cashiers WHERE merchant_id = $1`, [m.id]);
    expect(rows).toHaveLength(1);
    const expected = createHmac("sha256", svc.deps.config.HASH_SECRET).update(`${m.id}:20481024`).digest("hex");
    expect(rows[0].pin_hash).toBe(expected);
    // The PIN is in no column of the row.
    expect(JSON.stringify(rows[0])).not.toContain("20481024");

    const samePin = await m.browser.submit(PAGE, PAGE, { name: "Bob", code: "BOB", pin: "20481024" });
    expect(samePin.status).toBe(409);
    expect(samePin.html).toContain("A cashier with this PIN already exists");
    const sameCode = await m.browser.submit(PAGE, PAGE, { name: "Alice 2", code: "ALICE", pin: "99990000" });
    expect(sameCode.status).toBe(409);
    expect(sameCode.html).toContain("A cashier with this code already exists");

    // Never shown again: the list has the cashier, not the PIN.
    const list = await m.browser.get(PAGE);
    expect(list.status).toBe(200);
    expect(list.html).toContain("ALICE");
    expect(list.html).not.toContain("20481024");
    expect(list.html).not.toContain('data-testid="cashier-pin"');

    // PINs are unique per merchant: another merchant may use the same one.
    const other = await signedInMerchant(svc);
    expect((await other.browser.submit(PAGE, PAGE, { name: "Alice", code: "ALICE", pin: "20481024" })).status).toBe(303);
  });

  it("draws an 8-digit PIN when none is given", async () => {
    const m = await signedInMerchant(svc);
    const res = await m.browser.follow(await m.browser.submit(PAGE, PAGE, { name: "Carol", code: "CAROL", pin: "" }));
    expect(res.status).toBe(200);
    const pin = testIdValue(res.html, "cashier-pin")!;
    expect(pin).toMatch(/^\d{8}$/);
    const { rows } = await svc.deps.db.pool.query(`SELECT pin_hash FROM cashiers WHERE merchant_id = $1`, [m.id]);
    expect(rows[0].pin_hash).toBe(createHmac("sha256", svc.deps.config.HASH_SECRET).update(`${m.id}:${pin}`).digest("hex"));
  });

  it("deletes a cashier (code and PIN free again); another merchant's cashier id is 404 and stays", async () => {
    const a = await signedInMerchant(svc);
    const b = await signedInMerchant(svc);
    await a.browser.submit(PAGE, PAGE, { name: "Dave", code: "DAVE", pin: "31415926" });
    const { rows } = await svc.deps.db.pool.query(`SELECT id FROM cashiers WHERE merchant_id = $1`, [a.id]);
    const id = rows[0].id as string;

    const foreign = await b.browser.submit(PAGE, `/dashboard/cashiers/${id}/delete`, {});
    expect(foreign.status).toBe(404);
    expect(foreign.html).toContain("Cashier not found");
    const still = await svc.deps.db.pool.query(`SELECT deleted_at FROM cashiers WHERE id = $1`, [id]);
    expect(still.rows[0].deleted_at).toBeNull();
    expect((await b.browser.get(PAGE)).html).not.toContain("DAVE");
    expect((await b.browser.submit(PAGE, `/dashboard/cashiers/not-a-uuid/delete`, {})).status).toBe(404);

    const del = await a.browser.submit(PAGE, `/dashboard/cashiers/${id}/delete`, {});
    expect(del.status).toBe(303);
    expect(del.location).toBe("/dashboard/cashiers?done=deleted");
    expect((await a.browser.get(PAGE)).html).not.toContain("DAVE");
    expect((await a.browser.submit(PAGE, `/dashboard/cashiers/${id}/delete`, {})).status).toBe(404);
    // Code and PIN of a deleted cashier may be given again.
    expect((await a.browser.submit(PAGE, PAGE, { name: "Dave", code: "DAVE", pin: "31415926" })).status).toBe(303);
  });
});
