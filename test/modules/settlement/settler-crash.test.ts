import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { parseUnits, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { detectPayments } from "../../../modules/payments/index.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// A settler killed between sending a sweep and recording it never sweeps twice after restart,
// and never forgets the transaction it sent.
let svc: TestService;
let merchant: { id: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  merchant = await svc.newMerchant();
});
afterAll(() => svc?.stop());
vi.setConfig({ testTimeout: 300_000 });

describe.each(["after-broadcast", "before-broadcast"])("settler killed %s", (crashAt) => {
  it("restarts without a double sweep and completes the payment", async () => {
    const chain = svc.deps.chains.find((c) => c.chainId === 777177)!;
    const h = chainHelpers(chain);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const res = await svc.http("POST", "/payments", {
      apiKey: merchant.apiKey,
      body: { merchant: to, chainId: "777177", token: h.token("USDC").address, amount: "4", gasless: true, orderId: `crash-${crashAt}` },
    });
    const id = res.body.url.split("/pay/")[1];
    const {
      rows: [p],
    } = await svc.deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
    await h.pay("USDC", p.recipient_address, parseUnits("4", 6));
    await waitFor(
      async () => {
        await detectPayments(svc.deps, chain, await h.pub.getBlockNumber({ cacheTime: 0 }));
        const { rows } = await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id]);
        return rows[0].status === "paid";
      },
      { what: "paid", timeout: 120_000 },
    );

    const child = spawnSync(process.execPath, ["--import", "tsx", path.resolve("test/modules/settlement/fixtures/settle-and-crash.ts")], {
      env: { ...process.env, SERVICE_ENV: JSON.stringify(svc.deps.env), CHAIN_ID: "777177", CRASH_AT: crashAt },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(137);
    const { rows: before } = await svc.deps.db.pool.query(`SELECT status, tx_hash FROM settlements WHERE $1 = ANY(payment_ids)`, [id]);
    expect(before).toHaveLength(1);
    expect(before[0].status).toBe("signed"); // sent, or about to be, but not recorded as sent

    // Restart: the same process logic, now uninterrupted.
    await waitFor(
      async () => {
        await settleChain(svc.deps, chain);
        const { rows } = await svc.deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id]);
        return rows[0].status === "completed";
      },
      { what: "completed after restart", timeout: 120_000 },
    );

    const { rows: after } = await svc.deps.db.pool.query(`SELECT status, tx_hash FROM settlements WHERE $1 = ANY(payment_ids)`, [id]);
    expect(after).toEqual([{ status: "mined", tx_hash: before[0].tx_hash }]);
    const { sweep } = svc.deps.db.views;
    const sweeps = await svc.deps.db.orm
      .select({ hash: sweep.transactionHash })
      .from(sweep)
      .where(eq(sweep.wallet, p.recipient_address.toLowerCase() as Hex));
    expect(sweeps.map((s) => s.hash)).toEqual([before[0].tx_hash]);
    expect(await h.balanceOf("USDC", to)).toBe(4_000_000n - 100_000n);
    const {
      rows: [done],
    } = await svc.deps.db.pool.query(`SELECT settlement_tx_hash FROM payments WHERE id = $1`, [id]);
    expect(done.settlement_tx_hash).toBe(before[0].tx_hash);
  });
});
