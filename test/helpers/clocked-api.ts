import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { startApiServer } from "../../api/server.js";
import { manualClock } from "../modules/webhooks/helpers/fixtures.js";
import { createTestDeps, type TestDeps } from "./deps.js";

export type HttpResult = { status: number; body: any; headers: Headers };

/** A response as status, JSON body (the text when it is not JSON) and headers. */
export async function readResponse(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

/** A client address of its own (the API trusts X-Forwarded-For from loopback, where a proxy would be). */
export const newIp = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/**
 * The API on a free port over a fresh schema, with a clock that stands still unless the test moves it
 * (exact counts for limits and throttles). Registers its own beforeAll/afterAll; read `deps` and `url` in tests.
 */
export function clockedApi(env: Record<string, string> = {}) {
  const clock = manualClock();
  const ctx = { clock, deps: undefined as unknown as TestDeps, url: "" };
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined;
  beforeAll(async () => {
    ctx.deps = await createTestDeps({ now: clock.now, env });
    api = await startApiServer(ctx.deps, 0);
    ctx.url = `http://127.0.0.1:${api.port}/api`;
  });
  afterAll(async () => {
    await api?.close();
    await ctx.deps?.cleanup();
  });
  return ctx;
}
