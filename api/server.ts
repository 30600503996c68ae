import { serve, type ServerType } from "@hono/node-server";
import type { AppDeps } from "../core/deps.js";
import { payAssets } from "../web/pay/assets.js";
import { createApp } from "./app.js";

export async function startApiServer(
  deps: AppDeps,
  port = deps.config.PORT,
  hostname = deps.config.HOST,
): Promise<{ server: ServerType; port: number; close(): Promise<void> }> {
  const app = createApp(deps);
  // Build the payer page's assets now: a broken bundler fails the start, not the first payer.
  await payAssets();
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      resolve({
        server,
        port: info.port,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}
