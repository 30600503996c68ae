import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { createLogger, logSettings } from "../../core/log.js";
import { createTestDeps, type TestDeps } from "../helpers/deps.js";

// The API's logs: one JSON object a line, each request's lines carrying its id (X-Request-Id, the client's when
// well-formed, else generated, and echoed in the response). The logger writes to a stream the test reads.

let deps: TestDeps;
const lines: string[] = [];
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  deps = await createTestDeps();
  const log = createLogger({ level: "info" }, { write: (chunk: string) => void lines.push(chunk) });
  app = createApp(deps, { log });
  // A route that fails unexpectedly, behind the same middleware and error handler as every other.
  app.get("/api/test-failure", () => {
    throw new Error("secret detail of a bug");
  });
});
afterAll(() => deps?.cleanup());

const entries = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
const request = (path: string, headers: Record<string, string> = {}) => app.request(path, { headers });

describe("request logs", () => {
  it("are JSON lines carrying the request id the client sent, echoed in the response", async () => {
    const res = await request("/api/health", { "X-Request-Id": "test-request-1" });
    expect(res.headers.get("x-request-id")).toBe("test-request-1");
    for (const l of lines) expect(l.endsWith("\n") && l.indexOf("\n") === l.length - 1, l).toBe(true);
    const line = entries().find((e) => e.reqId === "test-request-1");
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      reqId: "test-request-1",
      method: "GET",
      route: "/api/health",
      path: "/api/health",
      status: res.status,
    });
    expect(typeof line!.ms).toBe("number");
    expect(new Date(line!.time).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it("name a request without an id (or with a malformed one) by a generated UUID", async () => {
    for (const headers of [{}, { "X-Request-Id": "bad id with spaces" }] as Record<string, string>[]) {
      const res = await request("/api/no-such-route/0x1234", headers);
      expect(res.status).toBe(404);
      const id = res.headers.get("x-request-id")!;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const mine = entries().filter((e) => e.reqId === id);
      expect(mine).toHaveLength(1);
      // An unmatched path is labelled by the pattern that saw it, never by the path itself.
      expect(mine[0]).toMatchObject({ status: 404, path: "/api/no-such-route/0x1234" });
      expect(mine[0]!.route).not.toContain("0x1234");
    }
  });

  it("an unexpected error: logged with the request id and the stack, answered 500 without its text", async () => {
    const res = await request("/api/test-failure", { "X-Request-Id": "test-request-500" });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("secret");
    const mine = entries().filter((e) => e.reqId === "test-request-500");
    const error = mine.find((e) => e.level === "error");
    expect(error).toMatchObject({ msg: "unexpected error", method: "GET", path: "/api/test-failure" });
    expect(error!.err).toMatchObject({ type: "Error", message: "secret detail of a bug" });
    expect(error!.err.stack).toContain("secret detail of a bug");
    expect(mine.find((e) => e.msg === "request")).toMatchObject({ status: 500, route: "/api/test-failure" });
  });
});

describe("log settings", () => {
  it("JSON in production and tests, pretty in development; LOG_PRETTY and LOG_LEVEL override", () => {
    expect(logSettings({ NODE_ENV: "production" })).toEqual({ level: "info", pretty: false });
    expect(logSettings({ NODE_ENV: "test" })).toEqual({ level: "warn", pretty: false });
    expect(logSettings({})).toEqual({ level: "info", pretty: true });
    expect(logSettings({ NODE_ENV: "development", LOG_PRETTY: "0" })).toEqual({ level: "info", pretty: false });
    expect(logSettings({ NODE_ENV: "production", LOG_PRETTY: "1", LOG_LEVEL: "debug" })).toEqual({ level: "debug", pretty: true });
    expect(() => logSettings({ LOG_LEVEL: "verbose" })).toThrow(/LOG_LEVEL must be one of/);
  });
});
