import { scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { hash, verify, type Algorithm } from "@node-rs/argon2";

/**
 * Dashboard passwords: argon2id with OWASP's parameters (Password Storage Cheat Sheet: 19 MiB, 2 passes,
 * 1 lane), stored as the PHC string. Hashes of older parameters (scrypt at N=2^14 before) still verify and
 * are replaced at the next successful login.
 */
export const ARGON2 = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
const CURRENT = `$argon2id$v=19$m=${ARGON2.memoryCost},t=${ARGON2.timeCost},p=${ARGON2.parallelism}$`;

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/** The scrypt hashes written before argon2id: `scrypt$<salt hex>$<key hex>`, Node's default cost. */
const LEGACY_SCRYPT = { N: 16_384, r: 8, p: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

/** Whether `password` matches `stored`, and whether `stored` should be replaced by a hash of today's parameters. */
export async function verifyPassword(password: string, stored: string): Promise<{ ok: boolean; outdated: boolean }> {
  const outdated = !stored.startsWith(CURRENT);
  if (stored.startsWith("$argon2")) return { ok: await verify(stored, password).catch(() => false), outdated };
  const [kind, saltHex, keyHex] = stored.split("$");
  if (kind !== "scrypt" || !saltHex || !keyHex) return { ok: false, outdated };
  const expected = Buffer.from(keyHex, "hex");
  const key = await scryptAsync(password, Buffer.from(saltHex, "hex"), expected.length, LEGACY_SCRYPT);
  return { ok: expected.length > 0 && timingSafeEqual(key, expected), outdated };
}
