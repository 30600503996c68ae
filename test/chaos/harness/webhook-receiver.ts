import { createHash } from "node:crypto";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedCert } from "../../modules/webhooks/helpers/tls.js";
import type { Rng } from "./rng.js";

export type Delivery = {
  webhookId: string;
  path: string;
  event: string;
  paymentId: string;
  /** Requests received for this webhook-id. */
  requests: number;
  /** Requests we answered 2xx (the response fully written): more than one is a duplicate delivered. */
  delivered: number;
  badSignatures: number;
};

export type ReceiverBehaviour = {
  /** Share of requests answered 500. */
  failRate: number;
  /** Share of requests answered only after `slowMs`. */
  slowRate: number;
  slowMs: [number, number];
};

/**
 * The merchants' HTTPS endpoint (self-signed certificate, trusted by the processors through
 * NODE_EXTRA_CA_CERTS). It answers some requests 500 and some slowly, as a real merchant server would,
 * and records every webhook by its `webhook-id`, checking `X-Signature` with the merchant's secret.
 */
export async function startWebhookReceiver(rng: Rng, behaviour: ReceiverBehaviour) {
  const tls = selfSignedCert();
  const byId = new Map<string, Delivery>();
  const secrets = new Map<string, string>();
  let mode = { ...behaviour };
  let gate: { promise: Promise<void>; release: () => void } | null = null;
  let inFlight = 0;
  let total = 0;
  let answered500 = 0;
  const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const server = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      total++;
      inFlight++;
      try {
        const raw = Buffer.concat(chunks).toString("utf8");
        const path = (req.url ?? "/").split("?")[0]!;
        const webhookId = String(req.headers["webhook-id"] ?? "");
        let body: { event?: string; paymentId?: string } = {};
        try {
          body = JSON.parse(raw);
        } catch {
          // recorded with empty fields: the check of expected events finds it missing
        }
        let d = byId.get(webhookId);
        if (!d) {
          d = { webhookId, path, event: body.event ?? "", paymentId: body.paymentId ?? "", requests: 0, delivered: 0, badSignatures: 0 };
          byId.set(webhookId, d);
        }
        d.requests++;
        const secret = secrets.get(path);
        const expected = secret
          ? createHash("sha256")
              .update(raw + secret)
              .digest("hex")
          : null;
        if (expected === null || req.headers["x-signature"] !== expected) {
          d.badSignatures++;
          res.writeHead(401).end("bad signature");
          return;
        }
        // Held requests wait for release() (15 s at most: the dispatcher's own timeout is 30 s).
        if (gate) await Promise.race([gate.promise, delay(15_000)]);
        else if (rng.chance(mode.slowRate)) await delay(rng.int(mode.slowMs[0], mode.slowMs[1]));
        if (rng.chance(mode.failRate)) {
          answered500++;
          res.writeHead(500, { "content-type": "text/plain" }).end("chaos: try again");
          return;
        }
        const delivery = d;
        res.writeHead(200, { "content-type": "text/plain" });
        // Counted only once the response has left: a dispatcher killed before that never saw a 2xx.
        res.end("ok", () => void delivery.delivered++);
      } finally {
        inFlight--;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    ca: tls.cert,
    urlFor: (path: string) => `https://127.0.0.1:${port}${path}`,
    registerSecret: (path: string, secret: string) => void secrets.set(path, secret),
    deliveries: () => [...byId.values()],
    inFlight: () => inFlight,
    stats: () => ({ requests: total, answered500 }),
    /** Requests are held unanswered until release(). */
    hold() {
      if (gate) return;
      let release = () => {};
      const promise = new Promise<void>((r) => (release = r));
      gate = { promise, release };
    },
    /** Answers every held request (as the behaviour says) and stops holding. */
    release() {
      gate?.release();
      gate = null;
    },
    /** Requests answered 2xx so far (responses fully written). */
    deliveredCount: () => [...byId.values()].reduce((s, d) => s + d.delivered, 0),
    /** From now on: always 200 at once (the drain period). */
    heal() {
      gate?.release();
      gate = null;
      mode = { failRate: 0, slowRate: 0, slowMs: [0, 0] };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
