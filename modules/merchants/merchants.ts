import type { Db } from "../../db/client.js";
import { apiKeys, merchants } from "../../db/schema.js";
import { generateApiKey } from "./api-keys.js";
import { hashPassword } from "./passwords.js";

/** Platform fee by merchant type (spec: direct 1%, Member plan 0%, others 0.25-1%). */
export const MERCHANT_TYPES = { direct: 100, member: 0, partner: 50 } as const;
export type MerchantType = keyof typeof MERCHANT_TYPES;

export async function createMerchant(
  db: Db,
  input: { name: string; email?: string; password?: string; type?: MerchantType; platformFeeBps?: number },
) {
  const type = input.type ?? "direct";
  const bps = input.platformFeeBps ?? MERCHANT_TYPES[type];
  if (type === "member" && bps !== 0) throw new Error("Member plan merchants pay no platform fee");
  if (type !== "member" && (bps < 25 || bps > 100)) throw new Error("platform fee must be between 25 and 100 bps (0.25%-1%)");
  const [row] = await db.orm
    .insert(merchants)
    .values({
      name: input.name,
      email: input.email?.toLowerCase(),
      passwordHash: input.password ? await hashPassword(input.password) : null,
      merchantType: type,
      platformFeeBps: bps,
    })
    .returning();
  return row!;
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
