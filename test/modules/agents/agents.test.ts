import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  attachMerchant,
  createAgent,
  accrueAgentEarnings,
  PAYOUT_ALERT_ATTEMPTS,
  transitionWithdrawal,
} from "../../../modules/agents/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Agents end to end on Anvil (docs/agents.md): a referred direct merchant's payments in each fee mode during its 30
// free transactions (platform fee and markup waived) and after them (both charged), the agent's ledger to the smallest
// unit, and its withdrawals arriving on-chain from the payout wallet.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const CHAIN = 777177;
const payoutKey = generatePrivateKey();
const payoutWallet = privateKeyToAccount(payoutKey);
let svc: TestService;
let agent: { id: string; apiKey: string };
let merchant: { id: string; apiKey: string };
const agentPayout = privateKeyToAccount(generatePrivateKey()).address;
const h = () => chainHelpers(svc.deps.chains.find((c) => c.chainId === CHAIN)!);
const WAIT = { timeout: 150_000 };

beforeAll(async () => {
  svc = await startTestService({
    env: { GAS_TANK_CONFIRMATIONS: "1", AGENT_PAYOUT_PRIVATE_KEY: payoutKey, AGENT_PAYOUT_CONFIRMATIONS: "3" },
  });
  agent = await svc.newMerchant({ name: "Agent A" });
  await createAgent(svc.deps.db, agent.id, { markupCapBps: 100, platformShareBps: 3000 });
  merchant = await svc.newMerchant({ name: "Referred shop" });
  await attachMerchant(svc.deps.db, merchant.id, agent.id);
  // Subscribed, so the outbox holds each payment.completed body (delivery itself is tested elsewhere).
  const hook = await svc.http("PUT", "/v1/webhooks", { apiKey: merchant.apiKey, body: { url: "https://127.0.0.1:9/hook" } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  // The payout wallet pays gas for withdrawals.
  await h().pub.request({ method: "anvil_setBalance" as any, params: [payoutWallet.address, `0x${parseEther("10").toString(16)}`] as any });
});
afterAll(() => svc?.stop());

const payout = () => privateKeyToAccount(generatePrivateKey()).address;
type Mode = "gasTank" | "gasless" | "payerCoversFee";
const MODES: Mode[] = ["gasTank", "gasless", "payerCoversFee"];
const flags = (mode: Mode) => ({ gasless: mode === "gasless", payerCoversFee: mode === "payerCoversFee" });

async function create(apiKey: string, body: Record<string, unknown>) {
  const res = await svc.http("POST", "/payments", { apiKey, body: { orderId: `o-${Math.random()}`, chainId: String(CHAIN), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const { rows } = await svc.deps.db.pool.query(`SELECT recipient_address, due_units FROM payments WHERE id = $1`, [id]);
  return { id, recipient: rows[0].recipient_address as Address, due: BigInt(rows[0].due_units) };
}
async function listed(apiKey: string, id: string) {
  const { rows } = await svc.deps.db.pool.query(`SELECT order_id FROM payments WHERE id = $1`, [id]);
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(rows[0].order_id)}`, { apiKey });
  return res.body.data[0];
}
async function completed(ids: string[]) {
  await waitFor(
    async () => {
      const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE id = ANY($1) AND status = 'completed'`, [
        ids,
      ]);
      return rows[0].n === ids.length;
    },
    { ...WAIT, what: `${ids.length} payments completed` },
  );
}
const gasTankBalance = async (apiKey: string) => (await svc.http("GET", "/balance", { apiKey })).body.balance as string;

describe("a referred direct merchant", () => {
  const charged: { id: string; mode: Mode; to: Address }[] = [];

  it("pays neither platform fee nor markup on its 30 free transactions, in every mode", async () => {
    const tank = (await svc.http("GET", "/balance", { apiKey: merchant.apiKey })).body.depositAddresses.find(
      (d: any) => d.chainId === CHAIN,
    );
    await h().pay("USDT", tank.address, parseUnits("10", 6));
    await waitFor(async () => (await gasTankBalance(merchant.apiKey)) === "10.000000", { ...WAIT, what: "Gas Tank credit" });
    await svc.http("PATCH", "/v1/agent", { apiKey: agent.apiKey, body: { markupBps: 50, payoutAddress: agentPayout } });

    const free = [];
    for (const mode of MODES)
      free.push({
        mode,
        ...(await create(merchant.apiKey, { merchant: payout(), token: h().token("USDC").address, amount: "10", ...flags(mode) })),
      });
    for (let i = 0; i < 27; i++)
      free.push({
        mode: "payerCoversFee" as Mode,
        ...(await create(merchant.apiKey, { merchant: payout(), token: h().token("USDC").address, amount: "1", payerCoversFee: true })),
      });
    for (const p of free.slice(0, 3)) {
      const item = await listed(merchant.apiKey, p.id);
      expect(item.fees).toMatchObject({ platformFee: "0", agentFee: "0", feePercentage: 0 });
    }
    await Promise.all(free.map((p) => h().pay("USDC", p.recipient, p.due)));
    await completed(free.map((p) => p.id));
    const status = await svc.http("GET", "/promo-status", { apiKey: merchant.apiKey });
    expect(status.body.freeTransactions).toEqual({ eligible: false, used: 30, remaining: 0 });
    // Nothing earned: the markup and the platform fee (so the share) were waived.
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM agent_earnings WHERE agent_id = $1`, [agent.id]);
    expect(rows[0].n).toBe(0);
  });

  it("pays the platform fee and the agent's markup after them, in every mode, to the smallest unit", async () => {
    const before = await gasTankBalance(merchant.apiKey);
    const created = [];
    for (const mode of MODES) {
      const to = payout();
      const p = await create(merchant.apiKey, { merchant: to, token: h().token("USDC").address, amount: "10", ...flags(mode) });
      const item = await listed(merchant.apiKey, p.id);
      // 1% platform fee, 0.5% markup, 0.10 USD processing; no gas fee on the service chain.
      expect(item.fees).toEqual({
        platformFee: "0.1",
        agentFee: "0.05",
        gasFee: "0",
        processingFee: "0.1",
        totalFee: "0.25",
        feePercentage: 1,
      });
      expect(p.due).toBe(mode === "payerCoversFee" ? 10_250_000n : 10_000_000n);
      created.push({ ...p, mode, to });
      charged.push({ id: p.id, mode, to });
    }
    await Promise.all(created.map((p) => h().pay("USDC", p.recipient, p.due)));
    await completed(created.map((p) => p.id));
    for (const p of created) expect(await h().balanceOf("USDC", p.to)).toBe(p.mode === "gasless" ? 9_750_000n : 10_000_000n);
    // The sweeps took the whole fee, markup included, for the fee recipient in the token modes.
    const { sweep } = svc.deps.db.views;
    for (const p of created.filter((x) => x.mode !== "gasTank")) {
      const rows = await svc.deps.db.orm
        .select({ fee: sweep.fee })
        .from(sweep)
        .where(eq(sweep.wallet, p.recipient.toLowerCase() as Hex));
      expect(rows).toEqual([{ fee: 250_000n }]);
    }
    // The Gas Tank paid 0.25 USD for the Gas Tank payment (its markup at its USD value).
    expect(parseUnits(before, 6) - parseUnits(await gasTankBalance(merchant.apiKey), 6)).toBe(250_000n);
  });

  it("webhook feeDetails and the agent's ledger carry the markup and the 30% share exactly", async () => {
    const { rows: bodies } = await svc.deps.db.pool.query(
      `SELECT payload FROM webhook_deliveries WHERE payment_id = ANY($1) AND payload->>'event' = 'payment.completed'`,
      [charged.map((c) => c.id)],
    );
    expect(bodies.length).toBe(3);
    for (const { payload } of bodies)
      expect(payload.feeDetails).toMatchObject({
        platformFee: "0.1",
        agentFee: "0.05",
        processingFee: "0.1",
        gasFee: "0",
        totalFee: "0.25",
      });
    const res = await svc.http("GET", "/v1/agent", { apiKey: agent.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agentId: agent.id,
      markupBps: 50,
      markupCapBps: 100,
      platformShareBps: 3000,
      payoutAddress: agentPayout,
    });
    const usdc = h().token("USDC").address.toLowerCase();
    // Token modes: 2 x 0.05 markup, 2 x 30% of 0.1; the Gas Tank payment: 0.05 and 0.03 USD.
    expect(res.body.balances).toEqual([
      {
        chainId: "0",
        currency: "usd",
        symbol: "USD",
        decimals: 6,
        markup: "0.05",
        platformShare: "0.03",
        withdrawn: "0",
        available: "0.08",
      },
      {
        chainId: String(CHAIN),
        currency: usdc,
        symbol: "USDC",
        decimals: 6,
        markup: "0.1",
        platformShare: "0.06",
        withdrawn: "0",
        available: "0.16",
      },
    ]);
    // Equal to the sums over the payments themselves.
    const { rows } = await svc.deps.db.pool.query(
      `SELECT sum(agent_fee_units)::text AS markup, sum(floor(platform_fee_units * agent_share_bps / 10000))::text AS share
         FROM payments WHERE agent_id = $1 AND status = 'completed' AND (gasless OR payer_covers_fee)`,
      [agent.id],
    );
    expect(rows[0]).toEqual({ markup: "100000", share: "60000" });
    // Per payment: each ledger row is its payment's markup or floor(30% of its platform fee); in USD micros for the Gas
    // Tank payment (price 1: units are micros). Nothing for the 30 free ones.
    const { rows: perPayment } = await svc.deps.db.pool.query(
      `SELECT e.kind, e.currency, e.units::text AS units, p.agent_fee_units::text AS markup, p.platform_fee_units::text AS platform, p.gasless, p.payer_covers_fee
         FROM agent_earnings e JOIN payments p ON p.id = e.payment_id WHERE e.agent_id = $1 ORDER BY p.created_at, e.kind`,
      [agent.id],
    );
    expect(perPayment).toHaveLength(6);
    for (const r of perPayment) {
      expect(r.currency).toBe(r.gasless || r.payer_covers_fee ? usdc : "usd");
      expect(BigInt(r.units)).toBe(r.kind === "markup" ? BigInt(r.markup) : (BigInt(r.platform) * 3000n) / 10000n);
    }
    const merchants = await svc.http("GET", "/v1/agent/merchants", { apiKey: agent.apiKey });
    expect(merchants.body.data).toEqual([
      expect.objectContaining({ merchantId: merchant.id, name: "Referred shop", merchantType: "direct", completedPayments: 33 }),
    ]);
    expect(merchants.body.data[0].earnings).toEqual([
      { chainId: "0", currency: "usd", symbol: "USD", amount: "0.08" },
      { chainId: String(CHAIN), currency: usdc, symbol: "USDC", amount: "0.16" },
    ]);
    expect(merchants.body.data[0].volume).toEqual([
      { chainId: String(CHAIN), token: h().token("USDC").address, symbol: "USDC", amount: "87" },
    ]);
  });

  it("withdraws the token balance to the payout address once the payout wallet can cover it, and nothing twice", async () => {
    const usdc = h().token("USDC").address;
    const first = await svc.http("POST", "/v1/agent/withdrawals", { apiKey: agent.apiKey, body: { chainId: String(CHAIN), token: usdc } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ chainId: String(CHAIN), token: usdc, amount: "0.16", to: agentPayout, status: "requested" });
    const again = await svc.http("POST", "/v1/agent/withdrawals", { apiKey: agent.apiKey, body: { chainId: String(CHAIN), token: usdc } });
    expect(again).toMatchObject({ status: 409, body: { error: "Nothing to withdraw" } });
    // The payout wallet holds no USDC yet: the withdrawal waits, tried again and again, with the reason.
    await waitFor(
      async () => {
        const { rows } = await svc.deps.db.pool.query(`SELECT status, attempts FROM agent_withdrawals WHERE id = $1`, [
          first.body.withdrawalId,
        ]);
        return rows[0].status === "requested" && rows[0].attempts >= PAYOUT_ALERT_ATTEMPTS;
      },
      { ...WAIT, what: "the withdrawal to wait for funds" },
    );
    const why = `the payout wallet ${payoutWallet.address} holds 0 USDC, the withdrawal is 0.16`;
    // The agent sees why (API and dashboard data), and health tells the operator.
    const waiting = await svc.http("GET", "/v1/agent/withdrawals", { apiKey: agent.apiKey });
    expect(waiting.body.data[0]).toMatchObject({ status: "requested", error: why, nextAttemptAt: expect.any(Number) });
    const health = await svc.http("GET", "/health");
    expect(health.status).toBe(503);
    expect(health.body.agentPayouts).toMatchObject({ ok: false, waiting: 1, stuck: 1, lastError: why });
    expect(health.body.issues).toContain(`agent-payouts: 1 withdrawal(s) failed to send ${PAYOUT_ALERT_ATTEMPTS}+ times: ${why}`);
    await h().mint("USDC", payoutWallet.address, 160_000n);
    // Polled in the database: the API allows 60 requests a minute.
    await waitFor(
      async () => {
        const { rows } = await svc.deps.db.pool.query(`SELECT status FROM agent_withdrawals WHERE id = $1`, [first.body.withdrawalId]);
        return rows[0].status === "paid";
      },
      { ...WAIT, what: "withdrawal paid" },
    );
    const list = await svc.http("GET", "/v1/agent/withdrawals", { apiKey: agent.apiKey });
    expect(list.body.data[0]).toMatchObject({
      withdrawalId: first.body.withdrawalId,
      status: "paid",
      transactionHash: expect.stringMatching(/^0x/),
      error: null,
      nextAttemptAt: null,
    });
    expect((await svc.http("GET", "/health")).body.agentPayouts).toMatchObject({ ok: true, waiting: 0, stuck: 0 });
    // Every status change has its audit row, written by the one transition() (modules/agents/transition.ts).
    const { rows: trail } = await svc.deps.db.pool.query(
      `SELECT from_status, to_status FROM agent_withdrawal_events WHERE withdrawal_id = $1 ORDER BY id`,
      [first.body.withdrawalId],
    );
    expect(trail.map((r) => `${r.from_status}->${r.to_status}`)).toEqual([
      "requested->signed",
      "signed->sent",
      "sent->mined",
      "mined->paid",
    ]);
    const client = await svc.deps.db.pool.connect();
    try {
      await expect(
        transitionWithdrawal(client, first.body.withdrawalId, { from: ["paid"], to: "requested", now: Date.now() }),
      ).rejects.toThrow("illegal agent_withdrawals transition paid -> requested");
    } finally {
      client.release();
    }
    expect(await h().balanceOf("USDC", agentPayout)).toBe(160_000n);
    const res = await svc.http("GET", "/v1/agent", { apiKey: agent.apiKey });
    expect(res.body.balances[1]).toMatchObject({ withdrawn: "0.16", available: "0" });
  });

  it("pays the USD balance in a 6-decimal stablecoin; two requests at once make one withdrawal", async () => {
    await h().mint("USDT", payoutWallet.address, 80_000n);
    const body = { chainId: String(CHAIN), token: h().token("USDT").address, balance: "usd" };
    // Both requests start while another transaction holds the agent's row: they must queue on it, not both read the balance.
    const holder = await svc.deps.db.pool.connect();
    let both: Promise<{ status: number }[]>;
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM agents WHERE merchant_id = $1 FOR UPDATE`, [agent.id]);
      both = Promise.all([0, 1].map(() => svc.http("POST", "/v1/agent/withdrawals", { apiKey: agent.apiKey, body })));
      await waitFor(
        async () => {
          const { rows } = await svc.deps.db.pool.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM agents WHERE merchant_id%FOR UPDATE%'`,
          );
          return rows[0].n >= 1;
        },
        { what: "a withdrawal waiting on the agent's row" },
      );
    } finally {
      await holder.query("COMMIT");
      holder.release();
    }
    expect((await both).map((r) => r.status).sort()).toEqual([201, 409]);
    await waitFor(async () => (await h().balanceOf("USDT", agentPayout)) === 80_000n, { ...WAIT, what: "USDT withdrawal on-chain" });
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM agent_withdrawals WHERE agent_id = $1`, [agent.id]);
    expect(rows[0].n).toBe(2);
    await waitFor(
      async () => {
        const { rows } = await svc.deps.db.pool.query(`SELECT status FROM agent_withdrawals WHERE agent_id = $1 AND currency = 'usd'`, [
          agent.id,
        ]);
        return rows.length === 1 && rows[0].status === "paid";
      },
      { ...WAIT, what: "USD withdrawal paid" },
    );
    const res = await svc.http("GET", "/v1/agent", { apiKey: agent.apiKey });
    expect(res.body.balances[0]).toMatchObject({ currency: "usd", withdrawn: "0.08", available: "0" });
  });

  it("earns exactly on an 18-decimal coin at an oracle price, and records a completion's earnings once", async () => {
    const polygon = chainHelpers(svc.deps.chains.find((c) => c.chainId === 137)!);
    const p = await create(merchant.apiKey, {
      chainId: "137",
      merchant: payout(),
      token: zeroAddress,
      amount: "3.000000000000000001",
      gasless: true,
    });
    await polygon.sendNative(p.recipient, p.due);
    await completed([p.id]);
    const { rows } = await svc.deps.db.pool.query(
      `SELECT e.kind, e.units::text AS units, e.currency, e.decimals, p.agent_fee_units::text AS markup, p.platform_fee_units::text AS platform
         FROM agent_earnings e JOIN payments p ON p.id = e.payment_id WHERE e.payment_id = $1 ORDER BY e.kind`,
      [p.id],
    );
    // 0.5% and 1% of 3.000000000000000001, rounded up: 15000000000000001 and 30000000000000001 wei; 30% share rounded down.
    expect(rows).toEqual([
      {
        kind: "markup",
        units: "15000000000000001",
        currency: zeroAddress,
        decimals: 18,
        markup: "15000000000000001",
        platform: "30000000000000001",
      },
      {
        kind: "platform_share",
        units: "9000000000000000",
        currency: zeroAddress,
        decimals: 18,
        markup: "15000000000000001",
        platform: "30000000000000001",
      },
    ]);
    // Accruing the same completed payment again records nothing more.
    const { rows: row } = await svc.deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [p.id]);
    const client = await svc.deps.db.pool.connect();
    try {
      await accrueAgentEarnings(client, row[0], Date.now());
    } finally {
      client.release();
    }
    const { rows: again } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM agent_earnings WHERE payment_id = $1`, [p.id]);
    expect(again[0].n).toBe(2);
  });
});

