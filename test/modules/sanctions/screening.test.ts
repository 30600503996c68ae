import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { sanctionsOracleAbi } from "../../../abis/SanctionsOracle.js";
import { indexerProgress } from "../../../db/indexer-status.js";
import { cliSanctionsList, cliSanctionsReject, cliSanctionsRelease } from "../../../cli/sanctions.js";
import { totalFeeUnits } from "../../../modules/payments/index.js";
import { RECOVERY_HELD_ERROR, UNAVAILABLE_RETRY_MS } from "../../../modules/sanctions/index.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { detector } from "../../../processors/detector.js";
import { reserve } from "../../../modules/settlement/index.js";
import { settleChain } from "../../../processors/settler.js";
import { vaultDeposits } from "../../../processors/vault-deposits.js";
import { vaultSweeper } from "../../../processors/vault-sweeper.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { flagOnOracle, sanctionsRows } from "../../helpers/sanctions.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Sanctions screening on the real stack (docs/sanctions.md): the local sanctions oracle (contracts/SanctionsOracle.sol,
// deployed on every local chain) and an address list file flag payers; detection and settlement are driven pass by
// pass (no background processors), so a held payment can be watched not being swept. A payment from a flagged sender
// goes to `sanctioned` with `payment.sanctioned` in the outbox and its funds stay at the deposit address until the
// operator releases it (then it completes) or rejects it (it never settles; no funds move). A withdraw request is
// screened before its sweep, a recovery of unexpected funds before it is signed, and held funds cannot be recovered.
// An oracle that cannot answer holds payments back (fail closed, with a backoff) until SANCTIONS_FAIL_MODE=open. A
// vault deposit from a flagged sender is `held`, and its (address, token) is not swept, until released.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;
const WAIT = { timeout: 120_000 };
const USDT = 10n ** 6n;

/** The operator's list file: comments only at first; tests append addresses (it is re-read when it changes). */
const listDir = fs.mkdtempSync(path.join(os.tmpdir(), "sanctions-"));
const listFile = path.join(listDir, "sanctioned.txt");
fs.writeFileSync(listFile, "# sanctioned addresses, one a line\n\n");

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false, env: { SANCTIONS_LIST_FILE: listFile, VAULT_CONFIRMATIONS: "2" } });
});
afterAll(async () => {
  await svc?.stop();
  fs.rmSync(listDir, { recursive: true, force: true });
});

type Shop = { id: string; apiKey: string };
const chainOf = (s: TestService, chainId = CHAIN) => s.deps.chains.find((c) => c.chainId === chainId)!;
const payout = () => privateKeyToAccount(generatePrivateKey()).address;

