import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import type { Address } from "viem";
import type { Db } from "../../db/client.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";

// Payments for the benchmarks: real ones through the API (registered like any other), and open payments in
// bulk, copied from a real one with fresh ids and addresses, registered in `watched_addresses` as the API would.

export async function benchMerchant(db: Db): Promise<{ id: string; key: string }> {
  const merchant = await createMerchant(db, { name: "bench" });
  return { id: merchant.id, key: (await createApiKey(db, merchant.id)).key };
}

export type BenchPayment = { id: string; to: Address; due: bigint };

/** POST /payments (1 unit of `token`, Gas Tank mode as bench/payment-latency.ts), then its address and due amount. */
export async function createPayment(
  db: Db,
  opts: { apiUrl: string; apiKey: string; chainId: number; token: Address; orderId: string },
): Promise<BenchPayment> {
  const res = await fetch(`${opts.apiUrl}/payments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": opts.apiKey },
    body: JSON.stringify({
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      chainId: String(opts.chainId),
      token: opts.token,
      amount: "1",
      gasless: true,
      orderId: opts.orderId,
    }),
  });
  const body = (await res.json()) as { url?: string };
  if (!res.ok || !body.url) throw new Error(`POST /payments: ${res.status} ${JSON.stringify(body)}`);
  const id = body.url.split("/pay/")[1]!;
  const { rows } = await db.pool.query<{ to: Address; due: string }>(
    `SELECT recipient_address AS "to", due_units AS due FROM payments WHERE id = $1`,
    [id],
  );
  return { id, to: rows[0]!.to, due: BigInt(rows[0]!.due) };
}

/**
 * `n` open payments copied from `templateId` (fresh id, random address, order id, expiry a day ahead), each
 * registered in `watched_addresses` in the same statement. Returns their addresses when `returning`.
 */
export async function bulkOpenPayments(
  db: Db,
  templateId: string,
  n: number,
  opts: { returning?: boolean; batch?: number } = {},
): Promise<Address[]> {
  const out: Address[] = [];
  const batch = opts.batch ?? 25_000;
  for (let from = 1; from <= n; from += batch) {
    const to = Math.min(n, from + batch - 1);
    const { rows } = await db.pool.query<{ address: Address }>(
      `WITH a AS (
         SELECT i, '0x' || substr(md5(random()::text || i) || md5(i::text || random()::text), 1, 40) AS address
           FROM generate_series($2::int, $3::int) AS i
       ), p AS (
         INSERT INTO payments
         SELECT r.* FROM payments t, a,
           LATERAL jsonb_populate_record(NULL::payments, to_jsonb(t) || jsonb_build_object(
             'id', gen_random_uuid(), 'recipient_address', a.address, 'order_id', 'bench-open-' || a.i,
             'expires_at', now() + interval '1 day', 'created_at', now(), 'updated_at', now())) AS r
          WHERE t.id = $1
         RETURNING id, chain_id, recipient_address, merchant_id
       ), w AS (
         INSERT INTO watched_addresses (chain_id, address, kind, owner_id, merchant_id)
         SELECT chain_id, lower(recipient_address), 'payment', id::text, merchant_id FROM p
       )
       SELECT recipient_address AS address FROM p`,
      [templateId, from, to],
    );
    if (opts.returning) out.push(...rows.map((r) => r.address));
  }
  return out;
}
