import type { Logger } from "../../core/log.js";

/** One window's requests: how many, by status class, and the slowest (by method and route pattern). */
export type RequestSummary = {
  windowS: number;
  count: number;
  /** `2xx`, `4xx`, … → requests; only classes seen. */
  byStatus: Record<string, number>;
  slowest: { method: string; route: string; status: number; ms: number };
};

/**
 * Counts the API's requests between two `take()`s for a summary line (REQUEST_LOG_SUMMARY_S): `npm start` logs each
 * request at debug and this once a minute at info, so health polls and `listen`'s poll do not fill the terminal.
 *
 * @example
 * const tally = new RequestTally(() => Date.now());
 * tally.record("GET", "/api/health", 200, 3.2);
 * tally.take(); // { windowS: …, count: 1, byStatus: { "2xx": 1 }, slowest: { method: "GET", route: "/api/health", status: 200, ms: 3.2 } }
 */
export class RequestTally {
  private count = 0;
  private byStatus: Record<string, number> = {};
  private slowest: RequestSummary["slowest"] | null = null;
  private since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  record(method: string, route: string, status: number, ms: number): void {
    this.count++;
    const cls = `${Math.floor(status / 100)}xx`;
    this.byStatus[cls] = (this.byStatus[cls] ?? 0) + 1;
    if (!this.slowest || ms > this.slowest.ms) this.slowest = { method, route, status, ms };
  }

  /** The window since the last take (null when it saw no request), and a new window from now. */
  take(): RequestSummary | null {
    const at = this.now();
    const summary: RequestSummary | null = this.slowest
      ? {
          windowS: Math.round((at - this.since) / 1000),
          count: this.count,
          byStatus: Object.fromEntries(Object.entries(this.byStatus).sort(([a], [b]) => a.localeCompare(b))),
          slowest: this.slowest,
        }
      : null;
    this.count = 0;
    this.byStatus = {};
    this.slowest = null;
    this.since = at;
    return summary;
  }
}

/** `requests in the last 60 s: 42 (2xx 41, 4xx 1); slowest POST /api/payments 38.1 ms` */
export function summaryLine(s: RequestSummary): string {
  const classes = Object.entries(s.byStatus)
    .map(([cls, n]) => `${cls} ${n}`)
    .join(", ");
  return (
    `requests in the last ${s.windowS} s: ${s.count} (${classes}); ` +
    `slowest ${s.slowest.method} ${s.slowest.route} ${Math.round(s.slowest.ms * 10) / 10} ms`
  );
}

/**
 * Logs `tally`'s summary at info every `intervalMs` (nothing for a window without requests), as
 * `{"requestSummary":{…},"msg":"requests in the last 60 s: …"}`; the timer never keeps the process alive.
 * `stop()` ends it and logs the last partial window.
 */
export function startRequestSummary(log: Logger, tally: RequestTally, intervalMs: number): { stop(): void } {
  const flush = () => {
    const s = tally.take();
    if (s) log.info({ requestSummary: s }, summaryLine(s));
  };
  const timer = setInterval(flush, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
