import fs from "node:fs";

// CPU and memory of the benchmark's processes, read from /proc (Linux). A role is a process and, when
// `tree`, every descendant (Postgres: the postmaster and its backends; a wrapper and its child).

const TICKS_PER_SECOND = 100; // CLK_TCK on Linux

type ProcStat = { pid: number; ppid: number; ticks: number };

/** utime + stime + cutime + cstime: a reaped child's time is folded into its parent's cutime/cstime. */
function readStat(pid: number): ProcStat | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** Proportional set size (shared pages divided among their users), so a tree's sum does not count shared memory twice. */
function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

export type Role = { name: string; pid: number; tree: boolean };
type Sample = { at: number; ticks: number; pss: number; rss: number };

export type RoleFigures = { name: string; cpuPercent: number; maxPssBytes: number; maxRssBytes: number; processes: number };

/**
 * Samples each role every `intervalMs`: CPU time of the tree (ticks) and memory (PSS summed over the
 * tree; RSS of the role's main process). `figures()` gives CPU % over the sampled window (100 % = one
 * core) and the peaks.
 */
export function sampleProcesses(roles: Role[], intervalMs = 2000) {
  const samples = new Map<string, Sample[]>(roles.map((r) => [r.name, []]));
  const processes = new Map<string, number>();
  const sample = () => {
    const stats = roles.some((r) => r.tree) ? allStats() : [];
    const children = new Map<number, ProcStat[]>();
    for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
    const at = Date.now();
    for (const r of roles) {
      const root = readStat(r.pid);
      if (!root) continue;
      const members = [root];
      if (r.tree) for (let i = 0; i < members.length; i++) members.push(...(children.get(members[i]!.pid) ?? []));
      // The role's own process alone (the benchmark driver): its children are other roles.
      const ticks = r.tree ? members.reduce((a, m) => a + m.ticks, 0) : selfTicks(r.pid);
      samples.get(r.name)!.push({ at, ticks, pss: members.reduce((a, m) => a + pssBytes(m.pid), 0), rss: rssBytes(r.pid) });
      processes.set(r.name, Math.max(processes.get(r.name) ?? 0, members.length));
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    /** Starts the window over (setup done): CPU % counts from here. */
    reset() {
      for (const s of samples.values()) s.splice(0);
      sample();
    },
    stop() {
      clearInterval(timer);
      sample();
    },
    figures(): RoleFigures[] {
      return roles.map((r) => {
        const s = samples.get(r.name)!;
        const first = s[0];
        const last = s[s.length - 1];
        const seconds = first && last ? (last.at - first.at) / 1000 : 0;
        return {
          name: r.name,
          cpuPercent: seconds > 0 ? ((last!.ticks - first!.ticks) / TICKS_PER_SECOND / seconds) * 100 : NaN,
          maxPssBytes: Math.max(0, ...s.map((x) => x.pss)),
          maxRssBytes: Math.max(0, ...s.map((x) => x.rss)),
          processes: processes.get(r.name) ?? 0,
        };
      });
    },
  };
}

/** utime + stime of one process without its children's. */
function selfTicks(pid: number): number {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
