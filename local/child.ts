import type { ChildProcess } from "node:child_process";

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** If this process dies without stopping the child (kill, crash), do not leave the child behind. */
export function guardChild(child: ChildProcess): void {
  const orphanGuard = () => child.kill("SIGTERM");
  process.once("exit", orphanGuard);
  child.once("exit", () => process.off("exit", orphanGuard));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), graceMs).unref();
  });
}
