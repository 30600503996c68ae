import type { SqlRow } from "../../db/sql-row.js";
import type { payments } from "./schema.js";

/** A `payments` row as pg returns it (snake_case; numeric columns as strings), typed by the schema (schema.ts). */
export type PaymentRow = SqlRow<typeof payments>;
