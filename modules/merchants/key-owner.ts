import type { AppDeps } from "../../core/deps.js";
import { Unauthorized } from "../../core/errors.js";
import type { Db } from "../../db/client.js";
import { hashApiKey, liveKeySql } from "./api-keys.js";
import type { Caller } from "./authenticate.js";

export type KeyOwner = { apiKeyId: string; merchantId: string };

// A caller object is looked up once: GraphQL hands the same one to every field of a request.
const owners = new WeakMap<object, Promise<KeyOwner | null>>();

async function ownerOfKey(db: Db, key: string | undefined): Promise<KeyOwner | null> {
  if (!key) return null;
  const { rows } = await db.pool.query<{ key_id: string; merchant_id: string }>(
    `${liveKeySql("m.id AS merchant_id")} SELECT key_id, merchant_id FROM key`,
    [hashApiKey(key)],
  );
  return rows[0] ? { apiKeyId: rows[0].key_id, merchantId: rows[0].merchant_id } : null;
}

/** The API key behind `caller` and its merchant; Unauthorized for a missing, unknown or revoked key (or a non-key caller). */
export async function keyOwner(deps: Pick<AppDeps, "db">, caller: Caller): Promise<KeyOwner> {
  if (!("apiKey" in caller)) throw new Unauthorized();
  let found = owners.get(caller);
  if (!found) owners.set(caller, (found = ownerOfKey(deps.db, caller.apiKey)));
  const owner = await found;
  if (!owner) throw new Unauthorized();
  return owner;
}
