import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { detectPayments } from "../../../modules/payments/index.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

it("settles payments that are ready together in one batch transaction", async () => {
  const m = await svc.newMerchant();
  const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
  const h = chainHelpers(chain);
  const payments = await Promise.all(
    [1, 2, 3].map(async (i) => {
      const to = privateKeyToAccount(generatePrivateKey()).address;
      const res = await svc.http("POST", "/payments", {
        apiKey: m.apiKey,
        body: { merchant: to, chainId: "777177", token: h.token("USDT").address, amount: `${i}`, gasless: true, orderId: `batch-${i}` },
      });
      const id = res.body.url.split("/pay/")[1] as string;
      const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
      return { id, to, amount: i, recipient: rows[0].recipient_address };
    }),
  );
  await Promise.all(payments.map((p) => h.pay("USDT", p.recipient, parseUnits(`${p.amount}`, 6))));
  await waitFor(
    async () => {
      await detectPayments(svc.deps, chain, await h.pub.getBlockNumber({ cacheTime: 0 }));
      const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE status = 'paid'`);
      return rows[0].n === 3;
    },
    { what: "all three paid", timeout: 120_000 },
  );

  await waitFor(
    async () => {
      await settleChain(svc.deps, chain);
      const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE status = 'completed'`);
      return rows[0].n === 3;
    },
    { what: "all three completed", timeout: 120_000 },
  );

  const { rows: settlements } = await svc.deps.db.pool.query(`SELECT tx_hash, cardinality(payment_ids) AS n, gas_used FROM settlements`);
  expect(settlements).toHaveLength(1);
  expect(settlements[0].n).toBe(3);
  const { rows } = await svc.deps.db.pool.query(`SELECT DISTINCT settlement_tx_hash FROM payments`);
  expect(rows).toEqual([{ settlement_tx_hash: settlements[0].tx_hash }]);
  for (const p of payments) expect(await h.balanceOf("USDT", p.to)).toBe(parseUnits(`${p.amount}`, 6) - 100_000n);
  console.log(`[measure] batch of 3 deploy-and-sweeps: ${settlements[0].gas_used} gas`);
});
