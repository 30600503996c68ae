import { randomUUID } from "node:crypto";
import type { AppDeps } from "../../core/deps.js";
import { Conflict, DomainError, Unauthorized } from "../../core/errors.js";
import type { Db } from "../../db/client.js";
import type { Caller } from "../merchants/index.js";
import { keyOwner } from "../merchants/index.js";
import { boxOf, openField, sealField } from "../../core/sealed-fields.js";
import { HEARTBEAT_MS, KEY_TTL_MS, PROCESSING_TIMEOUT_MS, type KeyUse } from "./key.js";

// The store of idempotency keys (table idempotency_keys, migration 0021). One row per API key and key: claimed
// `processing` by the request that runs (kept alive by it: keepIdempotencyKey), `done` with its response, deleted when
// the request did nothing (so a retry runs), left bound to the request when its outcome is unknown (a 5xx: the retry
// of that request runs again at once, and finds what the first attempt may have created). The callers
// (api/middleware/idempotency.ts, api/graphql/idempotency.ts) decide which; this module only keeps what it is given.
// Each step is one statement, so it is atomic without a transaction held across the operation (which would hold a
// connection for the operation's whole time). Time: a key's 24 hours run on the service's clock (deps.now), a claim's
// liveness on the database's (now()), the one clock every replica shares.

/** Whose keys: one API key of one merchant. Another key of the merchant is another namespace (it has its own vault). */
export type KeyScope = { merchantId: string; apiKeyId: string };

/** One request under a key: who, which key, which operation, and the fingerprint of its body or arguments. */
export type KeyedRequest = KeyScope & {
  key: string;
  /** `POST`, or `GRAPHQL` for a mutation field. */
  method: string;
  /** The path under /api, or the mutation's field name. */
  path: string;
  /** modules/idempotency/fingerprint.ts. */
  hash: string;
  /** What the hash covers, for the mismatch message: the request `body` (REST) or the field's `arguments` (GraphQL). */
  subject: "body" | "arguments";
};

/** A stored response: status, body as sent, and the response's own headers (content type, rate limit, ...). */
export type StoredResponse = { status: number; body: string; headers: [string, string][] };

/** This request runs under `use` (complete, release or abandon it with its claim). */
export type Claimed = { kind: "claimed"; claimId: string; use: KeyUse };
/** This request runs, or the stored response is the answer. */
export type Claim = Claimed | { kind: "replay"; response: StoredResponse };

export const IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry later";
export const OTHER_ENDPOINT = "This Idempotency-Key was already used for a different endpoint";
export const otherRequest = (subject: KeyedRequest["subject"]) =>
  subject === "body"
    ? "This Idempotency-Key was already used with a different request body"
    : "This Idempotency-Key was already used with different arguments";

/** The sealed column (modules/webhooks/sealed.ts): a response may carry a webhook secret (regenerate-secret). */
const SEALED = "idempotency_keys.response_body";

/**
 * The merchant and API key whose keys a caller uses; null without a live API key (the route answers 401 as always).
 * The lookup is the vault's (one per request, shared with the route's own).
 */
export async function keyScopeOf(deps: Pick<AppDeps, "db">, caller: Caller): Promise<KeyScope | null> {
  if (!("apiKey" in caller) || !caller.apiKey) return null;
  try {
    return await keyOwner(deps, caller);
  } catch (e) {
    if (e instanceof Unauthorized) return null;
    throw e;
  }
}

type Row = {
  id: string;
  method: string;
  path: string;
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  response_headers: [string, string][] | null;
};

// A fresh row, or one taken over: an expired row (any request may reuse the key: a new use, a new id), or a
// `processing` row of this same request whose holder has shown no sign of life for the timeout, on the database's
// clock (the same use: its id stays, so what its first attempt created is found). ON CONFLICT locks the row, so of
// concurrent claims exactly one returns it.
const CLAIM = `INSERT INTO idempotency_keys AS k
    (id, merchant_id, api_key_id, key, method, path, request_hash, state, claim_id, locked_at, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, 'processing', $8, now(), $9, $10)
  ON CONFLICT (merchant_id, api_key_id, key) DO UPDATE SET
    id = CASE WHEN k.expires_at <= EXCLUDED.created_at THEN EXCLUDED.id ELSE k.id END,
    method = EXCLUDED.method, path = EXCLUDED.path, request_hash = EXCLUDED.request_hash, state = 'processing',
    claim_id = EXCLUDED.claim_id, response_status = NULL, response_body = NULL, response_headers = NULL,
    locked_at = now(), completed_at = NULL,
    created_at = CASE WHEN k.expires_at <= EXCLUDED.created_at THEN EXCLUDED.created_at ELSE k.created_at END,
    expires_at = CASE WHEN k.expires_at <= EXCLUDED.created_at THEN EXCLUDED.expires_at ELSE k.expires_at END
  WHERE k.expires_at <= EXCLUDED.created_at
     OR (k.state = 'processing' AND k.locked_at <= now() - interval '1 millisecond' * $11::float8
         AND k.method = EXCLUDED.method AND k.path = EXCLUDED.path AND k.request_hash = EXCLUDED.request_hash)
  RETURNING id`;

let claims = 0;

