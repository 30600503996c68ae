import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createWebhookDispatcher, type WebhookDispatcher } from "../../../modules/webhooks/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../../modules/webhooks/helpers/receiver.js";
import { dashboardWith, FormClient, ODD_STATUS, signedIn } from "./forms.js";

// /dashboard/webhooks over HTTP on the test stack: the form stores what the API shows, the secret is shown
// once (on the screen the form redirects to: a reload neither shows nor regenerates it), a test event reaches a real HTTPS receiver (self-signed, trusted by this file's dispatcher; the test
// stack allows loopback targets), a resend adds one attempt, and another merchant sees none of it.

const MIN = 60_000;
let svc: TestService;
let origin: string;
let receiver: Receiver;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  origin = new URL(svc.url).origin;
  receiver = await startReceiver();
  dispatcher = createWebhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
});
afterAll(async () => {
  await dispatcher?.close();
  await receiver?.close();
  await svc?.stop();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.setResponder(() => ({ status: 200, body: "ok" }));
});

const secretOf = (html: string) => /value="(whsec_[^"]+)"[^>]*data-testid="webhook-secret"/.exec(html)?.[1];
const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");
const rows = (html: string) => html.match(/data-testid="delivery-row"/g)?.length ?? 0;

/** Saves the webhook through the form; a creation redirects to the screen, which carries the secret once. */
async function configure(b: FormClient, fields: Record<string, string | string[]>) {
  return b.submit("/dashboard/webhooks", "/dashboard/webhooks", fields);
}

/** Creates the webhook through the form and follows the redirect: the screen with the secret. */
async function create(b: FormClient, fields: Record<string, string | string[]>) {
  const posted = await configure(b, fields);
  expect(posted.status).toBe(303);
  expect(posted.location).toBe("/dashboard/webhooks");
  expect(secretOf(posted.html)).toBeUndefined();
  return b.follow(posted);
}

describe("dashboard webhook configuration", () => {
  it("the form stores the webhook as GET /v1/webhooks shows it; the secret is shown once, masked after", async () => {
    const a = await signedIn(svc, "Shop A");
    const empty = await a.browser.get("/dashboard/webhooks");
    expect(empty.status).toBe(200);
    expect(empty.html).toContain("No webhook yet");

    const created = await create(a.browser, { url: receiver.url, events: ["payment.completed", "payment.failed"], isActive: "on" });
    expect(created.status).toBe(200);
    expect(created.html).toContain("Webhook created.");
    const secret = secretOf(created.html);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const api = await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey });
    expect(api.status).toBe(200);
    expect(api.body.data).toMatchObject({
      url: receiver.url,
      events: ["payment.completed", "payment.failed"],
      isActive: true,
      signing: "secret",
      secret: `whsec_********${secret!.slice(-4)}`,
    });

    const later = await a.browser.get("/dashboard/webhooks");
    expect(later.status).toBe(200);
    expect(later.html).not.toContain(secret!);
    expect(later.html).not.toContain('data-testid="webhook-secret"');
    expect(later.html).toContain(`whsec_********${secret!.slice(-4)}`);

    // An update: PRG, and the API sees it (inactive, one event).
    const updated = await configure(a.browser, { url: receiver.url, events: ["payment.expired"] });
    expect(updated.status).toBe(303);
    expect(updated.location).toBe("/dashboard/webhooks?saved=1");
    const after = await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey });
    expect(after.body.data).toMatchObject({ events: ["payment.expired"], isActive: false, secret: `whsec_********${secret!.slice(-4)}` });

    // Regenerate: a new secret, shown once on the screen the POST redirects to; a reload regenerates nothing.
    const posted = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/secret", {});
    expect(posted.status).toBe(303);
    expect(posted.location).toBe("/dashboard/webhooks");
    expect(secretOf(posted.html)).toBeUndefined();
    const regen = await a.browser.follow(posted);
    expect(regen.status).toBe(200);
    expect(regen.html).toContain("New secret generated: the old one no longer signs.");
    const fresh = secretOf(regen.html);
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    expect((await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey })).body.data.secret).toBe(`whsec_********${fresh!.slice(-4)}`);
    const reload = await a.browser.get("/dashboard/webhooks");
    expect(reload.html).not.toContain(fresh!);
    expect(reload.html).not.toContain("New secret generated");
    expect((await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey })).body.data.secret).toBe(`whsec_********${fresh!.slice(-4)}`);

    // Delete.
    const del = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/delete", {});
    expect(del.status).toBe(303);
    expect(del.location).toBe("/dashboard/webhooks?deleted=1");
    expect(await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey })).toMatchObject({
      status: 404,
      body: { success: false, error: "Webhook not configured" },
    });
  });

  it("refuses what PUT /v1/webhooks refuses, with its message, and keeps what was typed", async () => {
    const a = await signedIn(svc, "Shop V");
    const http = await configure(a.browser, { url: "http://shop.example/hooks", events: ["payment.completed"], isActive: "on" });
    expect(http.status).toBe(400);
    expect(http.html).toContain("Webhook URL must use HTTPS (http:// is not accepted)");
    expect(http.html).toContain('value="http://shop.example/hooks"');
    const none = await configure(a.browser, { url: receiver.url, isActive: "on" });
    expect(none.status).toBe(400);
    expect(none.html).toContain("events must contain at least one event");
    const unknown = await configure(a.browser, { url: receiver.url, events: ["payment.nope"] });
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain("Unknown event: payment.nope.");
    expect((await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey })).status).toBe(404);
  });

  it("takes the status of a refused form from the mounting app's error mapping", async () => {
    const a = await signedIn(svc, "Shop S", { browser: dashboardWith(svc.deps) });
    const http = await configure(a.browser, { url: "http://shop.example/hooks", events: ["payment.completed"], isActive: "on" });
    expect(http.status).toBe(ODD_STATUS.invalid);
    expect(http.html).toContain("Webhook URL must use HTTPS (http:// is not accepted)");
    const none = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    expect(none.status).toBe(ODD_STATUS.not_found);
    expect(none.html).toContain("Webhook not configured");
  });
});

