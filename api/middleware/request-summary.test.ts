import { afterEach, describe, expect, it, vi } from "vitest";
import { Hono } from "hono";
import { createLogger, type LogLevel } from "../../core/log.js";
import { loadConfig } from "../../core/config.js";
import { observe } from "./observe.js";
import { RequestTally, startRequestSummary, summaryLine } from "./request-summary.js";

// The request summary of `npm start` (REQUEST_LOG_SUMMARY_S): each request counted by status class, the slowest kept,
// one info line a window, none for a quiet window; the access lines themselves at REQUEST_LOG_LEVEL.

const lines = () => {
  const out: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info" }, { write: (chunk: string) => void out.push(JSON.parse(chunk)) });
  return { out, log };
};

afterEach(() => vi.useRealTimers());

describe("RequestTally", () => {
  it("counts a window by status class, keeps its slowest request, and starts a new window at each take", () => {
    let now = 1_000_000;
    const tally = new RequestTally(() => now);
    tally.record("GET", "/api/health", 200, 3.2);
    tally.record("GET", "/api/v1/events", 200, 12.5);
    tally.record("POST", "/api/payments", 400, 8);
    tally.record("POST", "/api/payments", 201, 41.26);
    tally.record("GET", "/*", 404, 0.4);
    tally.record("GET", "/api/health", 503, 2);
    now += 60_000;
    const s = tally.take()!;
    expect(s).toEqual({
      windowS: 60,
      count: 6,
      byStatus: { "2xx": 3, "4xx": 2, "5xx": 1 },
      slowest: { method: "POST", route: "/api/payments", status: 201, ms: 41.26 },
    });
    expect(Object.keys(s.byStatus)).toEqual(["2xx", "4xx", "5xx"]);
    expect(summaryLine(s)).toBe("requests in the last 60 s: 6 (2xx 3, 4xx 2, 5xx 1); slowest POST /api/payments 41.3 ms");

    // A quiet window: nothing to say.
    now += 60_000;
    expect(tally.take()).toBeNull();
    now += 30_000;
    tally.record("GET", "/api/health", 200, 1);
    now += 30_000;
    // The window runs from the last take, quiet or not.
    expect(tally.take()).toMatchObject({ windowS: 60, count: 1, byStatus: { "2xx": 1 } });
  });

  it("is logged at info once an interval, with its fields under requestSummary; stop() logs the partial window", () => {
    vi.useFakeTimers();
    const { out, log } = lines();
    const tally = new RequestTally();
    const summary = startRequestSummary(log, tally, 60_000);
    vi.advanceTimersByTime(60_000);
    expect(out).toHaveLength(0);
    tally.record("GET", "/api/health", 200, 5);
    tally.record("GET", "/api/health", 200, 7);
    vi.advanceTimersByTime(60_000);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      level: "info",
      msg: "requests in the last 60 s: 2 (2xx 2); slowest GET /api/health 7 ms",
      requestSummary: { windowS: 60, count: 2, byStatus: { "2xx": 2 }, slowest: { route: "/api/health", ms: 7 } },
    });
    tally.record("POST", "/api/payments", 200, 9);
    vi.advanceTimersByTime(10_000);
    summary.stop();
    expect(out).toHaveLength(2);
    expect(out[1]).toMatchObject({ requestSummary: { windowS: 10, count: 1 } });
    vi.advanceTimersByTime(120_000);
    expect(out).toHaveLength(2);
  });
});

describe("observe: the access line's level and the tally", () => {
  const appWith = (level: LogLevel | undefined, tally?: RequestTally) => {
    const { out, log } = lines();
    const app = new Hono();
    app.use(observe(log, { level, tally }) as never);
    app.get("/ok", (c) => c.text("ok"));
    return { app, out };
  };

  it("logs each request at info by default, at debug when asked (dropped by an info logger), and counts it", async () => {
    const atInfo = appWith(undefined);
    await atInfo.app.request("/ok");
    expect(atInfo.out).toMatchObject([{ level: "info", msg: "request", route: "/ok", status: 200 }]);

    const tally = new RequestTally();
    const atDebug = appWith("debug", tally);
    await atDebug.app.request("/ok");
    await atDebug.app.request("/missing");
    expect(atDebug.out).toEqual([]);
    expect(tally.take()).toMatchObject({ count: 2, byStatus: { "2xx": 1, "4xx": 1 } });
  });

  it("REQUEST_LOG_LEVEL and REQUEST_LOG_SUMMARY_S: info and no summary unless set (npm start sets debug and 60)", () => {
    expect(loadConfig({})).toMatchObject({ REQUEST_LOG_LEVEL: "info", REQUEST_LOG_SUMMARY_S: 0 });
    expect(loadConfig({ REQUEST_LOG_LEVEL: "debug", REQUEST_LOG_SUMMARY_S: "60" })).toMatchObject({
      REQUEST_LOG_LEVEL: "debug",
      REQUEST_LOG_SUMMARY_S: 60,
    });
    expect(() => loadConfig({ REQUEST_LOG_LEVEL: "verbose" })).toThrow();
  });
});
