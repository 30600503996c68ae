import https from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedCert } from "./tls.js";

export type Received = { headers: Record<string, string>; rawBody: string; path: string; at: number };
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | "hang";
export type Responder = (req: Received, index: number) => Reply | Promise<Reply>;

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a self-signed certificate. It records every request
 * (raw body bytes as text, lower-cased headers) and answers with `responder` (default 200 "ok").
 * Pass `cert` to share one certificate between receivers (one CA to trust).
 */
export async function startReceiver(opts: { responder?: Responder; cert?: { key: string; cert: string } } = {}) {
  const tls = opts.cert ?? selfSignedCert();
  const received: Received[] = [];
  let responder: Responder = opts.responder ?? (() => ({ status: 200, body: "ok" }));
  const hanging = new Set<import("node:http").ServerResponse>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const r: Received = {
        headers: req.headers as Record<string, string>,
        rawBody: Buffer.concat(chunks).toString("utf8"),
        path: req.url ?? "/",
        at: Date.now(),
      };
      const index = received.push(r) - 1;
      for (const w of [...waiters])
        if (received.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      const reply = await responder(r, index);
      if (reply === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers });
      res.end(reply.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    port,
    ca: tls.cert,
    cert: tls,
    received,
    setResponder(r: Responder) {
      responder = r;
    },
    /**
     * Resolves once `n` requests have arrived; rejects after `timeoutMs` (default 30 s) saying how many did, so a
     * delivery that never comes fails the test with a reason instead of running into the test's own timeout.
     */
    waitFor(n: number, timeoutMs = 30_000) {
      if (received.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`receiver: waited ${timeoutMs} ms for ${n} request(s), received ${received.length}`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
