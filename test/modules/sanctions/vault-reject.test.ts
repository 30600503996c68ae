import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { cliSanctionsList, cliSanctionsReject, cliSanctionsRelease, cliSanctionsReturn } from "../../../cli/sanctions.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { settleReturns } from "../../../modules/sanctions/index.js";
import { vaultDeposits } from "../../../processors/vault-deposits.js";
import { vaultSweeper } from "../../../processors/vault-sweeper.js";
import { chainHelpers, stepUntil, waitIndexed } from "../../helpers/chain.js";
import { asDeployer } from "../../helpers/deployer-lock.js";
import { flagOnOracle, sanctionsRows } from "../../helpers/sanctions.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Vault deposits from flagged senders (docs/sanctions.md, "Vault deposits: `held`", "Operator CLI"): each is `held`
// with its hold row and the vault webhook `deposit.failed` (`status: "held"`), and its (address, token) is not swept.
// The operator rejects one: no funds move, it stays `held`, with the audit row, and a clean deposit that arrives later
// at that address waits behind it (frozen) until the operator returns the rejected deposit's funds (`sanctions
// return`): then it is `returned` and the clean one is swept. The operator releases the other: it is swept to the
// business wallet at the vault's fee. test/modules/sanctions/screening.test.ts covers a held deposit released with a clean
// one of the same address; this file covers the webhook and the rejection. Recording and sweeping are driven pass by
// pass (no background processors).

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;
const USDT = 10n ** 6n;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false, env: { VAULT_CONFIRMATIONS: "2" } });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const pool = () => svc.deps.db.pool;
const rows = () => sanctionsRows(svc.deps.db);
const usdt = () => h().token("USDT").address;

const depositOf = async (tx: Hex) =>
  (await pool().query(`SELECT * FROM vault_deposits WHERE deposit_tx_hash = $1`, [tx.toLowerCase()])).rows[0] as
    Record<string, any> | undefined;
async function vaultOutbox(depositId: string) {
  const { rows: d } = await pool().query(
    `SELECT event, payload FROM webhook_deliveries WHERE deposit_id = $1 AND kind = 'vault' ORDER BY created_at, event`,
    [depositId],
  );
  return d as { event: string; payload: Record<string, any> }[];
}
async function depositMoves(depositId: string) {
  const { rows: e } = await pool().query(
    `SELECT from_status, to_status FROM vault_deposit_events WHERE deposit_id = $1 ORDER BY created_at, id`,
    [depositId],
  );
  return e.map((r) => [r.from_status, r.to_status]);
}
async function sweepsCovering(ids: string[]): Promise<number> {
  const { rows: s } = await pool().query(`SELECT count(*)::int AS n FROM vault_sweeps WHERE deposit_ids && $1::uuid[]`, [ids]);
  return s[0].n;
}