describe("dashboard test event, delivery log and resend", () => {
  it("a test event is signed and delivered whatever the event filter, and logged as success", async () => {
    const a = await signedIn(svc, "Shop T");
    const created = await create(a.browser, { url: receiver.url, events: ["payment.failed"], isActive: "on" });
    const secret = secretOf(created.html)!;
    const sent = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    expect(sent.status).toBe(303);
    const deliveryId = /^\/dashboard\/webhooks\?sent=([0-9a-f-]{36})$/.exec(sent.location ?? "")?.[1];
    expect(deliveryId).toBeTruthy();

    const stats = await dispatcher.run(svc.deps);
    expect(stats).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(r.headers["webhook-id"]).toBe(deliveryId);
    expect(r.headers["x-signature"]).toBe(sha256hex(r.rawBody + secret));
    const config = (await svc.http("GET", "/v1/webhooks", { apiKey: a.apiKey })).body.data;
    expect(JSON.parse(r.rawBody)).toEqual({ event: "webhook.test", test: true, webhookId: config.id, timestamp: expect.any(Number) });

    const page = await a.browser.get("/dashboard/webhooks");
    expect(rows(page.html)).toBe(1);
    expect(page.html).toContain(`data-delivery-id="${deliveryId}"`);
    expect(page.html).toMatch(/data-testid="delivery-status">success</);
    expect(page.html).toMatch(/data-testid="delivery-attempts">1\/3</);
    const detail = await a.browser.get(`/dashboard/webhooks/deliveries/${deliveryId}`);
    expect(detail.status).toBe(200);
    expect(detail.html.match(/data-testid="attempt-row"/g)).toHaveLength(1);
    expect(detail.html).toContain("webhook.test");
  });

  it("an inactive webhook sends no test event (409) and none without a webhook (404)", async () => {
    const a = await signedIn(svc, "Shop I");
    const none = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    expect(none.status).toBe(404);
    expect(none.html).toContain("Webhook not configured");
    await configure(a.browser, { url: receiver.url, events: ["payment.completed"] });
    const inactive = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    expect(inactive.status).toBe(409);
    expect(inactive.html).toContain("The webhook is inactive: activate it to send a test event");
  });

  it("a failed delivery shows its truncated, escaped response; resend makes one more attempt, visible in the log", async () => {
    const a = await signedIn(svc, "Shop R");
    await configure(a.browser, { url: receiver.url, events: ["payment.completed"], isActive: "on" });
    const body = `<b>boom</b>${"y".repeat(400)}`;
    receiver.setResponder(() => ({ status: 500, body }));
    const sent = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    const deliveryId = new URL(sent.location!, origin).searchParams.get("sent")!;
    // Three attempts on the retry schedule (now, +5 min, +10 min), then failed.
    await dispatcher.run(svc.deps);
    svc.clock.advance(5 * MIN + 1000);
    await dispatcher.run(svc.deps);
    svc.clock.advance(10 * MIN + 1000);
    await dispatcher.run(svc.deps);
    expect(receiver.received).toHaveLength(3);

    const failed = await a.browser.get("/dashboard/webhooks");
    expect(failed.html).toMatch(/data-testid="delivery-status">failed</);
    expect(failed.html).toMatch(/data-testid="delivery-attempts">3\/3</);
    expect(failed.html).toContain("http 500");
    expect(failed.html).toContain(`&lt;b&gt;boom&lt;/b&gt;${"y".repeat(189)}…`);
    expect(failed.html).not.toContain("<b>boom");
    expect(failed.html).not.toContain("y".repeat(190));

    receiver.setResponder(() => ({ status: 200, body: "ok" }));
    const resend = await a.browser.submit("/dashboard/webhooks", `/dashboard/webhooks/deliveries/${deliveryId}/resend`, {});
    expect(resend.status).toBe(303);
    expect(resend.location).toBe(`/dashboard/webhooks/deliveries/${deliveryId}?resent=1`);
    const queued = await a.browser.get(resend.location!);
    expect(queued.html).toMatch(/data-testid="delivery-status">pending</);
    expect(queued.html).toMatch(/data-testid="delivery-attempts">3\/4</);

    expect(await dispatcher.run(svc.deps)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(receiver.received).toHaveLength(4);
    const done = await a.browser.get(`/dashboard/webhooks/deliveries/${deliveryId}`);
    expect(done.html).toMatch(/data-testid="delivery-status">success</);
    expect(done.html).toMatch(/data-testid="delivery-attempts">4\/4</);
    expect(done.html.match(/data-testid="attempt-row"/g)).toHaveLength(4);
  });

  it("the log is paginated, newest first", async () => {
    const a = await signedIn(svc, "Shop P");
    await configure(a.browser, { url: receiver.url, events: ["payment.completed"], isActive: "on" });
    const page = await a.browser.get("/dashboard/webhooks");
    const csrf = FormClient.csrfOf(page.html);
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) {
      svc.clock.advance(2); // distinct creation times: the order under test is the clock's
      const sent = await a.browser.post("/dashboard/webhooks/test", { _csrf: csrf });
      ids.push(new URL(sent.location!, origin).searchParams.get("sent")!);
    }
    const first = await a.browser.get("/dashboard/webhooks");
    expect(rows(first.html)).toBe(25);
    const order = [...first.html.matchAll(/data-delivery-id="([^"]+)"/g)].map((m) => m[1]);
    expect(order).toEqual(ids.slice(2).reverse());
    const older = /href="(\/dashboard\/webhooks\?cursor=[^"]+)">Older deliveries/.exec(first.html)?.[1];
    expect(older).toBeTruthy();
    const second = await a.browser.get(older!.replace(/&amp;/g, "&"));
    expect([...second.html.matchAll(/data-delivery-id="([^"]+)"/g)].map((m) => m[1])).toEqual([ids[1], ids[0]]);
    expect(second.html).not.toContain("Older deliveries");
    expect((await a.browser.get("/dashboard/webhooks?cursor=forged")).status).toBe(400);
  });
});

