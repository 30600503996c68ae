import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, primaryKey, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { ts } from "../../db/columns.js";
import { apiKeys, merchants } from "../merchants/schema.js";

// The idempotency module's tables: only this module writes them (other modules read them through its index.ts).

/**
 * Idempotency keys (docs/payments.md "Idempotency keys", modules/idempotency; migration 0021): the first final response to a POST
 * with an `Idempotency-Key` header (or a GraphQL mutation's `idempotencyKey`), per API key and key, for 24 hours.
 * `processing` while the request runs (`claim_id` names it, `locked_at` its last sign of life on the database's clock;
 * -infinity once it gave up with a 5xx), `done` with the response after. `id` is one use of the key.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    /** This use of the key: kept while the key lives, a new one once it expired and is used again. */
    id: uuid("id").notNull().unique("idempotency_keys_id_unique"),
    merchantId: uuid("merchant_id")
      .notNull()
      .references(() => merchants.id),
    apiKeyId: uuid("api_key_id")
      .notNull()
      .references(() => apiKeys.id),
    key: text("key").notNull(),
    /** `POST` and the path under /api, or `GRAPHQL` and the mutation's field name. */
    method: text("method").notNull(),
    path: text("path").notNull(),
    /** SHA-256 (hex) of the canonical request body or arguments. */
    requestHash: text("request_hash").notNull(),
    state: text("state").notNull().default("processing"), // processing | done
    claimId: uuid("claim_id").notNull(),
    responseStatus: integer("response_status"),
    /** The response as sent, sealed with SECRET_KEY (modules/webhooks/sealed.ts): a replay is byte for byte the same. */
    responseBody: text("response_body"),
    /** The response's own headers, `[name, value]` pairs (content type, rate limit, ...). */
    responseHeaders: jsonb("response_headers").$type<[string, string][]>(),
    lockedAt: ts("locked_at").notNull(),
    createdAt: ts("created_at").notNull(),
    completedAt: ts("completed_at"),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "idempotency_keys_pk", columns: [t.merchantId, t.apiKeyId, t.key] }),
    check("idempotency_keys_state", sql`state IN ('processing', 'done')`),
    check(
      "idempotency_keys_done_response",
      sql`state = 'processing' OR (response_status IS NOT NULL AND response_body IS NOT NULL AND response_headers IS NOT NULL)`,
    ),
    check("idempotency_keys_key_length", sql`length(key) BETWEEN 1 AND 255`),
    index("idempotency_keys_expires_idx").on(t.expiresAt),
  ],
);
