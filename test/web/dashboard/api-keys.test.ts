import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashApiKey } from "../../../modules/merchants/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { dashboardWith, FormClient, ODD_STATUS, signedIn, unescapeHtml as unescape } from "./forms.js";

// The dashboard's API keys screen over HTTP: list, create a named key (shown once, after a redirect: a reload
// neither shows it again nor mints another), revoke, roll with an overlap (the vault moves to the new key, a
// legacy webhook is left signing with the old one), and isolation between merchants. The keys are checked
// where they matter: GET /api/balance answers 200 or 401.
let svc: TestService;
type Shop = Awaited<ReturnType<typeof signedIn>>;

const sql = (text: string, args: unknown[] = []) => svc.deps.db.pool.query(text, args);

const shop = (browser?: FormClient): Promise<Shop> => signedIn(svc, undefined, { browser });

const balance = (key: string) => svc.http("GET", "/balance", { apiKey: key });
const keyId = async (key: string) => (await sql(`SELECT id FROM api_keys WHERE key_hash = $1`, [hashApiKey(key)])).rows[0].id as string;
const shownKey = (html: string) => /<input[^>]*value="([^"]+)"[^>]*data-testid="new-api-key"/.exec(html)?.[1] ?? null;
const keyRow = (html: string, id: string) => {
  const m = new RegExp(`data-testid="api-key-row" data-key-id="${id}">([\\s\\S]*?)</tr>`).exec(html);
  return m ? unescape(m[1]!) : null;
};
const statusOf = (row: string) => /data-testid="key-status">([^<]+)</.exec(row)![1]!;
const rowIds = (html: string) => [...html.matchAll(/data-testid="api-key-row" data-key-id="([^"]+)"/g)].map((m) => m[1]!);
const keysPage = "/dashboard/api-keys";
const post = (s: Shop, action: string, fields: Record<string, string> = {}) => s.browser.submit(keysPage, action, fields);
const keyCount = async (merchantId: string) =>
  (await sql(`SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1`, [merchantId])).rows[0].n as number;

const cli = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
    env: { ...process.env, ...svc.deps.env },
  });
  return JSON.parse(stdout);
};

beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

