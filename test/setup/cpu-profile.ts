import fs from "node:fs";
import { WebSocket } from "undici";

// A CPU profile of a Node process through its inspector (`--inspect`), for a stall seen during the test run: the
// profile (Chrome DevTools' .cpuprofile format) says what the process was busy with.

/** Profiles the process whose inspector listens on `port` for `ms`, and writes the profile to `file`. */
export async function captureCpuProfile(port: number, ms: number, file: string): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error("inspector connection failed")));
  });
  let next = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await call("Profiler.enable");
    await call("Profiler.setSamplingInterval", { interval: 1000 });
    await call("Profiler.start");
    await new Promise((r) => setTimeout(r, ms));
    const { profile } = (await call("Profiler.stop")) as { profile: unknown };
    fs.writeFileSync(file, JSON.stringify(profile));
  } finally {
    ws.close();
  }
}
