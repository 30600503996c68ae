import { type AnyPgColumn, bigserial, index, jsonb, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

// Column helpers shared by every schema file (db/schema.ts, modules/<m>/schema.ts). Tables carry no schema name:
// connections set search_path to APP_SCHEMA (default `app`), so each test file can work in a schema of its own.
// Money columns are numeric(78,0) in smallest units (read as strings, handled as bigint).

/** A money column: numeric(78,0), smallest units. */
export const units = (name: string) => numeric(name, { precision: 78, scale: 0 });
/** A timestamp with time zone, read as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * The audit table of a status table: one row per status change, written by its transition() (db/status-machine.ts)
 * in the transaction of the change. `subject` is the column naming the row that changed.
 */
export function statusEvents(name: string, subject: { column: string; kind?: "uuid" | "text"; references: () => AnyPgColumn }) {
  const subjectColumn = (subject.kind === "text" ? text(subject.column) : uuid(subject.column)).notNull().references(subject.references);
  return pgTable(
    name,
    {
      id: bigserial("id", { mode: "bigint" }).primaryKey(),
      subject: subjectColumn,
      fromStatus: text("from_status"),
      toStatus: text("to_status").notNull(),
      reason: text("reason"),
      data: jsonb("data"),
      createdAt: ts("created_at").notNull().defaultNow(),
    },
    (t) => [index(`${name}_${subject.column.replace(/_id$/, "")}_idx`).on(t.subject)],
  );
}
