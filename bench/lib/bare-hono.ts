// The baseline of bench/creation.ts: a bare Hono route that parses the same JSON body as POST /api/payments and
// answers `{url}` without a database, RPC or rate limits. `WORKERS` processes share the port (node:cluster) as
// the service's API_WORKERS do, so both sides of a ratio use the same number of processes.
//   PORT=3999 WORKERS=1 node --import tsx bench/lib/bare-hono.ts
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const port = Number(process.env.PORT);
const workers = Number(process.env.WORKERS ?? 1);

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on("SIGTERM", () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    process.exit(0);
  });
} else {
  const app = new Hono().post("/api/payments", async (c) => {
    const body = (await c.req.json()) as Record<string, unknown>;
    if (typeof body.amount !== "string" || typeof body.merchant !== "string") return c.json({ error: "Invalid form data" }, 400);
    return c.json({ url: `http://127.0.0.1:${port}/pay/${randomUUID()}` });
  });
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
}
