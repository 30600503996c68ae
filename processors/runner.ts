import type { AppDeps } from "../core/deps.js";
import { logger, type Logger } from "../core/log.js";
import { processorLastPass, processorPassDuration, processorPassErrors } from "../core/metrics.js";
import { indexerProgress } from "../db/indexer-status.js";
import { writeProcessorState } from "../db/processor-state.js";

/**
 * A background job: `run` does one pass and must be safe to repeat (crash, replica, restart).
 * `needsIndexer`: reads Ponder's tables, so it waits until Ponder has published its views.
 * `wake`: passes start early on a notification instead of waiting out the interval.
 * `close`: releases what the processor holds (HTTP agents...) once its runner has stopped.
 */
export type Processor = {
  name: string;
  /** Pause between passes (ms); a function reads it from the configuration. */
  intervalMs: number | ((deps: AppDeps) => number);
  needsIndexer?: boolean;
  /**
   * Subscribes to what should start the next pass early (a NOTIFY): `wakeUp` cuts the pause short,
   * or makes the next pass follow at once when it comes during a pass. Returns the unsubscribe.
   * `intervalMs` stays the fallback, so a lost notification only delays.
   */
  wake?(deps: AppDeps, wakeUp: () => void, log: (msg: string) => void): () => void | Promise<void>;
  run(deps: AppDeps): Promise<void>;
  close?(): Promise<void>;
};

/**
 * Every processor is made the same way: its file exports a factory that returns
 * `defineProcessor({...})`, so per-instance state (caches, HTTP agents) is never shared by two runners.
 */
export function defineProcessor<P extends Processor>(p: P): P {
  return p;
}

export type ProcessorRunner = { stop(): Promise<void>; runOnce(name?: string): Promise<void> };

/**
 * A pause that ends after `ms`, at `stop()`, or when woken; a wake-up during a pass skips the next pause. The runner
 * stops every pauser from one abort listener of its own: a listener per sleeping loop on the shared signal was one
 * more than Node's limit of 10 with the 12 processors of `npm start` (MaxListenersExceededWarning).
 */
function pauser() {
  let woken = false;
  let stopped = false;
  let cut: (() => void) | null = null;
  return {
    wakeUp() {
      woken = true;
      cut?.();
    },
    stop() {
      stopped = true;
      cut?.();
    },
    /** Forget wake-ups older than the pass about to start. */
    startPass() {
      woken = false;
    },
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        if (woken || stopped) return resolve();
        const done = () => {
          clearTimeout(t);
          cut = null;
          resolve();
        };
        const t = setTimeout(done, ms);
        cut = done;
      }),
  };
}

const intervalOf = (p: Processor, deps: AppDeps) => (typeof p.intervalMs === "function" ? p.intervalMs(deps) : p.intervalMs);

/** The processor's last pass (its error, if any) and its interval, from which GET /health bounds its next one. */
async function heartbeat(deps: AppDeps, p: Processor, error?: string) {
  await writeProcessorState(deps.db.pool, `heartbeat:${p.name}`, { error: error ?? null, intervalMs: intervalOf(p, deps) }).catch(() => {});
}

/**
 * Where the runner reports: a pino logger (default: the process's, each line with `processor`), or a function
 * taking one text line per event (`[name] what: stack`), as tests use to collect or silence them.
 */
export type RunnerLog = Logger | ((msg: string) => void);

type Report = {
  /** A failed step of processor `name` (a pass, its wake subscription, its close). */
  error(name: string, what: string, e: unknown): void;
  /** The `log` given to a processor's `wake` (its listener's reconnects). */
  forWake(name: string): (msg: string) => void;
};

function reporter(log: RunnerLog): Report {
  if (typeof log === "function")
    return {
      error: (name, what, e) => log(`[${name}]${what === "pass" ? "" : ` ${what}:`} ${(e as Error)?.stack ?? e}`),
      forWake: (name) => (msg) => log(`[${name}] ${msg}`),
    };
  const of = (name: string) => log.child({ processor: name });
  return {
    error: (name, what, e) => of(name).error({ err: e }, `${what} failed`),
    forWake: (name) => {
      const l = of(name);
      return (msg) => l.warn(msg);
    },
  };
}

/**
 * Runs each processor in its own loop until stopped; one failing pass is logged and retried next interval.
 * Each pass is timed (chainpay_processor_pass_duration_seconds) and its failures counted, by processor.
 */
export function startProcessors(deps: AppDeps, processors: Processor[], log: RunnerLog = logger("processors")): ProcessorRunner {
  const report = reporter(log);
  const abort = new AbortController();
  const running = new Map<string, Promise<void>>();
  let indexerReady = false;
  const pass = async (p: Processor) => {
    if (p.needsIndexer && !indexerReady) {
      indexerReady = (await indexerProgress(deps.db).catch(() => null)) !== null;
      if (!indexerReady) return;
    }
    const started = performance.now();
    try {
      await p.run(deps);
      await heartbeat(deps, p);
    } catch (e) {
      processorPassErrors.labels(p.name).inc();
      report.error(p.name, "pass", e);
      await heartbeat(deps, p, (e as Error).message);
    } finally {
      processorPassDuration.labels(p.name).observe((performance.now() - started) / 1000);
      processorLastPass.labels(p.name).set(Date.now() / 1000);
    }
  };
  const pausers = processors.map(() => pauser());
  abort.signal.addEventListener("abort", () => pausers.forEach((p) => p.stop()), { once: true });
  const loops = processors.map(async (p, i) => {
    const pause = pausers[i]!;
    let unsubscribe: (() => void | Promise<void>) | undefined;
    try {
      unsubscribe = p.wake?.(deps, () => pause.wakeUp(), report.forWake(p.name));
    } catch (e) {
      report.error(p.name, "wake", e); // polls only
    }
    try {
      while (!abort.signal.aborted) {
        pause.startPass();
        const current = pass(p);
        running.set(p.name, current);
        await current;
        await pause.sleep(intervalOf(p, deps));
      }
    } finally {
      await (async () => unsubscribe?.())().catch((e) => report.error(p.name, "wake", e));
    }
  });
  return {
    /** Stops every loop after its current pass, then closes the processors. */
    async stop() {
      abort.abort();
      await Promise.all(loops);
      for (const p of processors) await p.close?.().catch((e) => report.error(p.name, "close", e));
    },
    /** One pass now (tests drive processors deterministically with this). */
    async runOnce(name) {
      for (const p of processors)
        if (!name || p.name === name) {
          await running.get(p.name);
          await pass(p);
        }
    },
  };
}
