import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createMerchant } from "../../../modules/merchants/index.js";
import { createPayment, insertBatchStatement, insertOneStatement, promoCounts } from "../../../modules/payments/index.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { newPaymentRow } from "../../helpers/payment-rows.js";

// The promotion's slot check runs in every creation: it must read the merchant's slots, not its history.
let deps: TestDeps;
beforeAll(async () => {
  deps = await createTestDeps();
});
afterAll(() => deps?.cleanup());

const HISTORY = 5_000;

/** Payments of the merchant's past, written in bulk (the API allows 100 a minute): expired ones, with and without the promotion. */
async function addHistory(merchantId: string) {
  await deps.db.pool.query(
    `INSERT INTO payments (id, merchant_id, order_id, status, chain_id, token_address, token_symbol, token_decimals, amount_units, due_units,
       merchant_address, recipient_address, salt, block_confirmations, gasless, payer_covers_fee, price_usd, price_source, platform_fee_bps,
       promo_applied, platform_fee_units, gas_fee_units, processing_fee_units, gas_tank_fee_micros, expires_at)
     SELECT gen_random_uuid(), $1, 'old-' || g, 'expired', 777177, '0x0000000000000000000000000000000000000000', 'ETH', 18, 1, 1,
       '0x0000000000000000000000000000000000000001', '0x' || md5($3 || g) || lpad(to_hex(g), 8, '0'), '0x' || md5($3 || g) || md5(g || $3), 1, false, false,
       '1', 'oracle', 100, g % 2 = 0, 0, 0, 0, 0, now() - interval '1 day' FROM generate_series(1, $2) g`,
    [merchantId, HISTORY, merchantId],
  );
  await deps.db.pool.query("ANALYZE payments");
}

async function create(merchantId: string, orderId: string) {
  const usdc = deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDC")!;
  const body = {
    merchant: privateKeyToAccount(generatePrivateKey()).address,
    chainId: "777177",
    token: usdc.address,
    amount: "5",
    orderId,
  };
  return createPayment(deps, { merchantId }, body);
}

it("counts only the open and completed promotion payments, whatever the history", async () => {
  const m = await createMerchant(deps.db, { name: "long history" });
  await addHistory(m.id);
  await create(m.id, "new-1");
  await create(m.id, "new-2");
  // Expired promotion payments of the history hold no slot; the two new ones (pending) do.
  expect(await promoCounts(deps.db.pool, m.id)).toEqual({ used: 0, reserved: 2 });
  const { rows } = await deps.db.pool.query(`SELECT promo_applied FROM payments WHERE merchant_id = $1 AND order_id LIKE 'new-%'`, [m.id]);
  expect(rows).toEqual([{ promo_applied: true }, { promo_applied: true }]);
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function* nodes(plan: any): Generator<any> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodes(child);
}
/** A parameter as a literal of EXECUTE (arrays as Postgres array text): EXPLAIN EXECUTE takes no bound parameters. */
const literal = (v: unknown): string => {
  const text = (x: unknown) => (x instanceof Date ? x.toISOString() : String(x));
  if (v === null || v === undefined) return "NULL";
  if (Array.isArray(v))
    return pg.escapeLiteral(`{${v.map((x) => (x === null ? "NULL" : `"${text(x).replace(/["\\]/g, "\\$&")}"`)).join(",")}}`);
  return pg.escapeLiteral(text(v));
};

/**
 * The plan of `statement` as it runs, with its real parameters, inside a transaction rolled back: planned for these
 * values (custom) and once for any (generic: what a prepared statement may switch to after five runs).
 */
async function plans(statement: { text: string; values: unknown[] }) {
  const client = await deps.db.pool.connect();
  const out: string[] = [];
  try {
    for (const mode of ["force_custom_plan", "force_generic_plan"]) {
      await client.query("BEGIN");
      try {
        await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await client.query(`PREPARE promo_plan AS ${statement.text}`);
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE promo_plan(${statement.values.map(literal).join(", ")})`,
        );
        out.push(rows[0]["QUERY PLAN"][0].Plan);
      } finally {
        await client.query("ROLLBACK");
        await client.query("DEALLOCATE promo_plan").catch(() => {});
      }
    }
  } finally {
    client.release();
  }
  return out;
}

it("reads the slot index, not the merchant's history, in the creation's statements and in promo-status", async () => {
  const m = await createMerchant(deps.db, { name: "planned" });
  await addHistory(m.id);
  const statements = {
    batch: insertBatchStatement([newPaymentRow(m.id), newPaymentRow(m.id), newPaymentRow(m.id)]),
    alone: insertOneStatement(newPaymentRow(m.id)),
  };
  for (const [name, statement] of Object.entries(statements))
    for (const plan of await plans(statement)) {
      const all = [...nodes(plan)];
      expect(
        all.some((n) => n["Index Name"] === "payments_promo_slots_idx"),
        `${name}: ${JSON.stringify(plan)}`,
      ).toBe(true);
      expect(all.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "payments")).toEqual([]);
    }
  // Rolled back: nothing of the plans' runs was written.
  expect(await promoCounts(deps.db.pool, m.id)).toEqual({ used: 0, reserved: 0 });

  const status = `SELECT count(*) FROM payments WHERE merchant_id = $1 AND promo_applied AND status NOT IN ('expired', 'failed', 'cancelled', 'withdrawn')`;
  const { rows } = await deps.db.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${status}`, [m.id]);
  const text = JSON.stringify(rows[0]["QUERY PLAN"]);
  expect(text).toContain('"Index Name":"payments_promo_slots_idx"');
  expect(text).not.toContain('"Node Type":"Seq Scan"');
});
