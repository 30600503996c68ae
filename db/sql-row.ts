import type { PgTable } from "drizzle-orm/pg-core";

/** A value as node-postgres returns it: int8 comes back as a string (db/client.ts), so money never passes a float. */
type PgValue<V> = V extends bigint ? string : V;

/** `dueUnits` → `due_units`: a schema key as its column's name (the schemas name every column so; db/sql-row.test.ts). */
export type SnakeCase<S extends string> = S extends `${infer H}${infer R}`
  ? `${H extends Lowercase<H> ? (H extends `${number}` ? H : H) : `_${Lowercase<H>}`}${SnakeCase<R>}`
  : S;

/**
 * The row of a drizzle table as `SELECT *` returns it through the pg pool: keyed by column name (snake_case), typed by
 * the schema. Raw-SQL code types its rows with this, so a row is spelled once, in the table's schema.ts.
 *
 * @example
 * export type PaymentRow = SqlRow<typeof payments>; // { id: string; merchant_id: string; due_units: string; … }
 */
export type SqlRow<T extends PgTable> = {
  [K in keyof T["$inferSelect"] & string as SnakeCase<K>]: PgValue<T["$inferSelect"][K]>;
};

/** `dueUnits` → `due_units` at run time (SnakeCase's twin, for the test that keeps the two honest). */
export const snakeCase = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