/** The helpers of one service (`svc` or another one this file starts). */
function on(s: TestService, chainId = CHAIN) {
  const chain = () => chainOf(s, chainId);
  const h = () => chainHelpers(chain());
  const pool = () => s.deps.db.pool;
  const row = async (id: string) => (await pool().query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
  const until = (what: string, step: () => Promise<unknown>, done: () => Promise<boolean>) =>
    waitFor(
      async () => {
        await step();
        return done();
      },
      { ...WAIT, interval: 300, what },
    );
  const settle = () => settleChain(s.deps, chain());
  return {
    chain,
    h,
    pool,
    row,
    until,
    settle,
    async shop(name: string): Promise<Shop> {
      const m = await s.newMerchant({ name });
      const res = await s.http("PUT", "/v1/webhooks", {
        apiKey: m.apiKey,
        body: { url: "https://127.0.0.1:9/hooks", events: [...PAYMENT_EVENTS] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return m;
    },
    /** A payment in `body.token`, else in the chain's USDT stablecoin (`USDT0` on 137: chains/registry.ts). */
    async create(m: Shop, body: Record<string, unknown>): Promise<string> {
      const token = body.token ?? h().token(chainId === 137 ? "USDT0" : "USDT").address;
      const res = await s.http("POST", "/payments", {
        apiKey: m.apiKey,
        body: { orderId: `order-${Math.random()}`, chainId: String(chainId), ...body, token },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.url as string).split("/pay/")[1]!;
    },
    async indexedPast(block: bigint) {
      await waitFor(
        async () => {
          const p = (await indexerProgress(s.deps.db))?.find((x) => x.chainId === chainId);
          return p && BigInt(p.indexedBlock) >= block;
        },
        { ...WAIT, what: `block ${block} indexed on ${chainId}` },
      );
    },
    /** Pays the payment's whole due amount of USDT from `payer` and detects it: `paid`. */
    async payInFull(id: string, payer: PrivateKeyAccount) {
      const p = await row(id);
      await this.indexedPast((await h().pay("USDT", p.recipient_address, BigInt(p.due_units), payer)).blockNumber);
      await until(
        "paid",
        () => detector().run(s.deps),
        async () => (await row(id)).status === "paid",
      );
      return p;
    },
    async settlementsOf(id: string): Promise<number> {
      const { rows } = await pool().query(`SELECT count(*)::int AS n FROM settlements WHERE payment_ids @> ARRAY[$1]::uuid[]`, [id]);
      return rows[0].n;
    },
    async outbox(id: string, event: string) {
      const { rows } = await pool().query(`SELECT payload FROM webhook_deliveries WHERE payment_id = $1 AND event = $2`, [id, event]);
      return rows.map((r) => r.payload);
    },
    /** The service's sanctions rows (holds, actions) of one subject (test/helpers/sanctions.ts). */
    rows: () => sanctionsRows(s.deps.db),
  };
}

describe("sanctions screening of payments", () => {
  it("the local oracle is deployed on every local chain and only its owner can flag", async () => {
    for (const chainId of [137, CHAIN]) {
      const chain = chainOf(svc, chainId);
      expect(chain.sanctionsOracle, `chain ${chainId}`).toBeDefined();
      const h = chainHelpers(chain);
      const stranger = await h.newPayer();
      await expect(
        h.walletOf(stranger).writeContract({
          address: chain.sanctionsOracle!,
          abi: sanctionsOracleAbi,
          functionName: "addToSanctionsList",
          args: [[stranger.address]],
        }),
      ).rejects.toThrow(/OwnableUnauthorizedAccount/);
    }
  });

  it("a payment from an address the oracle flags is sanctioned and never swept until the operator releases it", async () => {
    const t = on(svc);
    const oracle = t.chain().sanctionsOracle!;
    const m = await t.shop("flagged payer");
    const payer = await t.h().newPayer();
    await flagOnOracle(svc.deps.db, t.chain(), payer.address);
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "5", gasless: true });
    const p = await t.payInFull(id, payer);
    const wallet = p.recipient_address as Address;
    const due = BigInt(p.due_units);

    await t.until("sanctioned", t.settle, async () => (await t.row(id)).status === "sanctioned");
    // Pass after pass, nothing moves: no sweep signed, the funds stay at the deposit address.
    for (let i = 0; i < 4; i++) await t.settle();
    expect((await t.row(id)).status).toBe("sanctioned");
    expect(await t.settlementsOf(id)).toBe(0);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(due);
    expect(await t.h().balanceOf("USDT", to)).toBe(0n);

    const events = await t.outbox(id, "payment.sanctioned");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: "payment.sanctioned",
      paymentId: id,
      status: "sanctioned",
      recipientAddress: wallet,
      sanctionedAddress: getAddress(payer.address),
      source: "oracle",
    });
    expect(await t.rows().holds("payment_id", id)).toEqual([
      {
        subject: "payment",
        address: payer.address.toLowerCase(),
        source: `oracle:${oracle.toLowerCase()}`,
        from_status: "paid",
        status: "held",
      },
    ]);
    const { rows: moves } = await t
      .pool()
      .query(`SELECT from_status, to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
    expect(moves.at(-1)).toEqual({ from_status: "paid", to_status: "sanctioned" });
    const listed = (await cliSanctionsList(svc.deps.db)).find((x) => x.paymentId === id);
    expect(listed).toMatchObject({
      subject: "payment",
      status: "held",
      subjectStatus: "sanctioned",
      sanctionedAddress: getAddress(payer.address),
      depositAddress: getAddress(wallet),
      amountUnits: due.toString(),
      merchantId: m.id,
      actions: [],
    });

    // The operator releases it: back to paid in the transaction that writes the audit row, then it settles.
    const decision = { reason: "false positive: reviewed by compliance", operator: "compliance-officer" };
    const released = await cliSanctionsRelease(svc.deps.db, { paymentId: id }, decision, svc.clock.now);
    expect(released).toMatchObject({ action: "release", paymentId: id, status: "paid", actor: "compliance-officer" });
    expect((await t.row(id)).status).toBe("paid");
    expect(await t.rows().actions("payment_id", id)).toEqual([
      { action: "release", actor: "compliance-officer", reason: decision.reason, subject_from: "sanctioned", subject_to: "paid" },
    ]);
    expect((await t.rows().holds("payment_id", id)).map((h) => h.status)).toEqual(["released"]);
    await expect(cliSanctionsRelease(svc.deps.db, { paymentId: id }, decision, svc.clock.now)).rejects.toThrow(
      "Payment is not held by sanctions screening",
    );

    // The oracle still flags the payer: the release stands, screening does not hold it again.
    await t.until("completed", t.settle, async () => (await t.row(id)).status === "completed");
    const done = await t.row(id);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(0n);
    expect(await t.h().balanceOf("USDT", to)).toBe(due - totalFeeUnits(done));
    expect(await t.outbox(id, "payment.sanctioned")).toHaveLength(1);
    expect(await t.outbox(id, "payment.completed")).toHaveLength(1);
  });

  it("a payment from an address no source flags completes, with nothing held", async () => {
    const t = on(svc);
    const m = await t.shop("clean payer");
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "4", gasless: true });
    const p = await t.payInFull(id, await t.h().newPayer());
    await t.until("completed", t.settle, async () => (await t.row(id)).status === "completed");
    expect(await t.h().balanceOf("USDT", to)).toBe(BigInt(p.due_units) - totalFeeUnits(await t.row(id)));
    expect(await t.rows().holds("payment_id", id)).toEqual([]);
    expect(await t.outbox(id, "payment.sanctioned")).toEqual([]);
  });

  it("a payer on the operator's list file is sanctioned; a rejection moves no funds, cancels the payment and blocks recovery", async () => {
    const t = on(svc);
    const m = await t.shop("listed payer");
    const payer = await t.h().newPayer();
    // Checksummed, with a comment: the file is read again because it changed.
    fs.appendFileSync(listFile, `${payer.address}   # added by the test\n`);
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "3", gasless: true });
    const p = await t.payInFull(id, payer);
    const wallet = p.recipient_address as Address;
    await t.until("sanctioned", t.settle, async () => (await t.row(id)).status === "sanctioned");
    expect(await t.rows().holds("payment_id", id)).toEqual([
      { subject: "payment", address: payer.address.toLowerCase(), source: `list:${listFile}`, from_status: "paid", status: "held" },
    ]);
    expect((await t.outbox(id, "payment.sanctioned"))[0]).toMatchObject({ sanctionedAddress: getAddress(payer.address), source: "list" });

    // Reject: the contracts can only pay the committed payout, so nothing moves on-chain; the payment is cancelled.
    await expect(cliSanctionsReject(svc.deps.db, { paymentId: id }, { reason: " ", operator: "x" }, svc.clock.now)).rejects.toThrow(
      "a reason is required",
    );
    const rejected = await cliSanctionsReject(
      svc.deps.db,
      { paymentId: id },
      { reason: "confirmed match: OFAC SDN", operator: "compliance-officer" },
      svc.clock.now,
    );
    expect(rejected).toMatchObject({ action: "reject", status: "cancelled" });
    expect(rejected.funds).toContain("not moved");
    expect((await t.row(id)).status).toBe("cancelled");
    expect(await t.rows().actions("payment_id", id)).toEqual([
      {
        action: "reject",
        actor: "compliance-officer",
        reason: "confirmed match: OFAC SDN",
        subject_from: "sanctioned",
        subject_to: "cancelled",
      },
    ]);
    expect((await t.outbox(id, "payment.cancelled"))[0]).toMatchObject({
      reason: "sanctions",
      sanctionedAddress: getAddress(payer.address),
    });
    for (let i = 0; i < 3; i++) await t.settle();
    expect(await t.settlementsOf(id)).toBe(0);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(BigInt(p.due_units));
    expect(await t.h().balanceOf("USDT", to)).toBe(0n);
    expect((await cliSanctionsList(svc.deps.db)).some((x) => x.paymentId === id)).toBe(false);
    expect((await cliSanctionsList(svc.deps.db, { all: true })).find((x) => x.paymentId === id)).toMatchObject({ status: "rejected" });

    // The cancelled payment's balance is not recoverable: the list says so and recover answers 409.
    const listed = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(p.order_id)}`, { apiKey: m.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data[0].unexpectedFunds).toEqual([
      expect.objectContaining({ token: getAddress(t.h().token("USDT").address), units: p.due_units, recoverable: false }),
    ]);
    const recover = await svc.http("POST", `/v1/payments/${id}/recover`, {
      apiKey: m.apiKey,
      body: { token: t.h().token("USDT").address },
    });
    expect([recover.status, recover.body]).toEqual([
      409,
      { success: false, error: "Payment funds are held by sanctions screening", data: null },
    ]);
    await expect(cliSanctionsRelease(svc.deps.db, { paymentId: id }, { reason: "again", operator: "x" }, svc.clock.now)).rejects.toThrow(
      "Payment is not held by sanctions screening",
    );
  });

  it("a withdraw request from a flagged sender is sanctioned before its sweep; held, it cannot be recovered; released, it is withdrawn", async () => {
    const t = on(svc);
    const m = await t.shop("flagged withdraw");
    const payer = await t.h().newPayer();
    fs.appendFileSync(listFile, `${payer.address}\n`);
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "1" });
    const p = await t.row(id);
    const wallet = p.recipient_address as Address;
    await t.indexedPast((await t.h().pay("USDT", wallet, 400_000n, payer)).blockNumber);
    await t.until(
      "partial payment recorded",
      () => detector().run(svc.deps),
      async () => (await t.row(id)).received_units === "400000",
    );
    const res = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    expect([res.status, res.body.data?.status]).toEqual([200, "withdraw_request"]);

    await t.until("sanctioned", t.settle, async () => (await t.row(id)).status === "sanctioned");
    for (let i = 0; i < 3; i++) await t.settle();
    expect((await t.row(id)).status).toBe("sanctioned");
    expect(await t.settlementsOf(id)).toBe(0);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(400_000n);
    expect(await t.rows().holds("payment_id", id)).toEqual([
      {
        subject: "payment",
        address: payer.address.toLowerCase(),
        source: `list:${listFile}`,
        from_status: "withdraw_request",
        status: "held",
      },
    ]);
    expect(await t.outbox(id, "payment.sanctioned")).toHaveLength(1);

    // Held funds are not recoverable (any token): the exact 409.
    for (const token of [t.h().token("USDT").address, zeroAddress]) {
      const recover = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token } });
      expect([recover.status, recover.body]).toEqual([
        409,
        { success: false, error: "Payment funds are held by sanctions screening", data: null },
      ]);
    }
    const { rows: recoveries } = await t.pool().query(`SELECT 1 FROM fund_recoveries WHERE payment_id = $1`, [id]);
    expect(recoveries).toEqual([]);

    // Released: back to withdraw_request, then the settler takes it and the payout receives exactly what was paid.
    const released = await cliSanctionsRelease(svc.deps.db, { paymentId: id }, { reason: "reviewed", operator: "ops" }, svc.clock.now);
    expect(released).toMatchObject({ action: "release", paymentId: id, status: "withdraw_request" });
    expect(await t.rows().actions("payment_id", id)).toEqual([
      { action: "release", actor: "ops", reason: "reviewed", subject_from: "sanctioned", subject_to: "withdraw_request" },
    ]);
    await t.until("withdrawn", t.settle, async () => (await t.row(id)).status === "withdrawn");
    expect(await t.h().balanceOf("USDT", to)).toBe(400_000n);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(0n);
    const { rows: moves } = await t
      .pool()
      .query(`SELECT from_status, to_status FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
    expect(moves).toEqual([
      { from_status: "pending", to_status: "withdraw_request" },
      { from_status: "withdraw_request", to_status: "sanctioned" },
      { from_status: "sanctioned", to_status: "withdraw_request" },
      { from_status: "withdraw_request", to_status: "withdrawing" },
      { from_status: "withdrawing", to_status: "withdrawn" },
    ]);
  });

  it("a recovery of funds a flagged sender sent is held before it is signed, then recovered once released", async () => {
    const t = on(svc);
    const m = await t.shop("flagged late funds");
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "2", gasless: true });
    const p = await t.payInFull(id, await t.h().newPayer());
    await t.until("completed", t.settle, async () => (await t.row(id)).status === "completed");
    const wallet = p.recipient_address as Address;

    // Another token from a flagged sender, after completion: unexpected funds the merchant asks to recover.
    const flagged = await t.h().newPayer();
    await flagOnOracle(svc.deps.db, t.chain(), flagged.address);
    const usdc = t.h().token("USDC").address;
    await t.indexedPast((await t.h().pay("USDC", wallet, 3n * USDT, flagged)).blockNumber);
    const asked = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token: usdc } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const recoveryId = asked.body.data.recoveryId as string;
    const recovery = async () => (await t.pool().query(`SELECT status, error FROM fund_recoveries WHERE id = $1`, [recoveryId])).rows[0];

    await t.until("recovery held", t.settle, async () => (await recovery()).error === RECOVERY_HELD_ERROR);
    for (let i = 0; i < 3; i++) await t.settle();
    expect(await recovery()).toEqual({ status: "requested", error: RECOVERY_HELD_ERROR });
    expect(await t.h().balanceOf("USDC", wallet)).toBe(3n * USDT);
    expect(await t.h().balanceOf("USDC", to)).toBe(0n);
    const { rows: holds } = await t
      .pool()
      .query(`SELECT subject, payment_id, address, from_status, status FROM sanctions_holds WHERE recovery_id = $1`, [recoveryId]);
    expect(holds).toEqual([
      { subject: "recovery", payment_id: id, address: flagged.address.toLowerCase(), from_status: "requested", status: "held" },
    ]);
    expect((await cliSanctionsList(svc.deps.db)).find((x) => x.recoveryId === recoveryId)).toMatchObject({
      kind: "hold",
      subject: "recovery",
      subjectStatus: "requested",
      token: getAddress(usdc),
      amountUnits: (3n * USDT).toString(),
    });
    // The payment itself is untouched: its settlement was screened clean.
    expect((await t.row(id)).status).toBe("completed");

    await cliSanctionsRelease(svc.deps.db, { recoveryId }, { reason: "known counterparty", operator: "ops" }, svc.clock.now);
    await t.until("recovered", t.settle, async () => (await recovery()).status === "recovered");
    // Less what a 3 USDC payment pays in fees (1% and the 0.10 processing fee: docs/unexpected-funds.md, "Fees").
    expect(await t.h().balanceOf("USDC", to)).toBe(3n * USDT - 130_000n);
    expect((await recovery()).error).toBeNull();
  });

  it("a transfer from a flagged sender that lands after the settlement is reserved is caught before the sweep is signed", async () => {
    const t = on(svc);
    const m = await t.shop("late flagged transfer");
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "2", gasless: true });
    const p = await t.payInFull(id, await t.h().newPayer());
    // Reserved (screened clean), not yet swept: the settler's send step has not run.
    await reserve(svc.deps, t.chain());
    expect((await t.row(id)).status).toBe("deploying_wallet");
    const flagged = await t.h().newPayer();
    await flagOnOracle(svc.deps.db, t.chain(), flagged.address);
    await t.indexedPast((await t.h().pay("USDT", p.recipient_address, 1n, flagged)).blockNumber);

    await t.until("sanctioned", t.settle, async () => (await t.row(id)).status === "sanctioned");
    expect(await t.settlementsOf(id)).toBe(0);
    expect(await t.rows().holds("payment_id", id)).toEqual([
      {
        subject: "payment",
        address: flagged.address.toLowerCase(),
        source: `oracle:${t.chain().sanctionsOracle!.toLowerCase()}`,
        from_status: "deploying_wallet",
        status: "held",
      },
    ]);
    // Released: the settlement is reserved again from `paid`; only the released address is cleared.
    const released = await cliSanctionsRelease(svc.deps.db, { paymentId: id }, { reason: "dust", operator: "ops" }, svc.clock.now);
    expect(released).toMatchObject({ status: "paid" });
    await t.until("completed", t.settle, async () => (await t.row(id)).status === "completed");
    expect(await t.h().balanceOf("USDT", p.recipient_address)).toBe(0n);
  });

  it("a native-coin payment from a flagged address is sanctioned: its sender is found from the transaction", async () => {
    const t = on(svc, 137);
    const m = await t.shop("native flagged");
    const payer = await t.h().newPayer();
    await flagOnOracle(svc.deps.db, t.chain(), payer.address);
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "10", gasless: true, token: zeroAddress });
    const p = await t.row(id);
    await t.h().sendNative(p.recipient_address, BigInt(p.due_units), payer);
    await t.until(
      "paid",
      () => detector().run(svc.deps),
      async () => (await t.row(id)).status === "paid",
    );
    await t.until("sanctioned", t.settle, async () => (await t.row(id)).status === "sanctioned");
    for (let i = 0; i < 3; i++) await t.settle();
    expect(await t.h().pub.getBalance({ address: p.recipient_address })).toBe(BigInt(p.due_units));
    expect((await t.rows().holds("payment_id", id))[0]).toMatchObject({ address: payer.address.toLowerCase(), status: "held" });
    expect(await t.h().pub.getBalance({ address: to })).toBe(0n);
  });
});

