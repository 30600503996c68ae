import { createMiddleware } from "hono/factory";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
const FORM = "application/x-www-form-urlencoded";

/**
 * What no page of ours sends is refused before any route reads it (dashboard and POS), as a 4xx, never a 500:
 * a state-changing request whose body is not an URL-encoded form (415; no form uploads files), a body that does
 * not parse (400), and a NUL character in the path, the query or a field (400: Postgres refuses NUL in text).
 */
export const formInput = createMiddleware(async (c, next) => {
  const url = c.req.url;
  if (/%00/i.test(url) || url.includes("\u0000")) return c.text("Invalid characters in the address", 400);
  for (const values of Object.values(c.req.queries()))
    if (values.some((v) => v.includes("\u0000"))) return c.text("Invalid characters in the address", 400);
  if (!SAFE.has(c.req.method)) {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== FORM) return c.text(`Forms are sent as ${FORM}`, 415);
    let body: Record<string, unknown>;
    try {
      body = await c.req.parseBody({ all: true });
    } catch {
      return c.text("Unreadable form", 400);
    }
    for (const v of Object.values(body).flat())
      if (typeof v !== "string" || v.includes("\u0000")) return c.text("Invalid characters in the form", 400);
  }
  await next();
});
