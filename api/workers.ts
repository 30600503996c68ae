import cluster, { type Worker } from "node:cluster";

/**
 * API_WORKERS: the API served by several processes on one port (node:cluster: the primary owns the listening
 * socket and hands connections to the workers in turn). Every limit and cache that must be shared lives in
 * Postgres, so workers share nothing else. The primary runs the other roles (processors, indexer) and the
 * migrations, forks the workers after them, and restarts a worker that dies (at most one restart a second).
 */

/** Set in the workers' environment: this process serves the API only. */
const WORKER_ENV = "CHAINPAY_API_WORKER";

/** Whether this process is one of the API workers forked by forkApiWorkers. */
export function isApiWorker(): boolean {
  return cluster.isWorker && process.env[WORKER_ENV] === "1";
}

export type ApiWorkers = {
  /** Stops every worker (SIGTERM, then SIGKILL after `graceMs`) and forks no more. */
  stop(graceMs?: number): Promise<void>;
  /** The workers' pids. */
  pids(): number[];
};

/**
 * Forks `count` API workers, each running this same entry script with CHAINPAY_API_WORKER=1; resolves once all
 * listen. `log` hears of exits and restarts.
 *
 * @example
 * const workers = await forkApiWorkers(4, (m) => logger.info(m));
 * process.on("SIGTERM", () => workers.stop());
 */
export async function forkApiWorkers(count: number, log: (msg: string) => void): Promise<ApiWorkers> {
  let stopping = false;
  let lastRestart = 0;
  const live = new Set<Worker>();

  const fork = () =>
    new Promise<void>((resolve, reject) => {
      const w = cluster.fork({ [WORKER_ENV]: "1" });
      live.add(w);
      let listening = false;
      w.once("listening", () => {
        listening = true;
        resolve();
      });
      w.once("exit", (code, signal) => {
        live.delete(w);
        if (!listening) reject(new Error(`API worker ${w.process.pid} exited before listening (${signal ?? code})`));
        if (stopping) return;
        log(`API worker ${w.process.pid} exited (${signal ?? code}); restarting`);
        const wait = Math.max(0, lastRestart + 1000 - Date.now());
        lastRestart = Date.now() + wait;
        setTimeout(() => {
          if (!stopping) fork().catch((e: Error) => log(e.message));
        }, wait);
      });
    });

  await Promise.all(Array.from({ length: count }, fork));
  return {
    pids: () => [...live].map((w) => w.process.pid!).filter(Boolean),
    async stop(graceMs = 25_000) {
      stopping = true;
      await Promise.all(
        [...live].map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              const kill = setTimeout(() => w.process.kill("SIGKILL"), graceMs);
              w.once("exit", () => {
                clearTimeout(kill);
                resolve();
              });
              w.process.kill("SIGTERM");
            }),
        ),
      );
    },
  };
}
