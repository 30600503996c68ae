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
  /** Forks no more: a worker that exits from now on (a signal to the whole group) is not replaced. */
  release(): void;
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

  const stop = async (graceMs = 25_000) => {
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
  };

  try {
    await Promise.all(Array.from({ length: count }, fork));
  } catch (e) {
    // A worker that cannot start: stop the others (and fork no more) before the caller gives up.
    await stop(5_000);
    throw e;
  }
  return {
    pids: () => [...live].map((w) => w.process.pid!).filter(Boolean),
    /** Forks no more (a worker exiting from now on is not replaced); call first when shutting down. */
    release: () => void (stopping = true),
    stop,
  };
}
