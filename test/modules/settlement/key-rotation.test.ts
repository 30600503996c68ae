import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { detectPayments } from "../../../modules/payments/index.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { authorizeSettler, startTestService, type TestService } from "../../helpers/service.js";

// Settler key rotation (docs/real-chain.md): a second settler is authorised on the factory and the service restarts
// with its key. New sweeps are signed with it; what the old key signed is followed to the end from its stored bytes.
vi.setConfig({ testTimeout: 240_000 });

let svc: TestService;
let rotated: TestDeps;
const newKey = generatePrivateKey();
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  await authorizeSettler(svc.deps, privateKeyToAccount(newKey).address);
  rotated = await createTestDeps({ env: { APP_SCHEMA: svc.deps.db.schema, SETTLER_PRIVATE_KEY: newKey } });
});
afterAll(async () => {
  await rotated?.db.close(); // the service's schema: it drops it
  await svc?.stop();
});

it("the old key's signed sweep is still broadcast and mined; new sweeps use the new key; each payment settles once", async () => {
  const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
  const h = chainHelpers(chain);
  const m = await svc.newMerchant();
  const pay = async (orderId: string, amount: string) => {
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const res = await svc.http("POST", "/payments", {
      apiKey: m.apiKey,
      body: { merchant: to, chainId: "777177", token: h.token("USDT").address, amount, gasless: true, orderId },
    });
    const id = res.body.url.split("/pay/")[1] as string;
    const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
    await h.pay("USDT", rows[0].recipient_address, parseUnits(amount, 6));
    await waitFor(
      async () => {
        await detectPayments(svc.deps, chain, await h.pub.getBlockNumber({ cacheTime: 0 }));
        return (await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id])).rows[0].status === "paid";
      },
      { what: `${orderId} paid`, timeout: 120_000 },
    );
    return { id, to };
  };
  const statusOf = async (id: string) => (await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id])).rows[0].status;

  // The old settler signs the first sweep and stops before broadcasting it (the service is stopped for the rotation).
  const first = await pay("rotate-1", "2");
  const oldSettler = privateKeyToAccount(svc.deps.config.SETTLER_PRIVATE_KEY as `0x${string}`).address.toLowerCase();
  await settleChain(svc.deps, chain, {
    beforeBroadcast: () => {
      throw new Error("stopped for the rotation");
    },
  }).catch(() => {});
  expect((await svc.deps.db.pool.query(`SELECT signer, status FROM settlements`)).rows).toEqual([{ signer: oldSettler, status: "signed" }]);

  // Restarted with the new key: a second payment, and passes until both complete.
  const second = await pay("rotate-2", "3");
  await waitFor(
    async () => {
      await settleChain(rotated, chain);
      return (await statusOf(first.id)) === "completed" && (await statusOf(second.id)) === "completed";
    },
    { what: "both payments completed", timeout: 150_000 },
  );
  const { rows } = await svc.deps.db.pool.query(`SELECT signer, status, payment_ids FROM settlements ORDER BY created_at`);
  expect(rows).toEqual([
    { signer: oldSettler, status: "mined", payment_ids: [first.id] },
    { signer: privateKeyToAccount(newKey).address.toLowerCase(), status: "mined", payment_ids: [second.id] },
  ]);
  expect(await h.balanceOf("USDT", first.to)).toBe(parseUnits("2", 6) - 100_000n);
  expect(await h.balanceOf("USDT", second.to)).toBe(parseUnits("3", 6) - 100_000n);
});
