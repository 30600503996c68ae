import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { AppDeps } from "../core/deps.js";
import { collectProcessMetrics, registry } from "../core/metrics.js";
import { refreshGauges } from "../modules/metrics/index.js";

// /metrics with API_WORKERS (api/workers.ts: node:cluster, one port, several processes): a scrape reaches one
// worker, so that worker asks the primary, and the primary answers for the whole group: its own registry (the
// processors it runs, the scrape-time gauges it reads) and every live worker's, added up by prom-client's
// AggregatorRegistry (counters and histograms summed, gauges by their `aggregator`). One target in Prometheus
// is then the whole process group, whichever worker took the connection. Messages are plain IPC objects.

const ASK = "chainpay:metrics:ask"; // worker -> primary: the group's text, please
const ANSWER = "chainpay:metrics:answer"; // primary -> worker
const COLLECT = "chainpay:metrics:collect"; // primary -> every worker: your registry as JSON
const COLLECTED = "chainpay:metrics:collected"; // worker -> primary

/** A registry as JSON (`registry.getMetricsAsJSON()`), what AggregatorRegistry.aggregate adds up. */
type RegistryJson = object[];
type Message = { type?: string; id?: number; text?: string; error?: string; metrics?: RegistryJson };

const WAIT_MS = 4_000;
let nextId = 0;

/** Whether this process is a worker of a cluster (an API worker); its /metrics is then the primary's answer. */
export const inMetricsCluster = () => cluster.isWorker && typeof process.send === "function";

let joined = false;
/** In a worker: answers the primary's collections with this process's registry. Idempotent. */
export function joinMetricsCluster() {
  if (joined || !inMetricsCluster()) return;
  joined = true;
  collectProcessMetrics();
  process.on("message", (m: Message) => {
    if (m?.type !== COLLECT) return;
    void registry.getMetricsAsJSON().then(
      (metrics) => process.send!({ type: COLLECTED, id: m.id, metrics }),
      (e: Error) => process.send!({ type: COLLECTED, id: m.id, error: e.message }),
    );
  });
}

/** In a worker: the group's metrics text, from the primary. */
export function metricsFromPrimary(): Promise<string> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const done = (m: Message) => {
      if (m?.type !== ANSWER || m.id !== id) return;
      clearTimeout(timer);
      process.off("message", done);
      if (m.error !== undefined) reject(new Error(m.error));
      else resolve(m.text ?? "");
    };
    const timer = setTimeout(() => {
      process.off("message", done);
      reject(new Error("the primary process did not answer for the metrics"));
    }, WAIT_MS + 1_000);
    process.on("message", done);
    process.send!({ type: ASK, id });
  });
}

/** Every live worker's registry as JSON; a worker that does not answer within WAIT_MS is left out. */
function collectWorkers(): Promise<RegistryJson[]> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && w.isConnected());
  return Promise.all(
    workers.map(
      (w) =>
        new Promise<RegistryJson>((resolve) => {
          const id = nextId++;
          const done = (m: Message) => {
            if (m?.type !== COLLECTED || m.id !== id) return;
            finish(m.metrics ?? []);
          };
          const finish = (metrics: RegistryJson) => {
            clearTimeout(timer);
            w.off("message", done);
            resolve(metrics);
          };
          const timer = setTimeout(() => finish([]), WAIT_MS);
          w.on("message", done);
          w.send({ type: COLLECT, id });
        }),
    ),
  );
}

/**
 * This process's metrics, with the scrape-time gauges read now; in a primary with live workers, its own and every
 * worker's added up.
 */
export async function groupMetrics(deps: AppDeps): Promise<string> {
  collectProcessMetrics();
  await refreshGauges(deps);
  const workers = cluster.isPrimary ? await collectWorkers() : [];
  if (workers.length === 0) return registry.metrics();
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...workers]).metrics();
}

let serving = false;
/**
 * In the primary: answers workers' /metrics with the group's metrics. Harmless without workers (nothing asks);
 * idempotent.
 */
export function serveClusterMetrics(deps: AppDeps) {
  if (serving || !cluster.isPrimary) return;
  serving = true;
  cluster.on("message", (worker: Worker, m: Message) => {
    if (m?.type !== ASK) return;
    groupMetrics(deps).then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id: m.id, text }),
      (e: Error) => worker.isConnected() && worker.send({ type: ANSWER, id: m.id, error: e.message }),
    );
  });
}
