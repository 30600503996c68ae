import type { Context } from "hono";
import { Invalid, UnsupportedMedia } from "../../core/errors.js";

/**
 * A request's JSON body for operations that name their own missing fields: no body is `undefined`;
 * a body must be `application/json` (415) and parse (400 `Invalid JSON body`).
 */
export async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  if (!/^application\/json\b/i.test(c.req.header("content-type") ?? ""))
    throw new UnsupportedMedia("Content-Type must be application/json");
  try {
    return JSON.parse(text);
  } catch {
    throw new Invalid("Invalid JSON body");
  }
}
