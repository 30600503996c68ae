import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";

export type ExitRecord = {
  name: string;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  killedByUs: boolean;
  /** The end of its log, for an exit we did not cause. */
  tail?: string;
};

export type SupervisedOptions = {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  logFile: string;
  /** Pause before a restart, as systemd's RestartSec. */
  restartDelayMs?: number;
  log?: (msg: string) => void;
};

/**
 * One service process kept running the way systemd would: whenever it exits (crash, SIGKILL, lost
 * database) it is started again after a short delay. Each child leads its own process group, so a kill
 * takes whatever it spawned with it (no orphan holding a port or a lock).
 */
export class Supervised {
  readonly name: string;
  starts = 0;
  kills = 0;
  readonly exits: ExitRecord[] = [];
  private child: ChildProcess | null = null;
  private stopping = false;
  private killing = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private waiters: (() => void)[] = [];
  private readonly guard = () => this.signalGroup("SIGKILL");

  constructor(private readonly opts: SupervisedOptions) {
    this.name = opts.name;
    process.on("exit", this.guard);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null;
  }

  start(): void {
    if (this.stopping || this.child) return;
    const out = fs.openSync(this.opts.logFile, "a");
    fs.writeSync(out, `\n===== ${new Date().toISOString()} start #${this.starts + 1} of ${this.name} =====\n`);
    const child = spawn(this.opts.command, this.opts.args, {
      cwd: this.opts.cwd,
      env: this.opts.env,
      stdio: ["ignore", out, out],
      detached: true,
    });
    fs.closeSync(out);
    this.child = child;
    this.starts++;
    child.once("exit", (code, signal) => {
      const unexpected = !this.killing && !this.stopping;
      const tail = unexpected ? logTail(this.opts.logFile, 1500) : undefined;
      this.exits.push({ name: this.name, at: Date.now(), code, signal, killedByUs: this.killing, tail });
      if (unexpected) this.opts.log?.(`${this.name} exited by itself (${signal ?? code}); its log ends:\n${tail}`);
      this.killing = false;
      this.child = null;
      // The group may hold children of the child (esbuild, tsx): never leave them behind.
      if (child.pid) tryKill(-child.pid, "SIGKILL");
      if (this.stopping) return;
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        this.start();
        for (const w of this.waiters.splice(0)) w();
      }, this.opts.restartDelayMs ?? 1000);
    });
  }

  /** SIGKILL the process group now; the supervisor restarts it. Resolves once it has exited. */
  async kill(): Promise<boolean> {
    const child = this.child;
    if (!child?.pid) return false;
    this.killing = true;
    this.kills++;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    tryKill(-child.pid, "SIGKILL");
    await exited;
    return true;
  }

  /** Resolves when a process is running (now, or after the pending restart). */
  whenRunning(): Promise<void> {
    return this.child ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  /** Stops for good: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child?.pid) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      tryKill(-child.pid, "SIGTERM");
      const t = setTimeout(() => child.pid && tryKill(-child.pid, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(t);
    }
    process.off("exit", this.guard);
  }

  private signalGroup(signal: NodeJS.Signals) {
    if (this.child?.pid) tryKill(-this.child.pid, signal);
  }
}

function logTail(file: string, chars: number): string {
  try {
    const text = fs.readFileSync(file, "utf8");
    return text.slice(-chars);
  } catch {
    return "";
  }
}

function tryKill(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
