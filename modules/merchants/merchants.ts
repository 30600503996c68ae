import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { apiKeys, merchants } from "./schema.js";
import { generateApiKey } from "./api-keys.js";
import { hashPassword, verifyPassword } from "./passwords.js";

/** Platform fee by merchant type (spec: direct 1%, Member plan 0%, others 0.25-1%). */
export const MERCHANT_TYPES = { direct: 100, member: 0, partner: 50 } as const;
export type MerchantType = keyof typeof MERCHANT_TYPES;

/** Checks a merchant type and its platform fee (spec "Fees"); the fee defaults to the type's. */
function feeOfType(type: MerchantType, platformFeeBps?: number): number {
  if (!Object.hasOwn(MERCHANT_TYPES, type)) throw new Error(`merchant type must be one of ${Object.keys(MERCHANT_TYPES).join(", ")}`);
  const bps = platformFeeBps ?? MERCHANT_TYPES[type];
  if (type === "member" && bps !== 0) throw new Error("Member plan merchants pay no platform fee");
  if (type === "direct" && bps !== 100) throw new Error("direct merchants pay a 1% platform fee (100 bps)");
  if (type !== "member" && (!Number.isInteger(bps) || bps < 25 || bps > 100))
    throw new Error("platform fee must be between 25 and 100 bps (0.25%-1%)");
  return bps;
}

export async function createMerchant(
  db: Db,
  input: { name: string; email?: string; password?: string; type?: MerchantType; platformFeeBps?: number; agentId?: string },
) {
  const type = input.type ?? "direct";
  const bps = feeOfType(type, input.platformFeeBps);
  const [row] = await db.orm
    .insert(merchants)
    .values({
      name: input.name,
      email: input.email?.toLowerCase(),
      passwordHash: input.password ? await hashPassword(input.password) : null,
      merchantType: type,
      platformFeeBps: bps,
      agentId: input.agentId,
    })
    .returning();
  return row!;
}

/** The merchant whose dashboard login is `email` (compared as stored: lowercased), or undefined. */
export async function merchantByEmail(db: Db, email: string) {
  const [row] = await db.orm.select().from(merchants).where(eq(merchants.email, email.toLowerCase()));
  return row;
}

/**
 * Sets a merchant's dashboard password (the local demo account at each `npm start`), unless it already is `password`:
 * true when it changed. Sessions already open stay open.
 */
export async function setMerchantPassword(db: Db, merchantId: string, password: string): Promise<boolean> {
  const [row] = await db.orm.select({ hash: merchants.passwordHash }).from(merchants).where(eq(merchants.id, merchantId));
  if (!row) throw new Error("Merchant not found");
  if (row.hash) {
    const check = await verifyPassword(password, row.hash);
    if (check.ok && !check.outdated) return false;
  }
  await db.orm
    .update(merchants)
    .set({ passwordHash: await hashPassword(password) })
    .where(eq(merchants.id, merchantId));
  return true;
}

/** The operator sets a merchant's type and platform fee (CLI); payments already created keep theirs. */
export async function setMerchantType(db: Db, merchantId: string, input: { type: MerchantType; platformFeeBps?: number }) {
  const bps = feeOfType(input.type, input.platformFeeBps);
  const [row] = await db.orm
    .update(merchants)
    .set({ merchantType: input.type, platformFeeBps: bps })
    .where(eq(merchants.id, merchantId))
    .returning({ id: merchants.id, merchantType: merchants.merchantType, platformFeeBps: merchants.platformFeeBps });
  if (!row) throw new Error("Merchant not found");
  return row;
}

/** Creates an API key; the returned `key` is shown once and never stored. */
export async function createApiKey(db: Db, merchantId: string, name = "default") {
  const { key, prefix, hash } = generateApiKey();
  const [row] = await db.orm.insert(apiKeys).values({ merchantId, name, prefix, keyHash: hash }).returning();
  return { ...row!, key };
}

export async function listMerchants(db: Db) {
  return db.orm.select().from(merchants).orderBy(merchants.createdAt);
}
