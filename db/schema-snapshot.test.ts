import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { describe, expect, it } from "vitest";
import * as schema from "../app.schema.js";

// `npm run db:generate` (drizzle-kit generate) diffs the schema (app.schema.ts gathers every schema file) against the latest snapshot in db/migrations/meta and
// writes what differs as the next migration: it must find nothing, or the next person to add a column ships a
// migration that re-creates what exists. (test/db/migrations.test.ts checks that the SQL migrations build what that
// snapshot describes.)
const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
const META = path.join(DIR, "meta");

type Snapshot = { id: string; prevId: string; [k: string]: unknown } & Parameters<typeof generateMigration>[0];
type Journal = { entries: { idx: number; tag: string }[] };

const journal = JSON.parse(fs.readFileSync(path.join(META, "_journal.json"), "utf8")) as Journal;
const snapshots = fs
  .readdirSync(META)
  .filter((f) => /^\d{4}_snapshot\.json$/.test(f))
  .sort()
  .map((f) => ({ idx: Number(f.slice(0, 4)), json: JSON.parse(fs.readFileSync(path.join(META, f), "utf8")) as Snapshot }));
const latest = snapshots.at(-1)!;

/** Names of the tables, their columns, and the other named things drizzle-kit would ask about when one disappears. */
function names(s: Record<string, unknown>) {
  const tables = s.tables as Record<string, { columns: Record<string, unknown> }>;
  const keys = (k: string) => Object.keys((s[k] ?? {}) as object).sort();
  return {
    columns: Object.fromEntries(Object.entries(tables).map(([t, v]) => [t, Object.keys(v.columns).sort()])),
    enums: keys("enums"),
    schemas: keys("schemas"),
    sequences: keys("sequences"),
    views: keys("views"),
  };
}

describe("db/migrations/meta", () => {
  it("has one .sql per journal entry, in order, and no stray migration", () => {
    expect(journal.entries.map((e) => e.idx)).toEqual(journal.entries.map((_, i) => i));
    for (const e of journal.entries) expect(e.tag.startsWith(String(e.idx).padStart(4, "0") + "_"), e.tag).toBe(true);
    const sql = fs.readdirSync(DIR).filter((f) => f.endsWith(".sql"));
    expect(sql.sort()).toEqual(journal.entries.map((e) => `${e.tag}.sql`).sort());
  });

  it("chains its snapshots (each prevId is the id of the snapshot before it), the last one for the last migration", () => {
    expect(snapshots[0]!.json.prevId).toBe("00000000-0000-0000-0000-000000000000");
    for (let i = 1; i < snapshots.length; i++)
      expect(snapshots[i]!.json.prevId, `${snapshots[i]!.idx}_snapshot.json`).toBe(snapshots[i - 1]!.json.id);
    expect(new Set(snapshots.map((s) => s.json.id)).size).toBe(snapshots.length);
    for (const s of snapshots)
      expect(
        journal.entries.some((e) => e.idx === s.idx),
        `${s.idx}_snapshot.json`,
      ).toBe(true);
    expect(latest.idx).toBe(journal.entries.at(-1)!.idx);
  });

  it("db:generate would write nothing: the latest snapshot is the schema", async () => {
    const current = generateDrizzleJson(schema as Record<string, unknown>, latest.json.id);
    // A table or column on one side only: drizzle-kit would ask on a terminal whether it was renamed (the test would
    // wait for an answer), so they are named here first. Declare it in its schema.ts and run `npm run db:generate`.
    expect(names(current as Record<string, unknown>)).toEqual(names(latest.json));
    expect(await generateMigration(latest.json, current as never)).toEqual([]);
  });
});
