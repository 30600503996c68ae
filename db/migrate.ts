import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { withTransaction, type Db } from "./client.js";

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");

type Journal = { entries: { idx: number; tag: string; when: number }[] };

/**
 * Applies the SQL migrations drizzle-kit generated (db/migrations) to the app schema.
 * drizzle-kit writes `"public".` into foreign keys; we apply them to the configured schema
 * instead, so one database can hold several app schemas (a test file each). A transaction-level
 * advisory lock lets several processes start at once.
 */
export async function migrate(db: Db): Promise<{ applied: string[] }> {
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")) as Journal;
  return withTransaction(db, async (client) => {
    const applied: string[] = [];
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`migrate:${db.schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${db.schema}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${db.schema}"."__migrations" (tag text PRIMARY KEY, hash text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set((await client.query(`SELECT tag FROM "${db.schema}"."__migrations"`)).rows.map((r) => r.tag as string));
    for (const entry of journal.entries.sort((a, b) => a.idx - b.idx)) {
      if (done.has(entry.tag)) continue;
      const text = fs.readFileSync(path.join(MIGRATIONS_DIR, `${entry.tag}.sql`), "utf8");
      const statements = text
        .replaceAll('"public".', `"${db.schema}".`)
        .split("--> statement-breakpoint")
        .map((s) => s.trim())
        .filter(Boolean);
      for (const s of statements) await client.query(s);
      const hash = createHash("sha256").update(text).digest("hex");
      await client.query(`INSERT INTO "${db.schema}"."__migrations" (tag, hash) VALUES ($1, $2)`, [entry.tag, hash]);
      applied.push(entry.tag);
    }
    return { applied };
  });
}
