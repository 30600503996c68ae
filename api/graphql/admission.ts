import PQueue from "p-queue";

/**
 * GraphQL executions at once in this process. The cost limit (cost.ts) bounds one document; this bounds how many
 * run together, so that GraphQL never holds more than a few of the database pool's connections and of the event
 * loop: REST, the payer page and the dashboard, which do not queue here, keep the rest.
 */
export const MAX_CONCURRENT = 4;
/** Executions at once per merchant (per client address without a valid key): one merchant never fills the slots. */
export const MAX_CONCURRENT_PER_CALLER = 2;
/** A caller's documents that may wait for its turn (a client's burst of 50 creations queues); beyond, 429. */
export const MAX_WAITING_PER_CALLER = 64;

const all = new PQueue({ concurrency: MAX_CONCURRENT });
const callers = new Map<string, PQueue>();

/** The refusal `admit` returns when the caller has too many documents waiting. */
export const refused: unique symbol = Symbol("refused");

/**
 * Runs `work` when the caller (`who`: a merchant or a client address) has a turn and a process-wide slot is free;
 * returns `refused` without running it when MAX_WAITING_PER_CALLER of the caller's documents already wait.
 *
 * @example
 * const r = await admit(`merchant:${id}`, () => execute(args));
 * if (r === refused) return tooMany();
 */
export async function admit<T>(who: string, work: () => Promise<T>): Promise<T | typeof refused> {
  let mine = callers.get(who);
  if (!mine) {
    mine = new PQueue({ concurrency: MAX_CONCURRENT_PER_CALLER });
    callers.set(who, mine);
  }
  if (mine.size >= MAX_WAITING_PER_CALLER) return refused;
  const queue = mine;
  try {
    return (await queue.add(() => all.add(work, { throwOnTimeout: true }), { throwOnTimeout: true })) as T;
  } finally {
    if (queue.size === 0 && queue.pending === 0 && callers.get(who) === queue) callers.delete(who);
  }
}
