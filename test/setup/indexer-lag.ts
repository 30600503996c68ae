import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPublicClient, http } from "viem";
import { createDb } from "../../db/client.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { captureCpuProfile } from "./cpu-profile.js";

// How far the shared indexer falls behind the chains during a run. Most waits of the suite are on Ponder: when a
// wait times out, this log says whether the indexer had stalled then (and how loaded the machine was), instead of
// leaving it to guesswork. A line every second while some chain is more than LAGGING blocks behind, a summary at
// the end.

const LAGGING = 10;
const PROFILE_AT = 20;
const EVERY_MS = 1000;

export type LagMonitor = { stop(): Promise<string> };

/**
 * `inspectPort`: the indexer's inspector; the first time it stays more than PROFILE_AT blocks behind for 5 s, a CPU profile of 15 s
 * is written beside `logFile` (ponder-<time>.cpuprofile).
 */
export function monitorIndexerLag(env: Record<string, string>, logFile: string, inspectPort?: number): LagMonitor {
  const chains = Object.entries(env)
    .filter(([k]) => k.startsWith("RPC_URL_"))
    .map(([k, url]) => ({
      chainId: Number(k.slice("RPC_URL_".length)),
      client: createPublicClient({ transport: http(url, { timeout: 5000 }) }),
    }));
  const db = createDb({ url: env.DATABASE_URL!, viewsSchema: env.PONDER_VIEWS_SCHEMA, max: 1 });
  const worst = new Map<number, { lag: number; at: string }>();
  let laggingSeconds = 0;
  let profiling: Promise<void> | undefined;
  let laggingFor = 0;
  let stopped = false;
  const out = fs.createWriteStream(logFile, { flags: "a" });

  const sample = async () => {
    const progress = (await indexerProgress(db)) ?? [];
    const at = new Date().toISOString();
    const lags: { chainId: number; lag: number }[] = [];
    for (const c of chains) {
      const p = progress.find((x) => x.chainId === c.chainId);
      if (!p) continue;
      const lag = Number(await c.client.getBlockNumber({ cacheTime: 0 })) - p.indexedBlock;
      if (lag > (worst.get(c.chainId)?.lag ?? -1)) worst.set(c.chainId, { lag, at });
      lags.push({ chainId: c.chainId, lag });
    }
    // A test that mines blocks by hand makes a jump the indexer catches up on in a second or two: only a lag that
    // lasts is profiled.
    laggingFor = lags.some((l) => l.lag > PROFILE_AT) ? laggingFor + 1 : 0;
    if (inspectPort && !profiling && laggingFor >= 5) {
      const file = path.join(path.dirname(logFile), `ponder-${at.replace(/[:.]/g, "-")}.cpuprofile`);
      out.write(`${at} profiling the indexer for 15 s: ${file}\n`);
      profiling = captureCpuProfile(inspectPort, 15_000, file).catch((e) => void out.write(`profile failed: ${(e as Error).message}\n`));
    }
    if (lags.some((l) => l.lag > LAGGING)) {
      laggingSeconds += EVERY_MS / 1000;
      const load = os.loadavg().map((l) => l.toFixed(1));
      out.write(`${at} lag ${lags.map((l) => `${l.chainId}:${l.lag}`).join(" ")} load ${load.join(" ")}\n`);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      const t = Date.now();
      await sample().catch((e) => out.write(`${new Date().toISOString()} sample failed: ${(e as Error).message}\n`));
      await new Promise((r) => setTimeout(r, Math.max(0, EVERY_MS - (Date.now() - t))));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      await profiling;
      await db.close().catch(() => {});
      const summary =
        `indexer lag: ${[...worst].map(([id, w]) => `chain ${id} at most ${w.lag} blocks (${w.at})`).join(", ") || "not measured"}; ` +
        `more than ${LAGGING} blocks behind for ${laggingSeconds} s`;
      out.end(`${summary}\n`);
      await new Promise<void>((r) => out.on("close", () => r()));
      return summary;
    },
  };
}
