import type { ChaosStack } from "./chaos-stack.js";
import type { Rng } from "./rng.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

export type Target = "indexer" | "processors" | "api";
export type Fault =
  /** midBatch: the kill waits for webhook requests in flight; "held" kills while they wait for an answer, "answering" just after they are answered (before the dispatcher can record them: duplicates). */
  | { kind: "kill"; target: Target; atMs: number; midBatch: false | "held" | "answering" }
  | { kind: "postgres-restart"; atMs: number; downMs: number }
  | { kind: "rpc-outage"; atMs: number; ms: number };

export type FaultLogEntry = { atMs: number; endMs: number; what: string };

export type FaultCounts = { kills: Record<Target, number> };

/** Where faults land, as fractions of the window; the first processors kill lands in EARLY_KILL. */
export const FAULT_WINDOW = { from: 0.08, to: 0.85 } as const;
export const EARLY_KILL = { from: 0.2, to: 0.35 } as const;

/**
 * The seeded fault plan: `kills` SIGKILLs of each target at random moments of the window, one Postgres
 * restart, one 10 s RPC outage, at least `minGapMs` apart so each is its own event. Some processor
 * kills are "mid-batch": they wait for webhooks in flight at the receiver (held slow) and land then.
 */
export function planFaults(rng: Rng, o: { windowMs: number; kills: Record<Target, number>; minGapMs: number }): Fault[] {
  const slots: number[] = [];
  // Picks among the moments (every 50 ms) still free of the others, so a feasible plan never fails, however crowded.
  const take = (range: { from: number; to: number } = FAULT_WINDOW) => {
    const open: number[] = [];
    for (let t = Math.round(o.windowMs * range.from); t <= Math.round(o.windowMs * range.to); t += 50)
      if (slots.every((s) => Math.abs(s - t) >= o.minGapMs)) open.push(t);
    if (open.length === 0) throw new Error("fault window too small for the plan");
    const t = rng.pick(open);
    slots.push(t);
    return t;
  };
  const faults: Fault[] = [];
  // Half the processor kills (at least one) wait for deliveries in flight. The first of them lands early in the
  // window (completions flow by then): the rows it held stay leased 3 minutes, which bounds the drain. It has the
  // narrowest range, so it is placed before the others can crowd it out.
  const midBatch = Math.ceil(o.kills.processors / 2);
  for (let i = 0; i < o.kills.processors; i++)
    faults.push({
      kind: "kill",
      target: "processors",
      atMs: i === 0 ? take(EARLY_KILL) : take(),
      midBatch: i >= midBatch ? false : i % 2 === 0 ? "held" : "answering",
    });
  faults.push({ kind: "postgres-restart", atMs: take(), downMs: rng.int(2000, 5000) });
  faults.push({ kind: "rpc-outage", atMs: take(), ms: 10_000 });
  for (const target of ["indexer", "api"] as const)
    for (let i = 0; i < o.kills[target]; i++) faults.push({ kind: "kill", target, atMs: take(), midBatch: false });
  return faults.sort((a, b) => a.atMs - b.atMs);
}

export function describeFault(f: Fault): string {
  if (f.kind === "kill")
    return `SIGKILL ${f.target}${f.midBatch === "held" ? " (mid-batch, responses held)" : f.midBatch ? " (mid-batch, as they are answered)" : ""}`;
  if (f.kind === "postgres-restart") return `postgres restart (down ${f.downMs} ms)`;
  return `RPC refuses connections for ${f.ms} ms`;
}

export type FaultRun = {
  log: FaultLogEntry[];
  /** Per processors kill: webhook deliveries the killed dispatcher had claimed and not recorded (left under its lease). */
  leftLeased: number[];
  /** When the last fault ended (ms since epoch). */
  endedAt: number;
};

/** Runs the plan against the stack, in order, each at its moment after `t0` (or at once when late). */
export async function runFaults(o: {
  stack: ChaosStack;
  receiver: WebhookReceiver;
  faults: Fault[];
  t0: number;
  /** Deliveries under a lease now, as `id@lease end` (null when the database cannot say). */
  leasedDeliveries: () => Promise<string[] | null>;
  log: (m: string) => void;
}): Promise<FaultRun> {
  const run: FaultRun = { log: [], leftLeased: [], endedAt: Date.now() };
  const targets = { indexer: o.stack.indexer, processors: o.stack.processors, api: o.stack.api };
  // Leases seen at earlier kills (a lease outlives its dispatcher by up to 3 minutes): not this kill's.
  const seenLeases = new Set<string>();
  for (const f of o.faults) {
    const wait = o.t0 + f.atMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const start = Date.now();
    let what = describeFault(f);
    if (f.kind === "kill") {
      const proc = targets[f.target];
      await proc.whenRunning();
      if (f.midBatch) {
        // Hold every webhook response, wait for some to be in flight, then kill the dispatcher's process:
        // while they wait, or right after they are answered (delivered, not yet recorded).
        o.receiver.hold();
        const deadline = Date.now() + 30_000;
        while (o.receiver.inFlight() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const inFlight = o.receiver.inFlight();
        const before = o.receiver.deliveredCount();
        if (f.midBatch === "answering") {
          o.receiver.release();
          await new Promise((r) => setImmediate(r)); // the answers are written; the dispatcher is reading them
        }
        await proc.kill();
        const answered = o.receiver.deliveredCount() - before;
        o.receiver.release();
        what += `: ${inFlight} webhook request(s) in flight, ${answered} answered 2xx around the kill`;
      } else await proc.kill();
      if (f.target === "processors") {
        // Before the supervisor's restart (1 s) brings a new dispatcher: every new lease now is the dead one's.
        const leases = await o.leasedDeliveries().catch(() => null);
        const fresh = leases?.filter((l) => !seenLeases.has(l));
        leases?.forEach((l) => seenLeases.add(l));
        if (fresh) run.leftLeased.push(fresh.length);
        what += `; ${fresh?.length ?? "?"} deliveries left under the dead dispatcher's lease`;
      }
    } else if (f.kind === "postgres-restart") await o.stack.restartPostgres(f.downMs);
    else await o.stack.proxy.refuse(f.ms);
    const end = Date.now();
    run.log.push({ atMs: start - o.t0, endMs: end - o.t0, what });
    run.endedAt = end;
    o.log(`fault at +${((start - o.t0) / 1000).toFixed(1)} s: ${what} (${end - start} ms)`);
  }
  return run;
}
