import { serve, type ServerType } from "@hono/node-server";
import type { AppDeps } from "../core/deps.js";
import { logger } from "../core/log.js";
import { payAssets } from "../web/pay/assets.js";
import { createApp } from "./app.js";
import { RequestTally, startRequestSummary } from "./middleware/request-summary.js";

export async function startApiServer(
  deps: AppDeps,
  port = deps.config.PORT,
  hostname = deps.config.HOST,
): Promise<{ server: ServerType; port: number; close(): Promise<void> }> {
  // REQUEST_LOG_SUMMARY_S: a line at info every so often counting this process's requests (`npm start`: each minute,
  // the access lines themselves at debug).
  const summaryMs = (deps.config.REQUEST_LOG_SUMMARY_S ?? 0) * 1000;
  const tally = summaryMs > 0 ? new RequestTally() : undefined;
  const app = createApp(deps, { tally });
  // Build the payer page's assets now: a broken bundler fails the start, not the first payer.
  await payAssets();
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      const summary = tally && startRequestSummary(logger("api"), tally, summaryMs);
      resolve({
        server,
        port: info.port,
        close: () =>
          new Promise<void>((r) =>
            server.close(() => {
              summary?.stop();
              r();
            }),
          ),
      });
    });
  });
}