describe("a sanctions oracle that cannot answer", () => {
  let dead: TestService;
  const payoutOracle = payout();
  beforeAll(async () => {
    // The oracle's address has no contract: every isSanctioned call fails.
    dead = await startTestService({ processors: false, env: { SANCTIONS_ORACLE_ADDRESS_777177: payoutOracle } });
  });
  afterAll(async () => {
    await dead?.stop();
  });

  it("fail closed (default): the payment stays paid and unswept; fail open: it settles", async () => {
    const t = on(dead);
    expect(dead.deps.config.SANCTIONS_FAIL_MODE).toBe("closed");
    const m = await t.shop("oracle down");
    const to = payout();
    const id = await t.create(m, { merchant: to, amount: "2", gasless: true });
    const p = await t.payInFull(id, await t.h().newPayer());
    const waitOf = async () => (await cliSanctionsList(dead.deps.db)).find((x) => x.paymentId === id);
    for (let i = 0; i < 4; i++) {
      await t.settle();
      // Past the oracle's breaker and the payment's wait (UNAVAILABLE_RETRY_MS), so every pass asks again.
      dead.clock.advance(6_000);
    }
    // The operator sees it waiting, and why.
    const waiting = await waitOf();
    expect(waiting).toMatchObject({ kind: "screening", status: "waiting", waitKind: "unavailable", attempts: 4, subjectStatus: "paid" });
    const { retryAt, lastTriedAt, reason } = waiting as { retryAt: number; lastTriedAt: number; reason: string };
    expect(retryAt - lastTriedAt).toBe(UNAVAILABLE_RETRY_MS);
    expect(reason).toContain(`oracle:${payoutOracle.toLowerCase()}`);
    expect((await t.row(id)).status).toBe("paid");
    expect(await t.settlementsOf(id)).toBe(0);
    expect(await t.h().balanceOf("USDT", p.recipient_address)).toBe(BigInt(p.due_units));
    expect(await t.rows().holds("payment_id", id)).toEqual([]);
    expect(await t.outbox(id, "payment.sanctioned")).toEqual([]);

    // The operator's choice (SANCTIONS_FAIL_MODE, read on every pass): open settles it, with a warning in the log.
    dead.deps.config.SANCTIONS_FAIL_MODE = "open";
    await t.until("completed", t.settle, async () => (await t.row(id)).status === "completed");
    expect(await t.h().balanceOf("USDT", to)).toBe(BigInt(p.due_units) - totalFeeUnits(await t.row(id)));
    expect(await waitOf()).toBeUndefined();
  });
});