describe("terms and isolation", () => {
  it("a referred Member-plan merchant pays no platform fee, gets no promotion, and pays the markup", async () => {
    const member = await svc.newMerchant({ name: "Member shop", type: "member" });
    await attachMerchant(svc.deps.db, member.id, agent.id);
    const to = payout();
    const p = await create(member.apiKey, { merchant: to, token: h().token("USDC").address, amount: "10", payerCoversFee: true });
    const item = await listed(member.apiKey, p.id);
    expect(item.fees).toEqual({
      platformFee: "0",
      agentFee: "0.05",
      gasFee: "0",
      processingFee: "0.1",
      totalFee: "0.15",
      feePercentage: 0,
    });
    const { rows } = await svc.deps.db.pool.query(`SELECT promo_applied FROM payments WHERE id = $1`, [p.id]);
    expect(rows[0].promo_applied).toBe(false);
    expect((await svc.http("GET", "/promo-status", { apiKey: member.apiKey })).body.freeTransactions).toEqual({
      eligible: false,
      used: 0,
      remaining: 0,
    });
    await h().pay("USDC", p.recipient, p.due);
    await completed([p.id]);
    expect(await h().balanceOf("USDC", to)).toBe(10_000_000n);
    // The markup alone: no platform fee, so no share.
    const { rows: earned } = await svc.deps.db.pool.query(`SELECT kind, units::text AS units FROM agent_earnings WHERE payment_id = $1`, [
      p.id,
    ]);
    expect(earned).toEqual([{ kind: "markup", units: "50000" }]);
  });

  it("refuses a markup above the cap, and an agent sees only its own merchants", async () => {
    const over = await svc.http("PATCH", "/v1/agent", { apiKey: agent.apiKey, body: { markupBps: 101 } });
    expect(over).toMatchObject({ status: 400, body: { error: "markupBps must be a whole number of basis points between 0 and 100" } });
    const b = await svc.newMerchant({ name: "Agent B" });
    await createAgent(svc.deps.db, b.id, { markupCapBps: 50, platformShareBps: 1000 });
    const bShop = await svc.newMerchant({ name: "B's shop" });
    await attachMerchant(svc.deps.db, bShop.id, b.id);
    const mine = await svc.http("GET", "/v1/agent/merchants", { apiKey: b.apiKey });
    expect(mine.body.data.map((m: any) => m.merchantId)).toEqual([bShop.id]);
    const theirs = await svc.http("GET", "/v1/agent/merchants", { apiKey: agent.apiKey });
    expect(theirs.body.data.map((m: any) => m.merchantId)).not.toContain(bShop.id);
    expect((await svc.http("GET", "/v1/agent", { apiKey: b.apiKey })).body.balances).toEqual([]);
    // A merchant that is no agent is refused, and another agent's merchant cannot be taken over.
    expect(await svc.http("GET", "/v1/agent", { apiKey: merchant.apiKey })).toMatchObject({
      status: 403,
      body: { error: "Not an agent account" },
    });
    await expect(attachMerchant(svc.deps.db, bShop.id, agent.id)).rejects.toThrow("Merchant is referred by another agent");
  });
});
