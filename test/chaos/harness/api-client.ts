export type ApiResponse = { status: number; body: any };

export type ApiCounters = {
  /** Requests that failed before any answer (connection refused, reset, timeout) or got a 5xx/429, and were sent again. */
  retries: number;
  /** Of those, the ones the server may have acted on (sent, but no answer, or a 500): a create may have left an orphan payment. */
  ambiguous: number;
  /** Why calls were retried: HTTP status or error code, with counts. */
  causes: Record<string, number>;
};

export const newCounters = (): ApiCounters => ({ retries: 0, ambiguous: 0, causes: {} });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function errorCode(e: unknown): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string } };
  return err?.cause?.code ?? err?.code ?? err?.name ?? "unknown";
}

/**
 * The merchant's HTTP client: every call is retried while the API is down, restarting or answering
 * 5xx/429, up to `giveUpMs`. A connection refused never reached the server; anything else without an
 * answer (reset, timeout) may have been processed, which is counted.
 */
export function apiClient(baseUrl: string, counters: ApiCounters, giveUpMs = 240_000) {
  return async function call(method: string, path: string, opts: { apiKey?: string; body?: unknown } = {}): Promise<ApiResponse> {
    const t0 = Date.now();
    let backoff = 200;
    for (;;) {
      let retryAfterMs = 0;
      let cause = "";
      try {
        const headers: Record<string, string> = {};
        if (opts.apiKey) headers["x-api-key"] = opts.apiKey;
        if (opts.body !== undefined) headers["content-type"] = "application/json";
        const res = await fetch(baseUrl + path, {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        if (res.status < 500 && res.status !== 429) return { status: res.status, body };
        cause = String(res.status);
        if (res.status === 429) retryAfterMs = Number(res.headers.get("retry-after") ?? 1) * 1000;
        // 503 is a refusal (a price or a dependency unavailable); a 500 may come after a commit it could not report.
        else if (res.status !== 503) counters.ambiguous++;
      } catch (e) {
        cause = errorCode(e);
        if (cause !== "ECONNREFUSED") counters.ambiguous++;
      }
      counters.causes[cause] = (counters.causes[cause] ?? 0) + 1;
      counters.retries++;
      if (Date.now() - t0 > giveUpMs) throw new Error(`${method} ${path}: no answer after ${giveUpMs} ms`);
      await sleep(Math.max(retryAfterMs, backoff));
      backoff = Math.min(backoff * 2, 2000);
    }
  };
}
export type ApiCall = ReturnType<typeof apiClient>;
