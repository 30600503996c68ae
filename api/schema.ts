import { index, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "../db/columns.js";

// The API's own table: only api/middleware writes it (app.schema.ts gathers it with every module's for drizzle-kit).

/**
 * Token buckets of the rate limits, shared by every API replica (api/middleware/rate-limit-store.ts): GCRA keeps
 * one time per bucket, when it will be full again ("theoretical arrival time"). A time in the past is a full
 * bucket, the same as no row: such rows are pruned.
 * UNLOGGED (migration 0013), which drizzle cannot declare: test/db/migrations.test.ts lists it as known.
 */
export const rateLimitBuckets = pgTable(
  "rate_limit_buckets",
  {
    /** `m:<merchant id>:<scope>` or `ip:<address or IPv6 /64>:<scope>`. */
    key: text("key").primaryKey(),
    tat: ts("tat").notNull(),
  },
  (t) => [index("rate_limit_buckets_tat_idx").on(t.tat)],
);
