// Small numeric helpers for the benchmarks' printed figures (never asserted).

/** The p-quantile (0..1) of `xs` by nearest rank; NaN for no samples. */
export function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))]!;
}

export const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** Bytes as a short human figure (binary units). */
export function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** A table of rows padded to column widths. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")).join("\n");
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `--name value` / `--name=value` options of the command line, with defaults. */
export function options<T extends Record<string, string>>(defaults: T, argv = process.argv.slice(2)): T {
  const out: Record<string, string> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${a}`);
    const [k, inline] = a.slice(2).split("=", 2) as [string, string | undefined];
    if (!(k in defaults))
      throw new Error(
        `unknown option --${k} (options: ${Object.keys(defaults)
          .map((x) => `--${x}`)
          .join(", ")})`,
      );
    out[k] = inline ?? argv[++i] ?? "";
  }
  return out as T;
}
