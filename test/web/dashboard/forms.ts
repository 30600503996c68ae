import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { expect } from "vitest";
import type { AppDeps } from "../../../core/deps.js";
import type { DomainError, ErrorKind } from "../../../core/errors.js";
import { createDashboard } from "../../../web/dashboard/index.js";
import type { TestService } from "../../helpers/service.js";

// HTTP helpers for the dashboard's HTML forms: a cookie jar, the page's form token, form posts.

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
export type FormResponse = { status: number; html: string; location: string | null; headers: Headers };

/** The text of an attribute value or element of server-rendered HTML (what the page escaped, back). */
export const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** A browser-like client of the dashboard without a browser: keeps cookies, reads `_csrf` from pages. */
export class FormClient {
  private cookies = new Map<string, string>();
  /** `send`: where requests go (default: the network; `dashboardWith` passes an in-process app). */
  constructor(
    readonly origin: string,
    private readonly send: Fetch = fetch,
  ) {}

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, eq), pair!.slice(eq + 1)];
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string) {
    return this.cookies.get(name);
  }

  /** Puts a cookie in the jar as a browser would keep it (e.g. one copied from another browser). */
  setCookie(name: string, value: string) {
    this.cookies.set(name, value);
  }

  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(path: string): Promise<FormResponse> {
    const res = await this.send(this.origin + path, { headers: { cookie: this.header() }, redirect: "manual" });
    this.remember(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location"), headers: res.headers };
  }

  /** What a browser does with a 303: GETs its location (throws when `res` is not a 303). */
  async follow(res: FormResponse): Promise<FormResponse> {
    if (res.status !== 303 || !res.location) throw new Error(`expected a 303 redirect, got ${res.status}: ${res.html.slice(0, 300)}`);
    return this.get(res.location);
  }

  /** The `_csrf` value of the first form of a page. */
  static csrfOf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error("no form token on the page");
    return m[1]!;
  }

  /** GETs `page` for its form token, then POSTs `fields` (form-encoded) to `action`. */
  async submit(page: string, action: string, fields: Record<string, string | string[]>, opts: { csrf?: string } = {}) {
    const csrf = opts.csrf ?? FormClient.csrfOf((await this.get(page)).html);
    return this.post(action, { _csrf: csrf, ...fields });
  }

  async post(action: string, fields: Record<string, string | string[]>): Promise<FormResponse> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    const res = await this.send(this.origin + action, {
      method: "POST",
      headers: { cookie: this.header(), "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
    this.remember(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location"), headers: res.headers };
  }
}

/** Statuses no screen would pick by itself: a screen answering these took them from the mounting app's `statusOf`. */
export const ODD_STATUS: Record<ErrorKind, ContentfulStatusCode> = {
  invalid: 422,
  unauthorized: 511,
  forbidden: 451,
  not_found: 410,
  conflict: 412,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 503,
  failed: 502,
  unavailable: 504,
};

/**
 * A browser of a dashboard mounted in-process on `deps` with the given error statuses (default ODD_STATUS):
 * shows that every screen takes the status of a refused form from the one mapping it is lent.
 */
export function dashboardWith(deps: AppDeps, statusOf: (e: DomainError) => ContentfulStatusCode = (e) => ODD_STATUS[e.kind]) {
  const app = new Hono<{ Variables: { deps: AppDeps } }>();
  app.use(async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.route("/dashboard", createDashboard({ clientKey: () => "test", limit: () => async (_c, next) => next(), statusOf }));
  return new FormClient("http://dashboard.test", async (url, init) => app.fetch(new Request(url, init)));
}

/** The password of the merchants `signedIn` makes. */
export const PASSWORD = "correct horse battery";

/**
 * A new merchant with an API key, signed in to the dashboard through the login form (which must answer 303), in
 * `opts.browser` (default: a new FormClient of the service; e.g. `dashboardWith(svc.deps)`). The name defaults to
 * newMerchant's.
 * @example const a = await signedIn(svc, "Shop A"); await a.browser.get("/dashboard/payments");
 */
export async function signedIn(
  svc: TestService,
  name?: string,
  opts: { type?: NonNullable<Parameters<TestService["newMerchant"]>[0]>["type"]; browser?: FormClient } = {},
) {
  const email = `m${randomUUID()}@shop.example`;
  const m = await svc.newMerchant({ name, email, password: PASSWORD, type: opts.type });
  const browser = opts.browser ?? new FormClient(new URL(svc.url).origin);
  const login = await browser.submit("/dashboard/login", "/dashboard/login", { email, password: PASSWORD });
  expect(login.status, login.html.slice(0, 300)).toBe(303);
  return { ...m, email, browser };
}
