import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createDeps } from "../../../app/deps.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitIndexed, stepUntil } from "../../helpers/chain.js";
import { startDeadRpc } from "../../helpers/dead-rpc.js";
import { paymentKit } from "../../helpers/payment-kit.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// withdraw_request (issue 17): a merchant's withdraw of a partial payment is recorded as `withdraw_request` whatever
// the settler is doing, visible in GET /v1/payments, left alone by detection, kept through a settler pass whose chain
// does not answer, and executed by the next settler pass that can reach the chain: `withdrawing` in the transaction
// that stores the signed sweep, then `withdrawn`, the payout receiving exactly what was received. No background
// processors: "the settler is stopped" is the absence of settleChain calls.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const pool = () => svc.deps.db.pool;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;
const { shop, create, row } = paymentKit(() => svc, CHAIN);

async function history(id: string) {
  const { rows } = await pool().query(`SELECT from_status, to_status, reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
  return rows;
}
async function settlementsOf(id: string) {
  const { rows } = await pool().query(`SELECT tx_hash, status FROM settlements WHERE $1 = ANY(payment_ids) ORDER BY created_at`, [id]);
  return rows;
}
const indexedPast = (block: bigint) => waitIndexed(svc.deps.db, CHAIN, block);
const until = stepUntil;
const detect = () => detector().run(svc.deps);
const settle = () => settleChain(svc.deps, chain());

describe("withdraw_request", () => {
  it("is recorded and visible while no settler runs, survives detection and an unreachable chain, and is executed by the next settler pass", async () => {
    const m = await shop("withdraw-request");
    const to = payout();
    const id = await create(m, { merchant: to, amount: "1" });
    const address = (await row(id)).recipient_address;
    await indexedPast((await h().pay("USDT", address, 400_000n)).blockNumber);
    await until("partial payment recorded", detect, async () => (await row(id)).received_units === "400000");

    const res = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    expect([res.status, res.body]).toEqual([
      200,
      { success: true, error: null, data: { paymentId: id, status: "withdraw_request", receivedAmount: "0.4" } },
    ]);
    const list = await svc.http("GET", `/v1/payments?status=withdraw_request`, { apiKey: m.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: any) => [p.paymentId, p.status, p.receivedAmount])).toEqual([[id, "withdraw_request", "0.4"]]);
    expect(await history(id)).toEqual([
      { from_status: "pending", to_status: "withdraw_request", reason: "manual withdraw by the merchant" },
    ]);
    // Asking again: the request is already recorded.
    const again = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    expect([again.status, again.body]).toEqual([409, { success: false, error: "Payment has no partial payment to withdraw", data: null }]);

    // Blocks go by and detection runs: the request stays as it is, nothing is signed.
    await indexedPast((await h().pub.getBlockNumber()) + 2n);
    await detect();
    await detect();
    expect(await row(id)).toMatchObject({ status: "withdraw_request", received_units: "400000" });
    expect(await settlementsOf(id)).toEqual([]);

    // A settler whose chain does not answer: its pass fails, the request is still there.
    const rpc = await startDeadRpc();
    const unreachable = createDeps({ env: { ...svc.deps.env, [`RPC_URL_${CHAIN}`]: rpc.url }, now: svc.clock.now });
    try {
      await expect(
        settleChain(
          unreachable,
          unreachable.chains.find((c) => c.chainId === CHAIN)!,
        ),
      ).rejects.toThrow();
      expect(rpc.connections).toBeGreaterThan(0);
    } finally {
      await unreachable.db.close();
      await rpc.close();
    }
    expect(await row(id)).toMatchObject({ status: "withdraw_request", received_units: "400000" });
    expect(await settlementsOf(id)).toEqual([]);
    expect(await h().balanceOf("USDT", to)).toBe(0n);

    // The settler runs: the request is taken with the signed sweep, then withdrawn once the sweep is indexed.
    await until("withdrawn", settle, async () => (await row(id)).status === "withdrawn");
    const sweeps = await settlementsOf(id);
    expect(sweeps).toEqual([{ tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), status: "mined" }]);
    const hash = sweeps[0].tx_hash;
    expect(await history(id)).toEqual([
      { from_status: "pending", to_status: "withdraw_request", reason: "manual withdraw by the merchant" },
      { from_status: "withdraw_request", to_status: "withdrawing", reason: `withdrawal sweep signed: ${hash}` },
      { from_status: "withdrawing", to_status: "withdrawn", reason: "partial payment withdrawn" },
    ]);
    expect(await row(id)).toMatchObject({ withdrawn_units: "400000", withdrawal_tx_hash: hash });
    // Exactly what was received, with no fee; the wallet is empty.
    expect(await h().balanceOf("USDT", to)).toBe(400_000n);
    expect(await h().balanceOf("USDT", address)).toBe(0n);
    const { rows: events } = await pool().query(`SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1`, [id]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: "payment.withdrawn",
      payload: { status: "withdrawn", receivedAmount: "0.4", amountWithdrawn: "0.4", withdrawalTransactionHash: hash },
    });
    // More passes change nothing.
    await settle();
    expect(await settlementsOf(id)).toEqual(sweeps);
    expect(await history(id)).toHaveLength(3);
  });
});