/**
 * Claims `req.key` for this request, or answers from the store: the stored response when the key was used by the same
 * request and finished; Conflict when it was used for another endpoint or another body, or when its first request is
 * still running (with `retryAfter`, like Stripe's 409: the caller retries, and then gets the stored response).
 */
export async function claimIdempotencyKey(deps: Pick<AppDeps, "db" | "now" | "config">, req: KeyedRequest): Promise<Claim> {
  const now = deps.now();
  if (++claims % 100 === 0) void purgeExpiredKeys(deps.db, now).catch(() => {});
  // A row seen by the claim may be released (deleted) before it is read: claim again, a few times at most.
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimId = randomUUID();
    const claimed = await deps.db.pool.query<{ id: string }>(CLAIM, [
      randomUUID(),
      req.merchantId,
      req.apiKeyId,
      req.key,
      req.method,
      req.path,
      req.hash,
      claimId,
      new Date(now),
      new Date(now + KEY_TTL_MS),
      PROCESSING_TIMEOUT_MS,
    ]);
    const mine = claimed.rows[0];
    if (mine) return { kind: "claimed", claimId, use: { apiKeyId: req.apiKeyId, key: req.key, useId: mine.id } };
    const { rows } = await deps.db.pool.query<Row>(
      `SELECT id, method, path, request_hash, state, response_status, response_body, response_headers
         FROM idempotency_keys WHERE merchant_id = $1 AND api_key_id = $2 AND key = $3`,
      [req.merchantId, req.apiKeyId, req.key],
    );
    const row = rows[0];
    if (!row) continue;
    if (row.method !== req.method || row.path !== req.path) throw new Conflict(OTHER_ENDPOINT);
    if (row.request_hash !== req.hash) throw new Conflict(otherRequest(req.subject));
    if (row.state !== "done") throw new DomainError("conflict", IN_PROGRESS, undefined, { retryAfter: 1 });
    const body = openField(boxOf(deps.config), SEALED, row.id, row.response_body)!;
    return { kind: "replay", response: { status: row.response_status!, body, headers: row.response_headers ?? [] } };
  }
  throw new DomainError("conflict", IN_PROGRESS, undefined, { retryAfter: 1 });
}

/**
 * Keeps a claim alive while its request runs: `locked_at` is refreshed every HEARTBEAT_MS, so however long the
 * request takes, no retry takes it for abandoned. Returns the function that stops it (call it before settling).
 */
export function keepIdempotencyKey(deps: Pick<AppDeps, "db">, claim: Claimed): () => void {
  const timer = setInterval(() => {
    void deps.db.pool
      .query(`UPDATE idempotency_keys SET locked_at = now() WHERE id = $1 AND claim_id = $2 AND state = 'processing'`, [
        claim.use.useId,
        claim.claimId,
      ])
      .catch(() => {});
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Stores the final response of a claimed request: every later request with the key and the same body gets it. The
 * body is sealed with SECRET_KEY (bound to this use of the key) when one is configured: it may hold a webhook secret.
 */
export async function completeIdempotencyKey(
  deps: Pick<AppDeps, "db" | "now" | "config">,
  claim: Claimed,
  response: StoredResponse,
): Promise<void> {
  const box = boxOf(deps.config);
  const body = box.keyId ? sealField(box, SEALED, claim.use.useId, response.body)! : response.body;
  await deps.db.pool.query(
    `UPDATE idempotency_keys SET state = 'done', response_status = $3, response_body = $4, response_headers = $5::jsonb,
            completed_at = $6
      WHERE id = $1 AND claim_id = $2 AND state = 'processing'`,
    [claim.use.useId, claim.claimId, response.status, body, JSON.stringify(response.headers), new Date(deps.now())],
  );
}

/** Forgets a claimed key whose request did nothing (401, 408, 409, 415, 429): a retry with it, any body, runs anew. */
export async function releaseIdempotencyKey(deps: Pick<AppDeps, "db">, claim: Claimed): Promise<void> {
  await deps.db.pool.query(`DELETE FROM idempotency_keys WHERE id = $1 AND claim_id = $2 AND state = 'processing'`, [
    claim.use.useId,
    claim.claimId,
  ]);
}

/**
 * Gives up a claimed key whose request's outcome is unknown (5xx, or it threw: the operation may have committed): the
 * key stays bound to this request (another body is still 409) and a retry of it may take it over at once, under the
 * same use, so an operation that records the use (POST /payments) answers with what it created. A new claim id, so a
 * heartbeat of this request still in flight cannot make the key look alive again.
 */
export async function abandonIdempotencyKey(deps: Pick<AppDeps, "db">, claim: Claimed): Promise<void> {
  await deps.db.pool.query(
    `UPDATE idempotency_keys SET locked_at = '-infinity', claim_id = $3 WHERE id = $1 AND claim_id = $2 AND state = 'processing'`,
    [claim.use.useId, claim.claimId, randomUUID()],
  );
}

/**
 * Deletes expired keys, oldest first, a bounded batch (the expiry index). Run now and then by claims: an expired row
 * is never read as live (a claim takes it over), so purging only bounds the table.
 */
export async function purgeExpiredKeys(db: Db, now: number, batch = 1000): Promise<number> {
  const r = await db.pool.query(
    `DELETE FROM idempotency_keys WHERE id IN (
       SELECT id FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [new Date(now), batch],
  );
  return r.rowCount ?? 0;
}
