import { serve, type ServerType } from "@hono/node-server";
import type { AppDeps } from "../core/deps.js";
import { createApp } from "./app.js";

export function startApiServer(
  deps: AppDeps,
  port = deps.config.PORT,
  hostname = deps.config.HOST,
): Promise<{ server: ServerType; port: number; close(): Promise<void> }> {
  const app = createApp(deps);
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
