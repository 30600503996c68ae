import http from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedRequest = { method: string; path: string; headers: http.IncomingHttpHeaders };
/** An answer, or `hang`: no answer ever (until the client gives up or the server closes). */
export type ScriptedReply = { status: number; body?: string; headers?: Record<string, string> } | "hang";

/**
 * A real HTTP server on 127.0.0.1 (a free port) that answers each request as the test scripts it: any status and raw
 * body (malformed ones included), or no answer at all. It records every request (method, path with query, headers)
 * and counts the hung requests whose client closed the connection (`abandoned`): what a client's timeout does.
 *
 *   const srv = await startScriptedHttpServer(() => ({ status: 200, body: "{not json" }));
 *   srv.setReply(() => "hang");
 */
export async function startScriptedHttpServer(reply: (req: ScriptedRequest) => ScriptedReply = () => ({ status: 200, body: "{}" })) {
  let script = reply;
  const requests: ScriptedRequest[] = [];
  const hung = new Set<http.ServerResponse>();
  let abandoned = 0;
  let closing = false;
  const waiters: { n: number; resolve: () => void }[] = [];

  const server = http.createServer((req, res) => {
    const r: ScriptedRequest = { method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers };
    requests.push(r);
    const answer = script(r);
    if (answer === "hang") {
      hung.add(res);
      res.on("close", () => {
        hung.delete(res);
        if (closing) return;
        abandoned++;
        for (const w of [...waiters]) {
          if (abandoned < w.n) continue;
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      });
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    res.end(answer.body ?? "");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    /** `http://127.0.0.1:<port>`. */
    origin: `http://127.0.0.1:${port}`,
    requests,
    /** Hung requests the client has given up on (closed its connection). */
    get abandoned() {
      return abandoned;
    },
    setReply(next: (req: ScriptedRequest) => ScriptedReply) {
      script = next;
    },
    /** Resolves once `n` hung requests were given up by their client; rejects after `timeoutMs` saying how many were. */
    whenAbandoned(n: number, timeoutMs = 10_000) {
      if (abandoned >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`scripted server: ${abandoned} of ${n} hung request(s) abandoned by the client after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close() {
      closing = true;
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type ScriptedHttpServer = Awaited<ReturnType<typeof startScriptedHttpServer>>;
