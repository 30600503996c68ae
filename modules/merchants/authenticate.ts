import type { AppDeps, Merchant } from "../../core/deps.js";
import { NotFound, Unauthorized } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import { hashApiKey, liveKeyCtes, liveKeysCtes, liveKeySql } from "./api-keys.js";
import { merchantIdForSession } from "./sessions.js";

/**
 * Who calls an operation: the holder of an API key (REST, GraphQL), a dashboard session (GET
 * /v1/payments also takes its cookie), or the operator acting for a merchant (CLI).
 */
export type Caller = { apiKey: string | undefined } | { session: string | undefined } | { merchantId: string };

type AuthDeps = Pick<AppDeps, "db" | "now">;

type MerchantRow = {
  id: string;
  name: string;
  merchant_type: string;
  platform_fee_bps: number;
  promo_used: number;
  agent_id: string | null;
  agent_markup_bps: number | null;
  agent_share_bps: number | null;
};
/** The merchant's columns, and its agent's terms (docs/agents.md), of `merchants m`. */
const KEY_MERCHANT_COLUMNS = `m.id, m.name, m.merchant_type, m.platform_fee_bps, m.promo_used, m.agent_id,
  (SELECT a.markup_bps FROM agents a WHERE a.merchant_id = m.agent_id) AS agent_markup_bps,
  (SELECT a.platform_share_bps FROM agents a WHERE a.merchant_id = m.agent_id) AS agent_share_bps`;
/** The same, as named by a CTE or subquery that selected KEY_MERCHANT_COLUMNS. */
const MERCHANT_COLUMNS = "id, name, merchant_type, platform_fee_bps, promo_used, agent_id, agent_markup_bps, agent_share_bps";
const toMerchant = (r: MerchantRow): Merchant => ({
  id: r.id,
  name: r.name,
  merchantType: r.merchant_type,
  platformFeeBps: r.platform_fee_bps,
  promoUsed: r.promo_used,
  agent: r.agent_id ? { id: r.agent_id, markupBps: r.agent_markup_bps ?? 0, platformShareBps: r.agent_share_bps ?? 0 } : null,
});

// A caller object is looked up once: GraphQL hands the same one to every field of a request.
const lookups = new WeakMap<Caller, Promise<Merchant | null>>();

/** The merchant of an `x-api-key` (its last use recorded, at most once a minute); null for a missing, unknown or revoked key. */
export async function merchantForKey(deps: Pick<AppDeps, "db">, key: string | undefined): Promise<Merchant | null> {
  if (!key) return null;
  const { rows } = await deps.db.pool.query<MerchantRow>(`${liveKeySql(KEY_MERCHANT_COLUMNS)} SELECT ${MERCHANT_COLUMNS} FROM key`, [
    hashApiKey(key),
  ]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

/**
 * The API key lookup of merchantForKey as parts of another statement (one round trip for a rate limit and the key):
 * `sql(n)` gives CTEs to append, the column to select (the merchant as JSON, or null) and the parameters, numbered
 * from `$n`; `fromColumn` reads that column. rememberMerchant hands the result to findMerchant for the request.
 *
 * @example
 * const lookup = keyLookupSql(key);
 * const { ctes, column, params } = lookup.sql(3);
 */
export function keyLookupSql(key: string) {
  return {
    sql: (firstParam: number) => ({
      ctes: liveKeyCtes(KEY_MERCHANT_COLUMNS, `$${firstParam}`),
      column: `(SELECT row_to_json(r) FROM (SELECT ${MERCHANT_COLUMNS} FROM key) r)`,
      params: [hashApiKey(key)],
    }),
    fromColumn: (v: unknown): Merchant | null => (v ? toMerchant(v as MerchantRow) : null),
    /** SQL of the key's merchant id (null when the key is unknown), for statements that go on with it. */
    merchantIdSql: "(SELECT id FROM key)",
  };
}

/**
 * keyLookupSql for many requests in one statement (rate-limit-many.ts takeMany): CTEs over CTE `i` whose `lookup` column
 * is a key's hash (keyHashOf; null: no key), defining `keys` (`ord`, `id`: the merchant's), and the column of each
 * request's merchant as JSON (keyLookupSql's `fromColumn` reads it).
 */
export const KEY_LOOKUP_BATCH = {
  ctes: liveKeysCtes(KEY_MERCHANT_COLUMNS, "i", "lookup"),
  column: `(SELECT row_to_json(r) FROM (SELECT ${MERCHANT_COLUMNS} FROM keys WHERE keys.ord = i.ord) r)`,
  fromColumn: (v: unknown): Merchant | null => (v ? toMerchant(v as MerchantRow) : null),
};

/** What KEY_LOOKUP_BATCH looks up for an `x-api-key`. */
export const keyHashOf = (key: string) => hashApiKey(key);

/** Records the merchant already looked up for `caller` (keyLookupSql), so findMerchant does not ask again. */
export function rememberMerchant(caller: Caller, merchant: Merchant | null): void {
  if (!lookups.has(caller)) lookups.set(caller, Promise.resolve(merchant));
}

async function merchantById(deps: Pick<AppDeps, "db">, id: string | null): Promise<Merchant | null> {
  if (!isUuid(id)) return null;
  const { rows } = await deps.db.pool.query<MerchantRow>(`SELECT ${KEY_MERCHANT_COLUMNS} FROM merchants m WHERE m.id = $1`, [id]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

/** The merchant behind `caller`, or null. */
export function findMerchant(deps: AuthDeps, caller: Caller): Promise<Merchant | null> {
  let found = lookups.get(caller);
  if (!found) {
    if ("apiKey" in caller) found = merchantForKey(deps, caller.apiKey);
    else if ("session" in caller) found = merchantIdForSession(deps.db, caller.session, deps.now()).then((id) => merchantById(deps, id));
    else found = merchantById(deps, caller.merchantId);
    lookups.set(caller, found);
  }
  return found;
}

/** The merchant behind `caller`; throws Unauthorized (NotFound for a merchant id the operator named). */
export async function authenticate(deps: AuthDeps, caller: Caller): Promise<Merchant> {
  const merchant = await findMerchant(deps, caller);
  if (merchant) return merchant;
  throw "merchantId" in caller ? new NotFound("Merchant not found") : new Unauthorized();
}
