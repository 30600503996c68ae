import type { Db } from "../../db/client.js";

/**
 * The advisory lock around transactions of the shared deployer account (LOCAL_ROLES.deployer, the factory's and the
 * oracle's owner). Test files run in parallel against the same chains: one sender at a time, so two files never pick
 * the same nonce. The key test/helpers/service.ts (authorizeSettler) and test/modules/vault/deposits.test.ts take too.
 */
export const DEPLOYER_LOCK = "test:deployer";

/** Runs `fn` holding the deployer lock (session-level, on a connection of `db`'s pool kept for the duration). */
export async function asDeployer<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  const lock = await db.pool.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext($1))`, [DEPLOYER_LOCK]);
    try {
      return await fn();
    } finally {
      await lock.query(`SELECT pg_advisory_unlock(hashtext($1))`, [DEPLOYER_LOCK]);
    }
  } finally {
    lock.release();
  }
}