describe("isolation", () => {
  it("merchant B cannot see or resend A's delivery (404), and B's pages never show A's data", async () => {
    const a = await signedIn(svc, "Shop Alpha");
    const b = await signedIn(svc, "Shop Beta");
    await configure(a.browser, { url: `${receiver.url}?alpha-only`, events: ["payment.completed"], isActive: "on" });
    const sent = await a.browser.submit("/dashboard/webhooks", "/dashboard/webhooks/test", {});
    const deliveryId = new URL(sent.location!, origin).searchParams.get("sent")!;
    await dispatcher.run(svc.deps);

    const view = await b.browser.get(`/dashboard/webhooks/deliveries/${deliveryId}`);
    expect(view.status).toBe(404);
    expect(view.html).toContain("Delivery not found");
    const resend = await b.browser.submit("/dashboard/webhooks", `/dashboard/webhooks/deliveries/${deliveryId}/resend`, {});
    expect(resend.status).toBe(404);
    expect(resend.html).toContain("Delivery not found");
    const bPage = await b.browser.get("/dashboard/webhooks");
    expect(bPage.html).not.toContain(deliveryId);
    expect(bPage.html).not.toContain("alpha-only");
    expect(rows(bPage.html)).toBe(0);
    // A's delivery is untouched: still one attempt, delivered.
    const aView = await a.browser.get(`/dashboard/webhooks/deliveries/${deliveryId}`);
    expect(aView.html).toMatch(/data-testid="delivery-attempts">1\/3</);
    expect(aView.html).toMatch(/data-testid="delivery-status">success</);
    // Not signed in: the login page, not the delivery.
    const anon = await new FormClient(origin).get(`/dashboard/webhooks/deliveries/${deliveryId}`);
    expect(anon.status).toBe(303);
  });
});
