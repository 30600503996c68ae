import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, newPage, screenshot } from "../../helpers/browser.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// The API reference (/api/docs, Swagger UI served by the app) renders the OpenAPI document in Chromium, with no
// request leaving for another host and no script or CSP error.
let svc: TestService;
let browser: Browser;
beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ processors: false }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe("API reference page in Chromium", () => {
  it("renders every operation of /api/openapi.json from local assets", async () => {
    const origin = new URL(svc.url).origin;
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);
    const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((k) => METHODS.has(k)).length, 0);
    expect(operations).toBeGreaterThan(30);

    const { context, page, errors } = await newPage(browser);
    const foreign: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) foreign.push(r.url());
    });
    await page.goto(`${svc.url}/docs`);
    expect(await page.title()).toBe("API reference · chainpay");
    await expect.poll(() => page.locator(".opblock").count(), { timeout: 20_000 }).toBe(operations);
    expect(await page.locator(".opblock-summary-path", { hasText: "/v1/payments" }).first().isVisible()).toBe(true);
    // Open POST /payments: its request body schema is shown.
    await page.locator('.opblock-post .opblock-summary-path[data-path="/payments"]').click();
    await screenshot(page, "api-docs");
    await expect.poll(() => page.locator(".opblock.is-open .opblock-section-request-body").count()).toBe(1);
    expect(await page.locator(".opblock.is-open").textContent()).toContain("Invalid form data");
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