describe("vault deposits from flagged senders: reject and release", () => {
  it("held with deposit.failed (status held); a rejected one stays held and unswept until returned; a released one is swept", async () => {
    const m = await svc.newMerchant({ name: "Vault with flagged users" });
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const created = await svc.http("POST", "/vault/v1/config", {
      apiKey: m.apiKey,
      body: {
        businessName: "Flagged users",
        walletAddress: wallet,
        enabledTokens: [{ chainId: CHAIN, token: usdt(), tokenSymbol: "USDT" }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const hook = await svc.http("PUT", "/vault/v1/config/webhooks", {
      apiKey: m.apiKey,
      body: { url: "https://127.0.0.1:9/vault-hooks", events: ["deposit.*"] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const addressOf = async (externalUserId: string): Promise<Address> => {
      const user = await svc.http("POST", "/vault/v1/users", {
        apiKey: m.apiKey,
        body: { externalUserId, chainId: CHAIN, tokenAddress: usdt() },
      });
      expect(user.status, JSON.stringify(user.body)).toBe(201);
      return user.body.data.depositAddress as Address;
    };
    const toReject = await addressOf("user-to-reject");
    const toRelease = await addressOf("user-to-release");

    const [flaggedA, flaggedB] = [await h().newPayer(), await h().newPayer()];
    await flagOnOracle(svc.deps.db, chain(), flaggedA.address, flaggedB.address);
    const txA = (await h().pay("USDT", toReject, 10n * USDT, flaggedA)).transactionHash;
    const txB = (await h().pay("USDT", toRelease, 4n * USDT, flaggedB)).transactionHash;

    const recorder = vaultDeposits();
    const sweeper = vaultSweeper();
    const pass = async () => {
      await recorder.run(svc.deps);
      await sweeper.run(svc.deps);
    };
    await stepUntil(
      "both deposits held",
      pass,
      async () => (await depositOf(txA))?.status === "held" && (await depositOf(txB))?.status === "held",
    );
    const a = (await depositOf(txA))!;
    const b = (await depositOf(txB))!;
    const oracle = `oracle:${chain().sanctionsOracle!.toLowerCase()}`;
    for (const [d, tx, address, payer, amount] of [
      [a, txA, toReject, flaggedA.address, 10n * USDT],
      [b, txB, toRelease, flaggedB.address, 4n * USDT],
    ] as const) {
      // One deposit.failed per deposit, saying `held`.
      const hooks = await vaultOutbox(d.id);
      expect(hooks.map((x) => x.event)).toEqual(["deposit.failed"]);
      expect(hooks[0]!.payload).toMatchObject({
        event: "deposit.failed",
        data: {
          depositId: d.id,
          externalUserId: d === a ? "user-to-reject" : "user-to-release",
          status: "held",
          amount: amount.toString(),
          tokenAddress: getAddress(usdt()),
          chainId: CHAIN,
          depositAddress: getAddress(address),
          depositTxHash: tx.toLowerCase(),
        },
      });
      expect(await rows().holds("deposit_id", d.id)).toEqual([
        { subject: "vault_deposit", address: payer.toLowerCase(), source: oracle, from_status: "detected", status: "held" },
      ]);
      expect(await depositMoves(d.id)).toEqual([
        [null, "detected"],
        ["detected", "held"],
      ]);
    }
    expect(await sweepsCovering([a.id, b.id])).toBe(0);
    expect(await h().balanceOf("USDT", toReject)).toBe(10n * USDT);
    expect(await h().balanceOf("USDT", toRelease)).toBe(4n * USDT);

    // Reject A: the operator's decision on record; nothing moves, the deposit stays held.
    const rejectReason = "confirmed match: OFAC SDN";
    const rejected = await cliSanctionsReject(
      svc.deps.db,
      { depositId: a.id },
      { reason: rejectReason, operator: "compliance-officer" },
      svc.clock.now,
    );
    expect(rejected).toMatchObject({
      action: "reject",
      depositId: a.id,
      paymentId: null,
      recoveryId: null,
      status: "held",
      actor: "compliance-officer",
      reason: rejectReason,
    });
    expect(rejected.funds).toContain("not moved");
    expect(await rows().actions("deposit_id", a.id)).toEqual([
      { action: "reject", actor: "compliance-officer", reason: rejectReason, subject_from: "held", subject_to: "held" },
    ]);
    expect((await rows().holds("deposit_id", a.id)).map((x) => x.status)).toEqual(["rejected"]);

    // Release B: back to detected, swept on a next pass.
    const released = await cliSanctionsRelease(
      svc.deps.db,
      { depositId: b.id },
      { reason: "cleared after review", operator: "compliance-officer" },
      svc.clock.now,
    );
    expect(released).toMatchObject({ action: "release", depositId: b.id, status: "detected" });
    expect(await rows().actions("deposit_id", b.id)).toEqual([
      { action: "release", actor: "compliance-officer", reason: "cleared after review", subject_from: "held", subject_to: "detected" },
    ]);

    // A clean deposit reaches the rejected address afterwards: it waits behind the rejected one (a sweep would move both).
    const txA2 = (await h().pay("USDT", toReject, 3n * USDT)).transactionHash;
    await stepUntil(
      "the released deposit swept, the clean one recorded",
      pass,
      async () => (await depositOf(txB))?.status === "completed" && (await depositOf(txA2)) !== undefined,
    );
    for (let i = 0; i < 3; i++) await pass();

    const a2 = (await depositOf(txA2))!;
    expect((await depositOf(txA))!.status).toBe("held");
    expect(a2.status).toBe("detected");
    expect(await sweepsCovering([a.id, a2.id])).toBe(0);
    expect(await h().balanceOf("USDT", toReject)).toBe(13n * USDT);
    // The released deposit at the vault's 0.25%: 4 USDT less 10,000 units.
    expect(await depositOf(txB)).toMatchObject({ status: "completed", amount: "4000000", fee: "10000", net_amount: "3990000" });
    expect(await h().balanceOf("USDT", wallet)).toBe(4n * USDT - 10_000n);
    expect(await h().balanceOf("USDT", toRelease)).toBe(0n);
    const bMoves = await depositMoves(b.id);
    expect(bMoves.slice(0, 3)).toEqual([
      [null, "detected"],
      ["detected", "held"],
      ["held", "detected"],
    ]);
    expect(bMoves.at(-1)).toEqual(["processing", "completed"]);

    // Webhooks: a rejection (and a release) sends nothing more; the clean deposit that waits sends nothing.
    expect((await vaultOutbox(a.id)).map((x) => x.event)).toEqual(["deposit.failed"]);
    expect((await vaultOutbox(b.id)).map((x) => x.event)).toEqual(["deposit.failed", "deposit.completed"]);
    expect(await vaultOutbox(a2.id)).toEqual([]);
    expect(await depositMoves(a.id)).toEqual([
      [null, "detected"],
      ["detected", "held"],
    ]);

    // What the business and the operator see.
    const held = await svc.http("GET", "/vault/v1/deposits?status=held", { apiKey: m.apiKey });
    expect(held.status, JSON.stringify(held.body)).toBe(200);
    expect(held.body.data.deposits.map((d: any) => [d.depositId, d.status])).toEqual([[a.id, "held"]]);
    const recover = await svc.http("POST", `/vault/v1/deposits/${a.id}/recover`, { apiKey: m.apiKey });
    expect({ status: recover.status, body: recover.body }).toEqual({
      status: 409,
      body: { success: false, error: "Deposit is held by sanctions screening" },
    });
    const listed = (await cliSanctionsList(svc.deps.db)).filter((x) => x.depositId === a.id || x.depositId === b.id);
    expect(listed).toEqual([
      expect.objectContaining({
        kind: "hold",
        subject: "vault_deposit",
        depositId: a.id,
        status: "rejected",
        subjectStatus: "held",
        sanctionedAddress: getAddress(flaggedA.address),
        source: oracle,
        depositAddress: getAddress(toReject),
        token: getAddress(usdt()),
        amountUnits: (10n * USDT).toString(),
        merchantId: m.id,
        frozen: { deposits: 1, amountUnits: (3n * USDT).toString() },
        actions: [{ action: "reject", actor: "compliance-officer", reason: rejectReason, at: expect.any(Number) }],
      }),
    ]);
    expect((await cliSanctionsList(svc.deps.db, { all: true })).find((x) => x.depositId === b.id)).toMatchObject({
      status: "released",
      subjectStatus: "completed",
      frozen: null,
    });

    // The rejection stands: neither released nor rejected again.
    for (const decide of [cliSanctionsRelease, cliSanctionsReject])
      await expect(decide(svc.deps.db, { depositId: a.id }, { reason: "again", operator: "ops" }, svc.clock.now)).rejects.toThrow(
        "Deposit is not held by sanctions screening",
      );
    for (let i = 0; i < 2; i++) await pass();
    expect((await depositOf(txA))!.status).toBe("held");
    expect((await depositOf(txA2))!.status).toBe("detected");
    expect(await h().balanceOf("USDT", toReject)).toBe(13n * USDT);

    // The operator returns the rejected deposit's funds with the factory owner's key: its own 10 USDT, not the clean
    // 3 USDT behind it (test/modules/sanctions/return.test.ts covers the checks). Mined, not final: the group still waits.
    const returnTo = privateKeyToAccount(generatePrivateKey()).address;
    const giveBack = () =>
      cliSanctionsReturn(
        svc.deps.db,
        svc.deps.chains,
        LOCAL_ROLES.deployer,
        { depositId: a.id },
        { to: returnTo, reason: "returned under licence", operator: "compliance-officer", yes: true },
        svc.deps.config,
      );
    // A deposit is returned only once final (a re-org could still take it away, and the return would take clean funds).
    await h().mine(chain().finalityBlocks);
    const returned = await asDeployer(svc.deps.db, giveBack);
    expect(returned).toMatchObject({
      subject: "vault_deposit",
      holdStatus: "rejected",
      status: "mined",
      amountUnits: (10n * USDT).toString(),
      balanceUnits: (13n * USDT).toString(),
    });
    expect(await h().balanceOf("USDT", toReject)).toBe(3n * USDT);
    expect(await h().balanceOf("USDT", returnTo)).toBe(10n * USDT);
    await pass();
    expect((await depositOf(txA))!.status).toBe("held");
    expect((await depositOf(txA2))!.status).toBe("detected");

    // Final and indexed: the deposit is `returned`, with its audit row, and the clean deposit is swept at last.
    await h().mine(chain().finalityBlocks);
    await waitIndexed(svc.deps.db, CHAIN, BigInt((returned as { blockNumber: string }).blockNumber));
    await stepUntil(
      "the deposit returned",
      async () => {
        await recorder.run(svc.deps); // the sweeper reads the address's balance at the recorder's tip
        await settleReturns(svc.deps, chain());
      },
      async () => (await depositOf(txA))!.status === "returned",
    );
    expect(await depositMoves(a.id)).toEqual([
      [null, "detected"],
      ["detected", "held"],
      ["held", "returned"],
    ]);
    expect(await depositOf(txA)).toMatchObject({ amount: "10000000", fee: "0", net_amount: "0", sweep_id: null });
    expect((await rows().holds("deposit_id", a.id)).map((x) => x.status)).toEqual(["returned"]);
    expect((await rows().actions("deposit_id", a.id)).map((x) => [x.action, x.actor, x.subject_from, x.subject_to])).toEqual([
      ["reject", "compliance-officer", "held", "held"],
      ["return", "compliance-officer", "held", "returned"],
    ]);
    await stepUntil("the clean deposit swept", pass, async () => (await depositOf(txA2))!.status === "completed");
    expect(await depositOf(txA2)).toMatchObject({ amount: "3000000", fee: "7500", net_amount: "2992500" });
    // Nothing of the returned funds was taken for an unrecorded deposit (and charged the fee).
    const { rows: excess } = await pool().query(`SELECT id FROM vault_deposits WHERE address = $1 AND transfer_id LIKE 'balance:%'`, [
      toReject.toLowerCase(),
    ]);
    expect(excess).toEqual([]);
    expect(await h().balanceOf("USDT", toReject)).toBe(0n);
    expect(await h().balanceOf("USDT", wallet)).toBe(4n * USDT - 10_000n + 3n * USDT - 7_500n);
    const listedReturned = await svc.http("GET", "/vault/v1/deposits?status=returned", { apiKey: m.apiKey });
    expect(listedReturned.status, JSON.stringify(listedReturned.body)).toBe(200);
    expect(listedReturned.body.data.deposits.map((d: any) => [d.depositId, d.status])).toEqual([[a.id, "returned"]]);
    // No vault webhook for a return (the spec's deposit events are completed and failed).
    expect((await vaultOutbox(a.id)).map((x) => x.event)).toEqual(["deposit.failed"]);
  });
});