describe("API keys screen", () => {
  it("lists the keys, creates a named key shown once that works, and refuses a bad name", async () => {
    const a = await shop();
    const defaultId = await keyId(a.apiKey);
    const page = await a.browser.get(keysPage);
    expect(page.status).toBe(200);
    let row = keyRow(page.html, defaultId)!;
    expect(row).toContain("default");
    expect(row).toContain(`${a.apiKey.slice(0, 12)}…`);
    expect(statusOf(row)).toBe("active");
    expect(row).toContain("<td>never</td>");
    expect(page.html).not.toContain(a.apiKey);

    expect((await balance(a.apiKey)).status).toBe(200);
    row = keyRow((await a.browser.get(keysPage)).html, defaultId)!;
    expect(row).not.toContain("<td>never</td>");

    const posted = await post(a, keysPage, { name: "  shop backend  " });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(keysPage);
    expect(shownKey(posted.html)).toBeNull();
    const created = await a.browser.follow(posted);
    expect(created.status).toBe(200);
    const key = shownKey(created.html)!;
    expect(key).toMatch(/^cp_live_[A-Za-z0-9_-]{43}$/);
    expect((await balance(key)).status).toBe(200);
    const id = await keyId(key);
    const { rows } = await sql(`SELECT merchant_id, name FROM api_keys WHERE id = $1`, [id]);
    expect(rows[0]).toEqual({ merchant_id: a.id, name: "shop backend" });
    const again = await a.browser.get(keysPage);
    expect(rowIds(again.html)).toEqual([id, defaultId]);
    expect(keyRow(again.html, id)).toContain("shop backend");
    // Shown once: never again.
    expect(again.html).not.toContain(key);
    expect(shownKey(again.html)).toBeNull();

    const blank = await post(a, keysPage, { name: "   " });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain("Name is required");
    const long = await post(a, keysPage, { name: "x".repeat(61) });
    expect(long.status).toBe(400);
    expect(long.html).toContain("Name must be at most 60 characters");
    expect(shownKey(long.html)).toBeNull();
    // Without the form token nothing is created.
    const forged = await a.browser.post(keysPage, { name: "forged" });
    expect(forged.status).toBe(403);
    expect((await sql(`SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1`, [a.id])).rows[0].n).toBe(2);
  });

  it("revokes a key: 401 at once; revoking or rolling it again is refused", async () => {
    const a = await shop();
    const id = await keyId(a.apiKey);
    const res = await post(a, `/dashboard/api-keys/${id}/revoke`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(keysPage);
    const r = await balance(a.apiKey);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: "Unauthorized" });
    const page = await a.browser.follow(res);
    expect(page.html).toContain("The API key was revoked: requests with it are refused.");
    expect((await a.browser.get(keysPage)).html).not.toContain("The API key was revoked");
    const row = keyRow(page.html, id)!;
    expect(statusOf(row)).toBe("revoked");
    expect(row).not.toContain("/revoke");
    expect(row).not.toContain("/roll");

    const twice = await post(a, `/dashboard/api-keys/${id}/revoke`);
    expect(twice.status).toBe(409);
    expect(twice.html).toContain("This API key is already revoked");
    const roll = await post(a, `/dashboard/api-keys/${id}/roll`, { overlap: "1h" });
    expect(roll.status).toBe(409);
    expect(roll.html).toContain("A revoked API key cannot be rolled");
    expect(shownKey(roll.html)).toBeNull();
  });

  it("rolls with an overlap: new key shown once, old key works until expires_at, the vault moves, the legacy webhook stays", async () => {
    const a = await shop();
    const oldId = await keyId(a.apiKey);
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const vault = await svc.http("POST", "/vault/v1/config", {
      apiKey: a.apiKey,
      body: { businessName: "Acme Games", walletAddress: wallet },
    });
    expect(vault.status, JSON.stringify(vault.body)).toBe(201);
    const publicId = vault.body.data.publicId as string;
    const hook = await svc.http("PUT", "/v1/webhooks", { apiKey: a.apiKey, body: { url: "https://example.com/legacy", legacy: true } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const storedLegacy = (await sql(`SELECT legacy_api_key FROM webhook_configs WHERE merchant_id = $1`, [a.id])).rows[0].legacy_api_key;

    const before = keyRow((await a.browser.get(keysPage)).html, oldId)!;
    expect(before).toContain(`Vault: Acme Games <code>${publicId}</code>`);
    expect(before).toContain("Signs your legacy payment webhook");

    const t0 = svc.clock.now();
    const rolled = await post(a, `/dashboard/api-keys/${oldId}/roll`, { overlap: "1h" });
    const t1 = svc.clock.now();
    expect(rolled.status).toBe(303);
    expect(rolled.location).toBe(keysPage);
    const res = await a.browser.follow(rolled);
    expect(res.status).toBe(200);
    const fresh = shownKey(res.html)!;
    expect(fresh).toMatch(/^cp_live_/);
    expect(fresh).not.toBe(a.apiKey);
    const html = unescape(res.html);
    expect(html).toContain(`The vault “Acme Games” (${publicId}) is now reached with the new key.`);
    expect(html).toMatch(/keeps working until \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(res.html).toContain('data-testid="legacy-webhook-note"');

    const newId = await keyId(fresh);
    const keys = await sql(`SELECT id, name, revoked_at, expires_at FROM api_keys WHERE merchant_id = $1 ORDER BY created_at`, [a.id]);
    expect(keys.rows.map((k) => [k.id, k.name, k.revoked_at])).toEqual([
      [oldId, "default", null],
      [newId, "default", null],
    ]);
    const expires = keys.rows[0].expires_at.getTime();
    expect(expires).toBeGreaterThanOrEqual(t0 + 3_600_000);
    expect(expires).toBeLessThanOrEqual(t1 + 3_600_000);
    expect(keys.rows[1].expires_at).toBeNull();
    // The vault is bound to the new key; the legacy webhook still holds the old one.
    expect((await sql(`SELECT api_key_id FROM vault_configs WHERE public_id = $1`, [publicId])).rows[0].api_key_id).toBe(newId);
    expect((await sql(`SELECT legacy_api_key FROM webhook_configs WHERE merchant_id = $1`, [a.id])).rows[0].legacy_api_key).toBe(
      storedLegacy,
    );

    // Both keys work during the overlap; the vault answers to the new one only.
    expect((await balance(a.apiKey)).status).toBe(200);
    expect((await balance(fresh)).status).toBe(200);
    const viaNew = await svc.http("GET", "/vault/v1/config", { apiKey: fresh });
    expect(viaNew.status).toBe(200);
    expect(viaNew.body.data.publicId).toBe(publicId);
    expect((await svc.http("GET", "/vault/v1/config", { apiKey: a.apiKey })).status).toBe(404);

    const list = await a.browser.get(keysPage);
    expect(statusOf(keyRow(list.html, oldId)!)).toMatch(/^expires at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    expect(statusOf(keyRow(list.html, newId)!)).toBe("active");
    expect(keyRow(list.html, newId)).toContain(`Vault: Acme Games <code>${publicId}</code>`);
    expect(keyRow(list.html, oldId)).toContain("Signs your legacy payment webhook");
    expect(list.html).not.toContain(fresh);

    // A rolled key cannot roll again.
    const again = await post(a, `/dashboard/api-keys/${oldId}/roll`, { overlap: "24h" });
    expect(again.status).toBe(409);
    expect(again.html).toContain("This API key was already rolled");

    // After the overlap (the key lookup compares with the database's clock) the old key is refused.
    await sql(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [oldId]);
    const late = await balance(a.apiKey);
    expect(late.status).toBe(401);
    expect(late.body).toEqual({ error: "Unauthorized" });
    expect((await balance(fresh)).status).toBe(200);
    expect(statusOf(keyRow((await a.browser.get(keysPage)).html, oldId)!)).toMatch(/^expired at /);
  });

  it("rolls with no overlap: the old key is revoked at once; an unknown overlap is refused", async () => {
    const a = await shop();
    const oldId = await keyId(a.apiKey);
    const bad = await post(a, `/dashboard/api-keys/${oldId}/roll`, { overlap: "2h" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("overlap must be one of none, 1h, 24h, 7d");
    expect((await sql(`SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1`, [a.id])).rows[0].n).toBe(1);

    const rolled = await post(a, `/dashboard/api-keys/${oldId}/roll`, { overlap: "none" });
    expect(rolled.status).toBe(303);
    const res = await a.browser.follow(rolled);
    const fresh = shownKey(res.html)!;
    expect(res.html).toContain("was revoked.");
    expect(res.html).not.toContain('data-testid="legacy-webhook-note"');
    expect((await balance(a.apiKey)).status).toBe(401);
    expect((await balance(fresh)).status).toBe(200);
    const { rows } = await sql(`SELECT revoked_at, expires_at FROM api_keys WHERE id = $1`, [oldId]);
    expect(rows[0].revoked_at).toBeInstanceOf(Date);
    expect(rows[0].expires_at).toBeNull();
    expect(statusOf(keyRow((await a.browser.get(keysPage)).html, oldId)!)).toBe("revoked");
  });

  it("another merchant's key id, an unknown and a malformed id are 404 and change nothing", async () => {
    const a = await shop();
    const b = await shop();
    const idA = await keyId(a.apiKey);
    for (const id of [idA, randomUUID(), "not-a-uuid"]) {
      const revoke = await post(b, `/dashboard/api-keys/${id}/revoke`);
      expect(revoke.status, id).toBe(404);
      expect(revoke.html).toContain("API key not found");
      const roll = await post(b, `/dashboard/api-keys/${id}/roll`, { overlap: "none" });
      expect(roll.status, id).toBe(404);
      expect(roll.html).toContain("API key not found");
      expect(shownKey(roll.html)).toBeNull();
    }
    expect((await balance(a.apiKey)).status).toBe(200);
    const { rows } = await sql(`SELECT revoked_at, expires_at FROM api_keys WHERE merchant_id = $1`, [a.id]);
    expect(rows).toEqual([{ revoked_at: null, expires_at: null }]);
    expect((await sql(`SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1`, [b.id])).rows[0].n).toBe(1);
    const listB = await b.browser.get(keysPage);
    expect(rowIds(listB.html)).toEqual([await keyId(b.apiKey)]);
    expect(listB.html).not.toContain(a.apiKey.slice(0, 12));
  });

  it("shows a new key once after the redirect: a reload shows nothing and mints nothing; the flash opens for that browser only", async () => {
    const a = await shop();
    const b = await shop();
    const posted = await post(a, keysPage, { name: "till" });
    expect(posted.status).toBe(303);
    // The key travels sealed in a short-lived cookie of this screen only, never readable by a script.
    const setCookie = posted.headers.getSetCookie().find((l) => l.startsWith("cp_flash="))!;
    expect(setCookie).toMatch(/; Max-Age=300(;|$)/);
    expect(setCookie).toMatch(/; Path=\/dashboard\/api-keys(;|$)/);
    expect(setCookie).toMatch(/; HttpOnly(;|$)/);
    expect(setCookie).toMatch(/; SameSite=Strict(;|$)/);
    const sealed = a.browser.cookie("cp_flash")!;
    expect(decodeURIComponent(sealed)).toMatch(/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);

    const shown = await a.browser.follow(posted);
    const key = shownKey(shown.html)!;
    expect(key).toMatch(/^cp_live_/);
    expect(decodeURIComponent(sealed)).not.toContain(key.slice(8));
    expect(shown.headers.getSetCookie().some((l) => l.startsWith("cp_flash=;") && /Max-Age=0/.test(l))).toBe(true);
    expect(a.browser.cookie("cp_flash")).toBeUndefined();
    // The reload: the same screen, no key, and still the two keys.
    const reload = await a.browser.get(keysPage);
    expect(reload.status).toBe(200);
    expect(shownKey(reload.html)).toBeNull();
    expect(reload.html).not.toContain(key);
    expect(await keyCount(a.id)).toBe(2);

    // The sealed cookie copied to another signed-in browser does not open there (bound to A's session and form token).
    b.browser.setCookie("cp_flash", sealed);
    const elsewhere = await b.browser.get(keysPage);
    expect(elsewhere.status).toBe(200);
    expect(shownKey(elsewhere.html)).toBeNull();
    expect(b.browser.cookie("cp_flash")).toBeUndefined();
    // Nor for A's browser once its 5 minutes are over, nor altered, nor unsealed.
    a.browser.setCookie("cp_flash", sealed);
    svc.clock.advance(5 * 60_000 + 1);
    expect(shownKey((await a.browser.get(keysPage)).html)).toBeNull();
    const again = await a.browser.follow(await post(a, keysPage, { name: "till 2" }));
    expect(shownKey(again.html)).toMatch(/^cp_live_/);
    const forged = encodeURIComponent(
      JSON.stringify({ exp: svc.clock.now() + 60_000, secret: { label: "x", value: "cp_live_forged", testId: "new-api-key" } }),
    );
    a.browser.setCookie("cp_flash", forged);
    expect((await a.browser.get(keysPage)).html).not.toContain("cp_live_forged");
    const text = decodeURIComponent(sealed);
    const at = text.lastIndexOf(":") + 5; // a character of the IV
    const tampered = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    a.browser.setCookie("cp_flash", encodeURIComponent(tampered));
    expect(shownKey((await a.browser.get(keysPage)).html)).toBeNull();
  });

  it("takes the status of a refused form from the mounting app's error mapping", async () => {
    const a = await shop(dashboardWith(svc.deps));
    const b = await shop(dashboardWith(svc.deps));
    const blank = await post(a, keysPage, { name: " " });
    expect(blank.status).toBe(ODD_STATUS.invalid);
    expect(blank.html).toContain("Name is required");
    const id = await keyId(a.apiKey);
    const foreign = await post(b, `/dashboard/api-keys/${id}/revoke`);
    expect(foreign.status).toBe(ODD_STATUS.not_found);
    expect(foreign.html).toContain("API key not found");
    expect((await post(a, `/dashboard/api-keys/${id}/revoke`)).status).toBe(303);
    const twice = await post(a, `/dashboard/api-keys/${id}/revoke`);
    expect(twice.status).toBe(ODD_STATUS.conflict);
    expect(twice.html).toContain("This API key is already revoked");
  });

  it("the operator's CLI lists, rolls and revokes a merchant's keys with the same module", async () => {
    const a = await shop();
    const id = await keyId(a.apiKey);
    const listed = await cli("apikey", "list", "--merchant", a.id);
    expect(listed).toMatchObject([{ id, name: "default", prefix: a.apiKey.slice(0, 12), status: "active", vault: null }]);
    const rolled = await cli("apikey", "roll", "--merchant", a.id, "--key", id, "--overlap", "none");
    expect(rolled.previous).toMatchObject({ id, status: "revoked" });
    expect((await balance(a.apiKey)).status).toBe(401);
    expect((await balance(rolled.key)).status).toBe(200);
    const revoked = await cli("apikey", "revoke", "--merchant", a.id, "--key", rolled.apiKey.id);
    expect(revoked).toMatchObject({ id: rolled.apiKey.id, status: "revoked" });
    expect((await balance(rolled.key)).status).toBe(401);
  }, 60_000);
});
