// HTTP helpers for the dashboard's HTML forms: a cookie jar, the page's form token, form posts.

/** A browser-like client of the dashboard without a browser: keeps cookies, reads `_csrf` from pages. */
export class FormClient {
  private cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

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

  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(path: string): Promise<{ status: number; html: string; location: string | null }> {
    const res = await fetch(this.origin + path, { headers: { cookie: this.header() }, redirect: "manual" });
    this.remember(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
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

  async post(
    action: string,
    fields: Record<string, string | string[]>,
  ): Promise<{ status: number; html: string; location: string | null }> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    const res = await fetch(this.origin + action, {
      method: "POST",
      headers: { cookie: this.header(), "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
    this.remember(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
  }
}
