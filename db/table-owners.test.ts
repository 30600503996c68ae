import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getTableColumns, getTableName, isTable } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import * as schema from "../app.schema.js";
import { snakeCase } from "./sql-row.js";

// Each table has one owner: the module whose schema.ts declares it (db/schema.ts: the foundation's few). Only the
// owner writes it; others call the owner's functions (docs/modules.md). This reads every source file above the
// foundation for writes (raw INSERT INTO / UPDATE / DELETE FROM, drizzle insert/update/delete) and names the
// writer of each table.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LAYERS = ["modules", "flows", "processors", "api", "web", "cli", "app"];

function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return files(p);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [p] : [];
  });
}

/** table name -> owner ("db" or the module), and drizzle variable -> table name, from the schema files' text. */
function owners() {
  const byTable = new Map<string, string>();
  const byVariable = new Map<string, string>();
  const schemaFiles = [
    ["db", path.join(ROOT, "db/schema.ts")],
    ["api", path.join(ROOT, "api/schema.ts")],
    ...fs.readdirSync(path.join(ROOT, "modules")).map((m) => [m, path.join(ROOT, "modules", m, "schema.ts")]),
  ];
  for (const [owner, file] of schemaFiles) {
    if (!fs.existsSync(file!)) continue;
    for (const m of fs.readFileSync(file!, "utf8").matchAll(/export const (\w+) = (?:pgTable|statusEvents)\(\s*"(\w+)"/g)) {
      byTable.set(m[2]!, owner!);
      byVariable.set(m[1]!, m[2]!);
    }
  }
  return { byTable, byVariable };
}

function writers(): Map<string, Set<string>> {
  const { byTable, byVariable } = owners();
  const out = new Map<string, Set<string>>();
  const add = (table: string, writer: string) => out.set(table, (out.get(table) ?? new Set()).add(writer));
  for (const file of LAYERS.flatMap((l) => files(path.join(ROOT, l)))) {
    const rel = path.relative(ROOT, file);
    const writer = rel.startsWith("modules/") ? rel.split("/")[1]! : rel.split("/")[0]!;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?/gi)) if (byTable.has(m[1]!)) add(m[1]!, writer);
    const alias = new Map([...text.matchAll(/const (\w+) = (\w+);/g)].map((m) => [m[1]!, m[2]!]));
    for (const m of text.matchAll(/\.(?:insert|update|delete)\((\w+)\)/g)) {
      const table = byVariable.get(alias.get(m[1]!) ?? m[1]!);
      if (table) add(table, writer);
    }
  }
  return out;
}

describe("table ownership", () => {
  it("every table is written only by the module that declares it (db/schema.ts's by the foundation)", () => {
    const { byTable } = owners();
    const foreign = [...writers()].flatMap(([table, who]) =>
      [...who].filter((w) => w !== byTable.get(table)).map((w) => `${table} (owner ${byTable.get(table)}) written by ${w}`),
    );
    expect(foreign).toEqual([]);
    // Sanity: the scan sees writes (a broken pattern would pass on nothing).
    expect(writers().get("payments")).toEqual(new Set(["payments"]));
  });

  it("every column is named after its key (SqlRow's snake_case keys are the real column names)", () => {
    const wrong = Object.values(schema)
      .filter((t) => isTable(t))
      .map((t) => t as PgTable)
      .flatMap((t) =>
        Object.entries(getTableColumns(t))
          .filter(([key, c]) => snakeCase(key) !== c.name && !(key === "subject" && /_id$/.test(c.name)))
          .map(([key, c]) => `${getTableName(t)}.${key} is ${c.name}`),
      );
    expect(wrong).toEqual([]);
  });
});
