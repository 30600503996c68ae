import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { createDb, type Db } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";

// The SQL migrations (db/migrations, applied by db/migrate.ts) build what drizzle-kit's latest snapshot
// (db/migrations/meta) describes, and db/schema-snapshot.test.ts checks that snapshot is db/schema.ts. Two fresh app
// schemas: one built by the migrations, one by the SQL drizzle-kit writes from the snapshot alone; Postgres's catalog
// of both must agree on every table, column (type, nullability, default), constraint (primary key, unique, check,
// foreign key), index (unique, partial), sequence, trigger and function.
const META = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../db/migrations/meta");

// What drizzle cannot declare, so only the migrations have it (db/schema.ts says so at those tables): the trigger
// that tells the indexer of a new watched address and its function (migration 0006), the UNLOGGED rate limits (0013),
// the function other modules' bulk statements register addresses with (0028).
const KNOWN = [
  "function watch_addresses: in the migrations only",
  "function watched_addresses_notify: in the migrations only",
  "table rate_limit_buckets: migrations UNLOGGED, snapshot LOGGED",
  "trigger watched_addresses.watched_addresses_notify: in the migrations only",
];

const tag = randomBytes(4).toString("hex");
const MIGRATED = `mig_check_${tag}`;
const DECLARED = `snap_check_${tag}`;
let pool: pg.Pool;
let db: Db;

beforeAll(async () => {
  const url = inject("stackEnv").DATABASE_URL!;
  pool = new pg.Pool({ connectionString: url, max: 2 });
  db = createDb({ url, schema: MIGRATED, max: 1 });
  await migrate(db);
  // The latest snapshot's SQL, as `npm run db:generate` would write it for an empty database.
  const latest = fs
    .readdirSync(META)
    .filter((f) => /^\d{4}_snapshot\.json$/.test(f))
    .sort()
    .at(-1)!;
  const snapshot = JSON.parse(fs.readFileSync(path.join(META, latest), "utf8"));
  const statements = await generateMigration(generateDrizzleJson({}), snapshot);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(`CREATE SCHEMA "${DECLARED}"`);
    await client.query(`SET LOCAL search_path = "${DECLARED}"`);
    for (const s of statements) await client.query(s.replaceAll('"public".', `"${DECLARED}".`));
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK");
    throw e;
  } finally {
    client.release();
  }
});

afterAll(async () => {
  for (const s of [MIGRATED, DECLARED]) await pool?.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await db?.close();
  await pool?.end();
});

/** One line per object of `schema` in Postgres's catalog (the migrations' own `__migrations` left out), keyed by kind and name. */
async function catalog(schema: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const rows = async (text: string) => (await pool.query(text, [schema])).rows;
  // Names of this schema's objects print qualified (the reading connection's search_path is not it): unqualify.
  const bare = (s: string) => s.replaceAll(`"${schema}".`, "").replaceAll(`${schema}.`, "");
  const ours = `n.nspname = $1 AND c.relname <> '__migrations'`;
  for (const r of await rows(
    `SELECT c.relname, c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours} AND c.relkind = 'r'`,
  ))
    out.set(`table ${r.relname}`, r.relpersistence === "u" ? "UNLOGGED" : "LOGGED");
  for (const r of await rows(
    `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull, pg_get_expr(d.adbin, d.adrelid) AS def,
            a.attidentity, a.attgenerated
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE ${ours} AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`,
  ))
    out.set(
      `column ${r.relname}.${r.attname}`,
      [
        r.type,
        r.attnotnull ? "NOT NULL" : "NULL",
        r.def === null ? "" : `DEFAULT ${bare(r.def)}`,
        r.attidentity ? `IDENTITY ${r.attidentity}` : "",
        r.attgenerated ? `GENERATED ${r.attgenerated}` : "",
      ]
        .filter(Boolean)
        .join(" "),
    );
  for (const r of await rows(
    `SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) AS def
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours}`,
  ))
    out.set(`constraint ${r.relname}.${r.conname}`, bare(r.def));
  for (const r of await rows(
    `SELECT c.relname, i.relname AS index, pg_get_indexdef(i.oid) AS def
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours}`,
  ))
    out.set(`index ${r.relname}.${r.index}`, bare(r.def));
  for (const r of await rows(
    `SELECT c.relname, format_type(s.seqtypid, NULL) AS type, s.seqstart, s.seqincrement
     FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours}`,
  ))
    out.set(`sequence ${r.relname}`, `${r.type} START ${r.seqstart} INCREMENT ${r.seqincrement}`);
  for (const r of await rows(
    `SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) AS def
     FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE ${ours} AND NOT t.tgisinternal`,
  ))
    out.set(`trigger ${r.relname}.${r.tgname}`, bare(r.def));
  for (const r of await rows(
    `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
  ))
    out.set(`function ${r.proname}`, `(${r.args})`);
  for (const r of await rows(
    `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours} AND c.relkind IN ('v', 'm')`,
  ))
    out.set(`view ${r.relname}`, r.relkind);
  return out;
}

it("a database built by the migrations is what the latest drizzle snapshot describes", async () => {
  const [migrated, declared] = await Promise.all([catalog(MIGRATED), catalog(DECLARED)]);
  // Sanity: both sides were read (a wrong schema name would compare two empty catalogs).
  expect(migrated.size).toBeGreaterThan(500);
  expect(declared.size).toBeGreaterThan(500);
  const differences: string[] = [];
  for (const key of [...new Set([...migrated.keys(), ...declared.keys()])].sort()) {
    const m = migrated.get(key);
    const d = declared.get(key);
    if (m === d) continue;
    if (d === undefined) differences.push(`${key}: in the migrations only`);
    else if (m === undefined) differences.push(`${key}: in the snapshot only, ${d}`);
    else differences.push(`${key}: migrations ${m}, snapshot ${d}`);
  }
  // A new line here: a migration created something db/schema.ts does not declare (declare it, then
  // `npm run db:generate` must write nothing), or db/schema.ts declares what no migration creates (generate it).
  expect(differences).toEqual(KNOWN);
});