describe("sanctions screening of vault deposits", () => {
  it("a deposit from a flagged sender is held; its address is not swept until released", async () => {
    const t = on(svc);
    const m = await svc.newMerchant({ name: "Vault with a flagged user" });
    const wallet = payout();
    const created = await svc.http("POST", "/vault/v1/config", {
      apiKey: m.apiKey,
      body: {
        businessName: "Flagged",
        walletAddress: wallet,
        enabledTokens: [{ chainId: CHAIN, token: t.h().token("USDT").address, tokenSymbol: "USDT" }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = await svc.http("POST", "/vault/v1/users", {
      apiKey: m.apiKey,
      body: { externalUserId: "user-flagged", chainId: CHAIN, tokenAddress: t.h().token("USDT").address },
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const address = user.body.data.depositAddress as Address;

    const flaggedPayer = await t.h().newPayer();
    await flagOnOracle(svc.deps.db, t.chain(), flaggedPayer.address);
    const flaggedTx = (await t.h().pay("USDT", address, 10n * USDT, flaggedPayer)).transactionHash;
    const cleanTx = (await t.h().pay("USDT", address, 7n * USDT)).transactionHash;

    const recorder = vaultDeposits();
    const sweeper = vaultSweeper();
    const depositOf = async (tx: Hex) =>
      (await t.pool().query(`SELECT * FROM vault_deposits WHERE deposit_tx_hash = $1`, [tx.toLowerCase()])).rows[0];
    const pass = async () => {
      await recorder.run(svc.deps);
      await sweeper.run(svc.deps);
    };
    await t.until("the flagged deposit held", pass, async () => (await depositOf(flaggedTx))?.status === "held");
    await t.until("the clean deposit recorded", pass, async () => (await depositOf(cleanTx)) !== undefined);
    for (let i = 0; i < 4; i++) await pass();

    const flagged = await depositOf(flaggedTx);
    const clean = await depositOf(cleanTx);
    expect(flagged.status).toBe("held");
    // A sweep moves the whole balance of the (address, token): the clean deposit waits with it.
    expect(clean.status).toBe("detected");
    const { rows: sweeps } = await t
      .pool()
      .query(`SELECT count(*)::int AS n FROM vault_sweeps WHERE deposit_ids && $1::uuid[]`, [[flagged.id, clean.id]]);
    expect(sweeps[0].n).toBe(0);
    expect(await t.h().balanceOf("USDT", address)).toBe(17n * USDT);
    expect(await t.h().balanceOf("USDT", wallet)).toBe(0n);
    expect(await t.rows().holds("deposit_id", flagged.id)).toEqual([
      {
        subject: "vault_deposit",
        address: flaggedPayer.address.toLowerCase(),
        source: `oracle:${t.chain().sanctionsOracle!.toLowerCase()}`,
        from_status: "detected",
        status: "held",
      },
    ]);
    const listed = await svc.http("GET", "/vault/v1/deposits?status=held", { apiKey: m.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.deposits.map((d: any) => [d.depositId, d.status])).toEqual([[flagged.id, "held"]]);
    // The clean deposit waits behind the held one: the operator sees the (address, token) frozen.
    expect((await cliSanctionsList(svc.deps.db)).find((x) => x.depositId === flagged.id)).toMatchObject({
      subject: "vault_deposit",
      subjectStatus: "held",
      amountUnits: (10n * USDT).toString(),
      frozen: { deposits: 1, amountUnits: (7n * USDT).toString() },
    });
    await expect(cliSanctionsList(svc.deps.db, { limit: "abc" })).rejects.toThrow("--limit must be an integer between 1 and 1000");
    await expect(cliSanctionsList(svc.deps.db, { limit: "0" })).rejects.toThrow("--limit must be an integer between 1 and 1000");

    const released = await cliSanctionsRelease(
      svc.deps.db,
      { depositId: flagged.id },
      { reason: "cleared after review", operator: "compliance-officer" },
      svc.clock.now,
    );
    expect(released).toMatchObject({ action: "release", depositId: flagged.id, status: "detected" });
    expect(await t.rows().actions("deposit_id", flagged.id)).toEqual([
      { action: "release", actor: "compliance-officer", reason: "cleared after review", subject_from: "held", subject_to: "detected" },
    ]);
    await t.until(
      "both deposits swept",
      pass,
      async () => (await depositOf(flaggedTx)).status === "completed" && (await depositOf(cleanTx)).status === "completed",
    );
    // The vault's 0.25% on each deposit.
    expect(await t.h().balanceOf("USDT", wallet)).toBe(17n * USDT - 25_000n - 17_500n);
    expect(await t.h().balanceOf("USDT", address)).toBe(0n);
  });
});
