import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { encodeFunctionData, getAddress, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { testTokenAbi } from "../../abis/TestToken.js";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { txSender } from "../../chains/tx-sender.js";
import { startApiServer } from "../../api/server.js";
import type { ActiveChain } from "../../chains/runtime.js";
import { cliSanctionsList, cliSanctionsRelease } from "../../cli/sanctions.js";
import { createDeps } from "../../app/deps.js";
import type { AppDeps } from "../../core/deps.js";
import { indexerProgress } from "../../db/indexer-status.js";
import { migrate } from "../../db/migrate.js";
import { ponderEnv, startPonder, type PonderProcess } from "../../local/ponder.js";
import { startStack, type Stack } from "../../local/stack.js";
import { creditConfirmedDeposits } from "../../modules/gas-tank/index.js";
import { createApiKey, createMerchant } from "../../modules/merchants/index.js";
import { totalFeeUnits } from "../../modules/payments/index.js";
import { reserve } from "../../modules/settlement/index.js";
import { detector } from "../../processors/detector.js";
import { settleChain } from "../../processors/settler.js";
import { LOCAL_ROLES } from "../../local/accounts.js";
import { returnHeldFunds, settleReturns } from "../../modules/sanctions/index.js";
import { vaultDeposits } from "../../processors/vault-deposits.js";
import { vaultSweeper } from "../../processors/vault-sweeper.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { readResponse } from "../helpers/clocked-api.js";
import { sanctionsRows } from "../helpers/sanctions.js";

// Chain re-organisations on a chain of our own (re-orging the shared test chain would drop other files'
// transactions): Anvil 777177 (the indexer's finality: 30 blocks) mined by hand, so each test decides
// exactly how deep a deposit is when `anvil_reorg` takes it away. The processors are driven pass by pass.
// Sanctions screening (docs/sanctions.md) flags senders through the operator's list file (SANCTIONS_LIST_FILE,
// re-read when it changes), so flagging needs no transaction. It starts with comments only and just the two sanctions
// cases ("a sanctioned payment ...", "a held vault deposit ...") add their own fresh payers to it: every other case is
// screened clear as before (this stack's oracle, screened too, flags nobody).

// Runs with the stack project in `npm test` (vitest.config.ts): its own stack, so longer bounds than the project's.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 300_000 });
const CHAIN_ID = 777177;
let stack: Stack;
let deps: AppDeps;
let api: Awaited<ReturnType<typeof startApiServer>>;
let chain: ActiveChain;
let h: ReturnType<typeof chainHelpers>;
let dataDir: string;
/** The indexer started again by the restart test (the stack stops only the one it started). */
let restarted: PonderProcess | undefined;
/** The operator's sanctions list file (SANCTIONS_LIST_FILE). */
const listDir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-reorg-sanctions-"));
const listFile = path.join(listDir, "sanctioned.txt");
fs.writeFileSync(listFile, "# flagged by test/chaos/reorg.test.ts\n");

beforeAll(async () => {
  dataDir = path.resolve(".data/chaos", `reorg-${process.pid}`);
  stack = await startStack({ dataDir, fresh: true, chainIds: [CHAIN_ID], blockTime: 1 });
  await stack.ponder!.waitReady(180_000);
  deps = createDeps({
    env: {
      ...stack.env,
      WEBHOOK_ALLOW_PRIVATE: "true",
      GAS_TANK_CONFIRMATIONS: "1",
      SANCTIONS_LIST_FILE: listFile,
      VAULT_CONFIRMATIONS: "1",
    },
  });
  await migrate(deps.db);
  api = await startApiServer(deps, 0);
  chain = deps.chains.find((c) => c.chainId === CHAIN_ID)!;
  h = chainHelpers(chain);
  // From here on a block exists only when a test mines it.
  await rpc("evm_setIntervalMining", [0]);
  await rpc("evm_setAutomine", [false]);
});

afterAll(async () => {
  await restarted?.stop();
  await api?.close();
  await deps?.db.close();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(listDir, { recursive: true, force: true });
});

const rpc = (method: string, params: unknown[] = []) => h.pub.request({ method: method as any, params: params as any });
const head = () => h.pub.getBlockNumber({ cacheTime: 0 });
/** Adds `who` to the sanctions list file (read again by the next screening). */
const flag = (who: Address) => fs.appendFileSync(listFile, `${who}\n`);
const sanctions = () => sanctionsRows(deps.db);

/** Mines `n` blocks and waits until the indexer has indexed the new head. */
async function mine(n = 1) {
  await rpc("anvil_mine", [toHex(n)]);
  const to = Number(await head());
  await waitFor(async () => ((await indexerProgress(deps.db))?.find((p) => p.chainId === CHAIN_ID)?.indexedBlock ?? 0) >= to, {
    timeout: 60_000,
    what: `block ${to} indexed`,
  });
}

/** Replaces the last `depth` blocks (their transactions are dropped), then mines one block past them and waits for the indexer. */
async function reorg(depth: number, gone: Hex[]) {
  await rpc("anvil_reorg", [depth, []]);
  await mine(1);
  const t = deps.db.views.transfer;
  for (const hash of gone) {
    expect(await h.pub.getTransactionReceipt({ hash }).catch(() => null)).toBeNull();
    await waitFor(async () => (await deps.db.orm.select().from(t).where(eq(t.transactionHash, hash))).length === 0, {
      timeout: 60_000,
      what: `transfer ${hash} gone from the indexer`,
    });
  }
}

const detect = () => detector().run(deps);

async function http(method: string, p: string, apiKey: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api${p}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return readResponse(res);
}

async function newMerchant(events?: string[]) {
  const m = await createMerchant(deps.db, { name: `Reorg ${Math.random()}` });
  const apiKey = (await createApiKey(deps.db, m.id)).key;
  const res = await http("PUT", "/v1/webhooks", apiKey, { url: "https://127.0.0.1:9/reorg", ...(events ? { events } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: m.id, apiKey };
}

async function createPayment(apiKey: string, body: Record<string, unknown>) {
  const token = h.token("USDC").address;
  const res = await http("POST", "/payments", apiKey, { orderId: `reorg-${Math.random()}`, chainId: String(CHAIN_ID), token, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  return row(id);
}
async function row(id: string) {
  const { rows } = await deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [id]);
  return rows[0];
}

/** A payer holding `amount` of `symbol`, minted `below` blocks before anything a test re-orgs. */
async function fundedPayer(symbol: string, amount: bigint, below: number): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await rpc("anvil_setBalance", [payer.address, toHex(10n ** 21n)]);
  await h
    .walletOf(payer)
    .writeContract({ address: h.token(symbol).address, abi: testTokenAbi, functionName: "mint", args: [payer.address, amount] });
  await mine(below);
  return payer;
}
/** The signed bytes of a transaction the node knows, to send the very same transaction again after a re-org. */
const rawOf = (hash: Hex) => rpc("eth_getRawTransactionByHash", [hash]) as Promise<Hex>;
const resend = (raw: Hex) => h.pub.sendRawTransaction({ serializedTransaction: raw });

/** Sends a token transfer into the pool (mined by the next `mine`). */
function transfer(payer: PrivateKeyAccount, symbol: string, to: string, amount: bigint): Promise<Hex> {
  return h
    .walletOf(payer)
    .writeContract({ address: h.token(symbol).address, abi: testTokenAbi, functionName: "transfer", args: [to as Address, amount] });
}

async function events(paymentId: string) {
  const { rows } = await deps.db.pool.query(`SELECT to_status, reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [paymentId]);
  return rows.map((r) => r.to_status as string);
}
async function reasons(paymentId: string) {
  const { rows } = await deps.db.pool.query(`SELECT reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [paymentId]);
  return rows.map((r) => r.reason as string);
}
async function outbox(paymentId: string) {
  const { rows } = await deps.db.pool.query(
    `SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, event`,
    [paymentId],
  );
  return rows as { event: string; payload: Record<string, any> }[];
}
async function settlementsOf(paymentId: string): Promise<string[]> {
  const { rows } = await deps.db.pool.query(`SELECT status FROM settlements WHERE $1 = ANY(payment_ids) ORDER BY created_at`, [paymentId]);
  return rows.map((x) => x.status as string);
}

/** Settler passes, one block mined after each, until the payment reaches `status`. */
async function settleUntil(id: string, status: string, passes = 30) {
  for (let i = 0; i < passes; i++) {
    await settleChain(deps, chain);
    if ((await row(id)).status === status) return;
    await mine(1);
  }
  throw new Error(`payment ${id} is ${(await row(id)).status}, not ${status}, after ${passes} settler passes`);
}

const AMOUNT = parseUnits("10", 6);
const USDT = 10n ** 6n;

describe("a deposit re-orged out of the chain", () => {
  // Depths 1, 5 and 29 (below the indexer's 30-block finality) with 1 and 3 confirmations. The deposit's block
  // is exactly `depth` deep when the re-org replaces the last `depth` blocks. Depth 29 takes a while to re-index:
  // `npm test` runs it with 3 confirmations only, CHAOS_SCALE=full with both.
  const full = process.env.CHAOS_SCALE === "full";
  const cases = [1, 5, 29]
    .flatMap((depth) => [1, 3].map((confirmations) => ({ depth, confirmations })))
    .filter((c) => full || c.depth < 29 || c.confirmations === 3);
  it.each(cases)("depth $depth, blockConfirmations $confirmations", async ({ depth, confirmations }) => {
    const subscribed = await newMerchant(["payment.completed", "payment.reorged"]);
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const p = await createPayment(subscribed.apiKey, { merchant: payout, amount: "10", gasless: true, blockConfirmations: confirmations });
    const payer = await fundedPayer("USDC", AMOUNT, depth + 1);

    const first = await transfer(payer, "USDC", p.recipient_address, AMOUNT);
    const raw = await rawOf(first);
    await mine(depth); // the deposit's block is now `depth` deep
    await detect();
    const counted = confirmations <= depth;
    const before = await row(p.id);
    // Reported paid only once the deposit is `blockConfirmations` deep; before, the full amount seen but not deep
    // enough is `waiting_for_confirmation`, with nothing counted.
    expect(before.status).toBe(counted ? "paid" : "waiting_for_confirmation");
    expect(before.received_units).toBe(counted ? AMOUNT.toString() : "0");
    if (!counted) expect(before.received_block_number).toBe(before.payment_block_number); // the deposit's block

    await reorg(depth, [first]);
    await detect();
    const after = await row(p.id);
    expect(after.status).toBe("pending");
    expect(after.received_units).toBe("0");
    expect(after.paid_at).toBeNull();
    expect(after.payment_tx_hash).toBeNull();
    const reorged = (await outbox(p.id)).filter((d) => d.event === "payment.reorged");
    if (counted) {
      expect(await events(p.id)).toEqual(["paid", "pending"]);
      expect(reorged).toHaveLength(1);
      expect(reorged[0]!.payload).toMatchObject({
        event: "payment.reorged",
        paymentId: p.id,
        status: "pending",
        previousReceivedAmount: "10",
        reason: "a counted deposit left the canonical chain",
      });
      expect(reorged[0]!.payload.receivedAmount).toBeUndefined();
    } else {
      // It was waiting, never reported paid: back to pending with a `reorg:` audit row, and no event.
      expect(await events(p.id)).toEqual(["waiting_for_confirmation", "pending"]);
      expect(await reasons(p.id)).toEqual([
        "full amount seen, 1 of 3 confirmations",
        `reorg: the full amount left the canonical chain before ${confirmations} confirmations`,
      ]);
      expect(reorged).toHaveLength(0);
    }
    const history = await events(p.id);

    // The same transaction mined again (as a node returns it to its pool): waiting while shallower than
    // `blockConfirmations`, paid at depth, not a block earlier, swept once, the merchant paid to the smallest unit.
    expect(await resend(raw)).toBe(first);
    await mine(confirmations - 1 || 1);
    await detect();
    if (confirmations > 1) {
      expect((await row(p.id)).status).toBe("waiting_for_confirmation");
      await mine(1);
      await detect();
    }
    expect((await row(p.id)).status).toBe("paid");
    expect(await events(p.id)).toEqual([...history, ...(confirmations > 1 ? ["waiting_for_confirmation"] : []), "paid"]);
    expect((await row(p.id)).payment_tx_hash).toBe(first);
    await settleUntil(p.id, "completed");
    const done = await row(p.id);
    const fee = BigInt(done.platform_fee_units) + BigInt(done.gas_fee_units) + BigInt(done.processing_fee_units);
    expect(await h.balanceOf("USDC", payout)).toBe(AMOUNT - fee);
    expect(BigInt(done.settled_units)).toBe(AMOUNT - fee);
    const { rows: sweeps } = await deps.db.pool.query(`SELECT status FROM settlements WHERE $1 = ANY(payment_ids)`, [p.id]);
    expect(sweeps.map((s) => s.status)).toEqual(["mined"]);
    expect((await outbox(p.id)).map((d) => d.event)).toEqual(counted ? ["payment.reorged", "payment.completed"] : ["payment.completed"]);
  });

  it("is never told to a merchant on the default subscription", async () => {
    const m = await newMerchant(); // payment.completed, payment.withdrawn
    const p = await createPayment(m.apiKey, { merchant: privateKeyToAccount(generatePrivateKey()).address, amount: "10", gasless: true });
    const payer = await fundedPayer("USDC", AMOUNT, 3);
    const tx = await transfer(payer, "USDC", p.recipient_address, AMOUNT);
    await mine(1);
    await detect();
    expect((await row(p.id)).status).toBe("paid");
    await reorg(2, [tx]);
    await detect();
    expect((await row(p.id)).status).toBe("pending");
    expect(await events(p.id)).toEqual(["paid", "pending"]);
    expect(await outbox(p.id)).toEqual([]);
  });
});

describe('a payment paid within its underpayment tolerance, re-orged (docs/payments.md "Underpayment tolerance")', () => {
  // A 50 bps tolerance on 10 USDC: paid from 9.95. Two deposits, the first below the re-org, the second taken away.
  const units = (s: string) => parseUnits(s, 6);
  const feesOf = (r: Record<string, any>) =>
    BigInt(r.platform_fee_units) + BigInt(r.agent_fee_units) + BigInt(r.gas_fee_units) + BigInt(r.processing_fee_units);
  async function tolerantPayment() {
    const m = await newMerchant(["payment.completed", "payment.reorged"]);
    const res = await http("PUT", "/v1/settings/underpayment-tolerance", m.apiKey, { bps: 50 });
    expect([res.status, res.body]).toEqual([200, { bps: 50, amounts: [] }]);
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const p = await createPayment(m.apiKey, { merchant: payout, amount: "10", gasless: true });
    expect(p).toMatchObject({ due_units: "10000000", underpayment_tolerance_units: "50000", underpayment_units: "0" });
    return { p, payout };
  }
  /** `first` in a block that stays, `second` in the head block (re-orged away by `reorg(2, …)`), then one detection pass. */
  async function payTwice(to: string, first: string, second: string) {
    const payer = await fundedPayer("USDC", units(first) + units(second), 1);
    await transfer(payer, "USDC", to, units(first));
    await mine(4);
    const tx = await transfer(payer, "USDC", to, units(second));
    const raw = await rawOf(tx);
    await mine(1);
    await detect();
    return { tx, raw };
  }

  it("left below the threshold: back to pending with the underpayment cleared; paid short again when the deposit returns", async () => {
    const { p, payout } = await tolerantPayment();
    const { tx, raw } = await payTwice(p.recipient_address, "5", "4.97");
    expect(await row(p.id)).toMatchObject({
      status: "paid",
      received_units: "9970000",
      underpayment_units: "30000",
      overpayment_units: "0",
    });
    expect(await reasons(p.id)).toEqual(["payment received within the underpayment tolerance"]);

    await reorg(2, [tx]);
    await detect(); // detect.ts detectLostDeposits: 5 < 9.95, reopenAfterReorg
    expect(await row(p.id)).toMatchObject({
      status: "pending",
      received_units: "5000000",
      underpayment_units: "0",
      overpayment_units: "0",
      paid_at: null,
    });
    expect(await events(p.id)).toEqual(["paid", "pending"]);
    const reorged = await outbox(p.id);
    expect(reorged.map((d) => d.event)).toEqual(["payment.reorged"]);
    expect(reorged[0]!.payload).toMatchObject({
      event: "payment.reorged",
      paymentId: p.id,
      status: "pending",
      receivedAmount: "5",
      previousReceivedAmount: "9.97",
      reason: "a counted deposit left the canonical chain",
    });
    expect(reorged[0]!.payload).not.toHaveProperty("underpayment");

    // The same transfer mined again: paid short again, settled, the merchant gets what arrived less the fees.
    expect(await resend(raw)).toBe(tx);
    await mine(1);
    await detect();
    expect(await row(p.id)).toMatchObject({ status: "paid", received_units: "9970000", underpayment_units: "30000" });
    await settleUntil(p.id, "completed");
    const done = await row(p.id);
    expect(await h.balanceOf("USDC", payout)).toBe(units("9.97") - feesOf(done));
    expect(BigInt(done.settled_units)).toBe(units("9.97") - feesOf(done));
    const told = await outbox(p.id);
    expect(told.map((d) => d.event)).toEqual(["payment.reorged", "payment.completed"]);
    expect(told[1]!.payload).toMatchObject({ status: "completed", receivedAmount: "9.97", underpayment: "0.03" });
  });

  it("left at or above the threshold: stays paid, the larger shortfall recorded, what is left settled", async () => {
    const { p, payout } = await tolerantPayment();
    const { tx } = await payTwice(p.recipient_address, "9.96", "0.03");
    expect(await row(p.id)).toMatchObject({ status: "paid", received_units: "9990000", underpayment_units: "10000" });

    await reorg(2, [tx]);
    await detect(); // detectLostDeposits: 9.96 >= 9.95, the lower amount recorded, still paid
    expect(await row(p.id)).toMatchObject({
      status: "paid",
      received_units: "9960000",
      underpayment_units: "40000",
      overpayment_units: "0",
    });
    expect(await events(p.id)).toEqual(["paid"]);
    expect(await outbox(p.id)).toEqual([]);

    await settleUntil(p.id, "completed");
    const done = await row(p.id);
    expect(await h.balanceOf("USDC", payout)).toBe(units("9.96") - feesOf(done));
    const told = await outbox(p.id);
    expect(told.map((d) => d.event)).toEqual(["payment.completed"]);
    expect(told[0]!.payload).toMatchObject({ receivedAmount: "9.96", underpayment: "0.04" });
  });
});

describe("settlement checks the chain before it sweeps", () => {
  async function gasTankMerchant() {
    const m = await newMerchant(["payment.completed", "payment.reorged"]);
    const bal = await http("GET", "/balance", m.apiKey);
    const tank = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN_ID).address;
    const funder = await fundedPayer("USDT", parseUnits("5", 6), 1);
    await transfer(funder, "USDT", tank, parseUnits("5", 6));
    await mine(1);
    await creditConfirmedDeposits(deps);
    expect((await http("GET", "/balance", m.apiKey)).body.balance).toBe("5.000000");
    return m;
  }
  const ledger = async (merchantId: string) =>
    (
      await deps.db.pool.query(
        `SELECT kind, amount_micros FROM ledger_entries WHERE merchant_id = $1 AND kind <> 'gas_tank_deposit' ORDER BY id`,
        [merchantId],
      )
    ).rows;

  it("a reserved settlement whose deposit was re-orged away is not signed: back to pending, Gas Tank fee refunded", async () => {
    const m = await gasTankMerchant();
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const p = await createPayment(m.apiKey, { merchant: payout, amount: "10" });
    const payer = await fundedPayer("USDC", AMOUNT, 6);
    const tx = await transfer(payer, "USDC", p.recipient_address, AMOUNT);
    await mine(1);
    await detect();
    await reserve(deps, chain);
    expect((await row(p.id)).status).toBe("deploying_wallet");
    const fee = BigInt((await row(p.id)).gas_tank_fee_micros);
    expect(fee).toBeGreaterThan(0n);

    await reorg(5, [tx]);
    await settleChain(deps, chain); // the detector never looks at a payment in settlement: the settler's own check must catch it
    expect((await row(p.id)).status).toBe("pending");
    const { rows: signed } = await deps.db.pool.query(`SELECT 1 FROM settlements WHERE $1 = ANY(payment_ids)`, [p.id]);
    expect(signed).toHaveLength(0);
    expect(await ledger(m.id)).toEqual([
      { kind: "settlement_fee", amount_micros: (-fee).toString() },
      { kind: "settlement_refund", amount_micros: fee.toString() },
    ]);
    expect((await outbox(p.id)).map((d) => d.event)).toEqual(["payment.reorged"]);

    // Paid again: debited again (once), settled, the merchant gets the whole amount once.
    await transfer(payer, "USDC", p.recipient_address, AMOUNT);
    await mine(1);
    await detect();
    await settleUntil(p.id, "completed");
    expect(await h.balanceOf("USDC", payout)).toBe(AMOUNT);
    expect((await ledger(m.id)).map((e) => e.amount_micros)).toEqual([(-fee).toString(), fee.toString(), (-fee).toString()]);
    expect((await http("GET", "/balance", m.apiKey)).body.balance).toBe(formatMicros(5_000_000n - fee));
  });

  it("a batch whose sweep is re-orged out with one deposit: sent again, reverts, that payment waits for its funds, the other is swept alone", async () => {
    const m = await newMerchant(["payment.completed", "payment.failed", "payment.reorged"]);
    const [payoutA, payoutB] = [0, 1].map(() => privateKeyToAccount(generatePrivateKey()).address);
    const a = await createPayment(m.apiKey, { merchant: payoutA, amount: "10", gasless: true, blockConfirmations: 3 });
    const b = await createPayment(m.apiKey, { merchant: payoutB, amount: "10", gasless: true, blockConfirmations: 3 });
    const [payerA, payerB] = [await fundedPayer("USDC", AMOUNT, 8), await fundedPayer("USDC", AMOUNT, 1)];
    await transfer(payerB, "USDC", b.recipient_address, AMOUNT);
    await mine(3); // B's deposit will sit below the re-org
    const txA = await transfer(payerA, "USDC", a.recipient_address, AMOUNT);
    const rawA = await rawOf(txA);
    await mine(3);
    await detect();
    await settleChain(deps, chain); // reserve both + one batch signed and broadcast
    await mine(1);
    await settleChain(deps, chain); // mined; not completed before it is 3 deep
    const sweeps = async (id: string) =>
      (await deps.db.pool.query(`SELECT tx_hash, status FROM settlements WHERE $1 = ANY(payment_ids) ORDER BY created_at`, [id])).rows;
    const s1 = await sweeps(a.id);
    expect(s1.map((x) => x.status)).toEqual(["mined"]);
    expect(await sweeps(b.id)).toEqual(s1); // one batch
    expect((await row(a.id)).status).toBe("deploying_wallet");

    await reorg(5, [txA, s1[0].tx_hash]);
    expect(await h.balanceOf("USDC", b.recipient_address)).toBe(AMOUNT);
    await settleChain(deps, chain); // the sweep's receipt is gone: the same bytes again
    await mine(1);
    await settleChain(deps, chain); // mined again, and reverted: A's wallet is empty
    expect((await sweeps(a.id)).map((x) => x.status)).toEqual(["reverted"]);
    expect((await row(a.id)).status).toBe("pending");
    expect((await row(b.id)).status).toBe("deploying_wallet"); // not failed: swept again without A
    expect((await outbox(a.id)).map((d) => d.event)).toEqual(["payment.reorged"]);

    await settleUntil(b.id, "completed");
    expect((await sweeps(b.id)).map((x) => x.status)).toEqual(["reverted", "mined"]);
    expect(await resend(rawA)).toBe(txA);
    await mine(3);
    await detect();
    await settleUntil(a.id, "completed");
    for (const [p, payout] of [
      [a.id, payoutA],
      [b.id, payoutB],
    ] as const) {
      const done = await row(p);
      const fee = BigInt(done.platform_fee_units) + BigInt(done.gas_fee_units) + BigInt(done.processing_fee_units);
      expect(await h.balanceOf("USDC", payout)).toBe(AMOUNT - fee);
    }
    expect((await outbox(a.id)).map((d) => d.event)).toEqual(["payment.reorged", "payment.completed"]);
    expect((await outbox(b.id)).map((d) => d.event)).toEqual(["payment.completed"]);
  });

  it("a completed sweep re-orged out is sent again (same nonce): the merchant is paid once and later sweeps are not stuck", async () => {
    const m = await newMerchant(["payment.completed", "payment.reorged"]);
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const p = await createPayment(m.apiKey, { merchant: payout, amount: "10", gasless: true });
    const payer = await fundedPayer("USDC", AMOUNT * 2n, 1);
    await transfer(payer, "USDC", p.recipient_address, AMOUNT);
    await mine(1);
    await detect();
    await settleUntil(p.id, "completed");
    const done = await row(p.id);
    const net = BigInt(done.settled_units);
    expect(await h.balanceOf("USDC", payout)).toBe(net);
    const { rows: s1 } = await deps.db.pool.query(`SELECT tx_hash, block_number FROM settlements WHERE $1 = ANY(payment_ids)`, [p.id]);
    await reorg(Number((await head()) - BigInt(s1[0].block_number)) + 1, [s1[0].tx_hash]);
    expect(await h.balanceOf("USDC", payout)).toBe(0n); // the sweep is gone, the deposit is not
    await settleChain(deps, chain);
    await mine(1);
    await settleChain(deps, chain);
    expect(await h.balanceOf("USDC", payout)).toBe(net);
    expect((await h.pub.getTransactionReceipt({ hash: s1[0].tx_hash })).status).toBe("success");

    // The next sweep takes the next nonce and is mined: no gap behind the re-orged one.
    const q = await createPayment(m.apiKey, { merchant: payout, amount: "10", gasless: true });
    await transfer(payer, "USDC", q.recipient_address, AMOUNT);
    await mine(1);
    await detect();
    await settleUntil(q.id, "completed", 10);
    expect(await h.balanceOf("USDC", payout)).toBe(net + BigInt((await row(q.id)).settled_units));
    expect((await outbox(p.id)).map((d) => d.event)).toEqual(["payment.completed"]);
  });
});

describe("Gas Tank credits", () => {
  it("a credited deposit re-orged out is reversed, and credited again where it lands", async () => {
    const m = await newMerchant();
    const bal = await http("GET", "/balance", m.apiKey);
    const tank = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN_ID).address;
    const funder = await fundedPayer("USDT", parseUnits("5", 6), 4);
    const tx = await transfer(funder, "USDT", tank, parseUnits("5", 6));
    const raw = await rawOf(tx);
    await mine(1);
    await creditConfirmedDeposits(deps);
    expect((await http("GET", "/balance", m.apiKey)).body.balance).toBe("5.000000");

    await reorg(3, [tx]);
    await creditConfirmedDeposits(deps);
    await creditConfirmedDeposits(deps); // once only
    expect((await http("GET", "/balance", m.apiKey)).body.balance).toBe("0.000000");

    expect(await resend(raw)).toBe(tx); // the same transaction, now in another block
    await mine(1);
    await creditConfirmedDeposits(deps);
    await creditConfirmedDeposits(deps);
    expect((await http("GET", "/balance", m.apiKey)).body.balance).toBe("5.000000");
    const { rows } = await deps.db.pool.query(`SELECT kind, amount_micros FROM ledger_entries WHERE merchant_id = $1 ORDER BY id`, [m.id]);
    expect(rows).toEqual([
      { kind: "gas_tank_deposit", amount_micros: "5000000" },
      { kind: "gas_tank_reorg", amount_micros: "-5000000" },
      { kind: "gas_tank_deposit", amount_micros: "5000000" },
    ]);
  });
});

// Held funds whose transfer a re-org takes away (docs/sanctions.md).
//
// - A payment held (`sanctioned`) whose deposit is re-orged away stays `sanctioned`: re-org handling covers unswept
//   pending/paid/awaiting_gas payments only (docs "Limits", last point; TRANSITIONS has no sanctioned -> pending), and
//   `sanctions list` still shows the amount counted. Released, it goes back to `paid`; the settler's check before
//   signing finds the wallet empty and re-opens it (`pending`, `payment.reorged`), nothing swept. The same transfer
//   mined again settles: the released payer is not screened again for that payment.
// - A held vault deposit whose transfer is re-orged away is `dropped` like any other, its hold resolved `dropped` with
//   an audit row by `system` (docs "Vault deposits: held"); the clean deposit it froze is then swept.

describe("a sanctioned payment whose deposit is re-orged away", () => {
  it("stays sanctioned with its counted amount listed; released, the settler finds the wallet empty (pending, nothing swept); paid again, it settles", async () => {
    const m = await newMerchant(["payment.completed", "payment.reorged", "payment.sanctioned", "payment.cancelled"]);
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const p = await createPayment(m.apiKey, { merchant: payout, amount: "10", gasless: true, blockConfirmations: 1 });
    const id = p.id as string;
    expect(p.due_units).toBe(AMOUNT.toString());
    const wallet = p.recipient_address as Address;
    const payer = await fundedPayer("USDC", AMOUNT, 3);
    flag(payer.address);

    const tx = await transfer(payer, "USDC", wallet, AMOUNT);
    const raw = await rawOf(tx);
    await mine(2); // the deposit's block is 2 deep
    await detect();
    expect((await row(id)).status).toBe("paid");
    await settleChain(deps, chain);
    expect((await row(id)).status).toBe("sanctioned");
    const held = { subject: "payment", address: payer.address.toLowerCase(), source: `list:${listFile}`, from_status: "paid" };
    expect(await sanctions().holds("payment_id", id)).toEqual([{ ...held, status: "held" }]);
    expect((await outbox(id)).map((d) => d.event)).toEqual(["payment.sanctioned"]);

    await reorg(2, [tx]);
    expect(await h.balanceOf("USDC", wallet)).toBe(0n);
    for (let i = 0; i < 3; i++) {
      await detect();
      await settleChain(deps, chain);
      await mine(1);
    }
    // What the docs promise ("Limits"): still sanctioned, its counted amount and deposit kept, no payment.reorged, the
    // hold still open, and the operator sees the amount in `sanctions list` (though the address no longer holds it).
    const after = await row(id);
    expect(after).toMatchObject({ status: "sanctioned", received_units: AMOUNT.toString(), payment_tx_hash: tx });
    expect(await events(id)).toEqual(["paid", "sanctioned"]);
    expect((await outbox(id)).map((d) => d.event)).toEqual(["payment.sanctioned"]);
    expect(await sanctions().holds("payment_id", id)).toEqual([{ ...held, status: "held" }]);
    expect((await cliSanctionsList(deps.db)).filter((x) => x.paymentId === id)).toEqual([
      expect.objectContaining({
        kind: "hold",
        status: "held",
        subjectStatus: "sanctioned",
        depositAddress: getAddress(wallet),
        amountUnits: AMOUNT.toString(),
        sanctionedAddress: getAddress(payer.address),
      }),
    ]);
    expect(await settlementsOf(id)).toEqual([]);

    // Released: back to paid. One settler pass (no detector pass in between, so the path is the settler's): reserved
    // (no indexed transfer is left, so no sender to screen), then the check before signing finds the wallet empty and
    // re-opens it, telling the merchant; nothing is signed.
    const released = await cliSanctionsRelease(deps.db, { paymentId: id }, { reason: "reviewed", operator: "ops" });
    expect(released).toMatchObject({ action: "release", paymentId: id, status: "paid" });
    await settleChain(deps, chain);
    expect(await row(id)).toMatchObject({ status: "pending", received_units: "0", payment_tx_hash: null, paid_at: null });
    expect(await events(id)).toEqual(["paid", "sanctioned", "paid", "deploying_wallet", "pending"]);
    const reorged = (await outbox(id)).filter((d) => d.event === "payment.reorged");
    expect(reorged).toHaveLength(1);
    expect(reorged[0]!.payload).toMatchObject({
      event: "payment.reorged",
      paymentId: id,
      status: "pending",
      previousReceivedAmount: "10",
      reason: "the wallet holds less than the counted deposit",
    });
    expect(await settlementsOf(id)).toEqual([]);
    expect(await sanctions().holds("payment_id", id)).toEqual([{ ...held, status: "released" }]);
    expect(await sanctions().actions("payment_id", id)).toEqual([
      { action: "release", actor: "ops", reason: "reviewed", subject_from: "sanctioned", subject_to: "paid" },
    ]);

    // The same transfer mined again: paid, and settled (its payer was released for this payment), exactly once.
    expect(await resend(raw)).toBe(tx);
    await mine(1);
    await detect();
    expect((await row(id)).status).toBe("paid");
    await settleUntil(id, "completed");
    const done = await row(id);
    expect(await h.balanceOf("USDC", payout)).toBe(AMOUNT - totalFeeUnits(done));
    expect(BigInt(done.settled_units)).toBe(AMOUNT - totalFeeUnits(done));
    expect(await h.balanceOf("USDC", wallet)).toBe(0n);
    expect(await settlementsOf(id)).toEqual(["mined"]);
    expect((await outbox(id)).map((d) => d.event)).toEqual(["payment.sanctioned", "payment.reorged", "payment.completed"]);
    expect(await sanctions().holds("payment_id", id)).toEqual([{ ...held, status: "released" }]);
  });
});

describe("a return of held funds (sanctions return)", () => {
  /** A payment paid in full by a listed payer, 3 blocks deep: `sanctioned`, its funds held at its address. */
  async function sanctionedPayment() {
    const m = await newMerchant(["payment.sanctioned", "payment.cancelled"]);
    const p = await createPayment(m.apiKey, { merchant: privateKeyToAccount(generatePrivateKey()).address, amount: "10", gasless: true });
    const id = p.id as string;
    const wallet = p.recipient_address as Address;
    const payer = await fundedPayer("USDC", AMOUNT, 3);
    flag(payer.address);
    await transfer(payer, "USDC", wallet, AMOUNT);
    await mine(3);
    await detect();
    await settleChain(deps, chain);
    expect((await row(id)).status).toBe("sanctioned");
    return { p, id, wallet };
  }

  it("re-orged out, is sent again from its stored bytes (same hash) and completes once at finality: funds reach `to` once, one event", async () => {
    const { id, wallet } = await sanctionedPayment();

    // The operator's return, sent (no block is mined until the test mines it), then mined 2 deep.
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const decision = { actor: "ops", reason: "returned under licence" };
    const sent = await returnHeldFunds(deps, LOCAL_ROLES.deployer, { paymentId: id }, { to, confirm: true, waitMs: 0 }, decision);
    expect(sent).toMatchObject({ status: "sent", amountUnits: AMOUNT.toString() });
    const hash = (sent as { txHash: Hex }).txHash;
    await mine(2);
    await settleReturns(deps, chain);
    const returns = async () =>
      (
        await deps.db.pool.query(
          `SELECT id, status, tx_hash, block_number::text FROM sanctions_returns WHERE chain_id = $1 AND tx_hash = $2`,
          [CHAIN_ID, hash],
        )
      ).rows;
    expect((await returns()).map((r) => r.status)).toEqual(["mined"]);
    expect(await h.balanceOf("USDC", to)).toBe(AMOUNT);

    // Re-orged out: the settler's step sees no receipt (back to sent), sends the same bytes again, and follows them.
    await reorg(2, [hash]);
    expect(await h.balanceOf("USDC", to)).toBe(0n);
    expect(await h.balanceOf("USDC", wallet)).toBe(AMOUNT);
    await settleReturns(deps, chain);
    expect((await returns()).map((r) => r.status)).toEqual(["sent"]);
    await settleReturns(deps, chain); // rebroadcast
    await mine(1);
    await settleReturns(deps, chain);
    expect((await returns()).map((r) => r.status)).toEqual(["mined"]);
    expect((await h.pub.getTransactionReceipt({ hash })).status).toBe("success");
    expect((await row(id)).status).toBe("sanctioned");

    // Final: completed once; the funds reached `to` once; one payment.cancelled.
    await mine(chain.finalityBlocks);
    await settleReturns(deps, chain);
    await settleChain(deps, chain);
    expect((await returns()).map((r) => r.status)).toEqual(["completed"]);
    expect((await row(id)).status).toBe("cancelled");
    expect(await h.balanceOf("USDC", to)).toBe(AMOUNT);
    expect(await h.balanceOf("USDC", wallet)).toBe(0n);
    const cancelled = (await outbox(id)).filter((d) => d.event === "payment.cancelled");
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.payload).toMatchObject({
      fundsReturned: { to: getAddress(to), amountUnits: AMOUNT.toString(), transactionHash: hash },
    });
    expect((await sanctions().holds("payment_id", id)).map((x) => x.status)).toEqual(["returned"]);
  });

  it("one that reverts stays open (nothing can be decided) until final, then is recorded reverted: nothing moved", async () => {
    const { p, id, wallet } = await sanctionedPayment();
    const hold = (await deps.db.pool.query(`SELECT id FROM sanctions_holds WHERE payment_id = $1 AND status = 'held'`, [id])).rows[0]
      .id as string;
    const returnsOf = async () =>
      (await deps.db.pool.query(`SELECT status, tx_hash, error FROM sanctions_returns WHERE hold_id = $1`, [hold])).rows;

    // A return transaction that reverts on chain (more than the balance; its gas given, so it is not estimated),
    // stored as `sanctions return` stores one.
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const usdc = h.token("USDC").address;
    const sender = txSender({ db: deps.db, chain, client: h.pub, account: LOCAL_ROLES.deployer });
    const tx = (await sender.sendTransaction({
      to: chain.factory!,
      gas: 200_000n,
      data: encodeFunctionData({
        abi: walletFactoryAbi,
        functionName: "returnFunds",
        args: [p.salt, p.merchant_address, usdc, to, AMOUNT + 1n],
      }),
      record: async (c, t) => {
        await c.query(
          `INSERT INTO sanctions_returns (hold_id, chain_id, wallet, token, to_address, amount_units, actor, reason, signer, nonce, tx_hash, raw_tx)
           VALUES ($1, $2, $3, $4, $5, $6, 'ops', 'too much', $7, $8, $9, $10)`,
          [
            hold,
            CHAIN_ID,
            wallet.toLowerCase(),
            usdc.toLowerCase(),
            to.toLowerCase(),
            (AMOUNT + 1n).toString(),
            t.from,
            t.nonce,
            t.hash,
            t.rawTx,
          ],
        );
      },
    }))!;
    await mine(1);
    expect((await h.pub.getTransactionReceipt({ hash: tx.hash })).status).toBe("reverted");
    await settleReturns(deps, chain);
    expect(await returnsOf()).toEqual([{ status: "mined", tx_hash: tx.hash, error: null }]);

    // Until final a re-org could bring it back as a success: the hold stays guarded, and a re-run follows it.
    await mine(chain.finalityBlocks - 2); // 29 deep: one short
    await settleReturns(deps, chain);
    expect((await returnsOf()).map((r) => r.status)).toEqual(["mined"]);
    await expect(cliSanctionsRelease(deps.db, { paymentId: id }, { reason: "x", operator: "ops" })).rejects.toThrow(
      "A return of these funds is in flight",
    );
    const decision = { actor: "ops", reason: "again" };
    expect(await returnHeldFunds(deps, LOCAL_ROLES.deployer, { paymentId: id }, { to, confirm: true, waitMs: 0 }, decision)).toMatchObject({
      inFlight: true,
      status: "mined",
      next: `the transaction reverted: it is recorded reverted once ${chain.finalityBlocks} blocks deep (nothing moved); then run the return again`,
    });

    // Final: reverted, nothing moved, the hold as it was; it can be decided again.
    await mine(1);
    await settleReturns(deps, chain);
    expect(await returnsOf()).toEqual([
      { status: "reverted", tx_hash: tx.hash, error: `return transaction ${tx.hash} reverted: nothing moved` },
    ]);
    expect((await row(id)).status).toBe("sanctioned");
    expect((await sanctions().holds("payment_id", id)).map((x) => x.status)).toEqual(["held"]);
    expect(await h.balanceOf("USDC", wallet)).toBe(AMOUNT);
    expect(await h.balanceOf("USDC", to)).toBe(0n);
    expect(await cliSanctionsRelease(deps.db, { paymentId: id }, { reason: "cleared", operator: "ops" })).toMatchObject({
      status: "paid",
    });
  });
});

describe("a held vault deposit whose transfer is re-orged away", () => {
  it("is dropped, its hold resolved `dropped` with an audit row by system; the clean deposit it froze is swept", async () => {
    const m = await newMerchant();
    const businessWallet = privateKeyToAccount(generatePrivateKey()).address;
    const usdt = h.token("USDT").address;
    const created = await http("POST", "/vault/v1/config", m.apiKey, {
      businessName: "Re-orged vault",
      walletAddress: businessWallet,
      enabledTokens: [{ chainId: CHAIN_ID, token: usdt, tokenSymbol: "USDT" }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = await http("POST", "/vault/v1/users", m.apiKey, { externalUserId: "user-reorged", chainId: CHAIN_ID, tokenAddress: usdt });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const address = user.body.data.depositAddress as Address;

    const clean = await fundedPayer("USDT", 7n * USDT, 1);
    const flagged = await fundedPayer("USDT", 10n * USDT, 1);
    flag(flagged.address);
    const cleanTx = await transfer(clean, "USDT", address, 7n * USDT);
    await mine(3); // the clean deposit sits below the re-org
    const flaggedTx = await transfer(flagged, "USDT", address, 10n * USDT);
    await mine(2); // the flagged one is 2 deep

    const recorder = vaultDeposits();
    const sweeper = vaultSweeper();
    const pass = async () => {
      await recorder.run(deps);
      await sweeper.run(deps);
    };
    const depositOf = async (tx: Hex) =>
      (await deps.db.pool.query(`SELECT * FROM vault_deposits WHERE deposit_tx_hash = $1`, [tx.toLowerCase()])).rows[0] as
        Record<string, any> | undefined;
    for (let i = 0; i < 2; i++) await pass();
    const heldDeposit = (await depositOf(flaggedTx))!;
    expect(heldDeposit.status).toBe("held");
    expect((await depositOf(cleanTx))!.status).toBe("detected");
    const hold = { subject: "vault_deposit", address: flagged.address.toLowerCase(), source: `list:${listFile}`, from_status: "detected" };
    expect(await sanctions().holds("deposit_id", heldDeposit.id)).toEqual([{ ...hold, status: "held" }]);
    expect((await cliSanctionsList(deps.db)).find((x) => x.depositId === heldDeposit.id)).toMatchObject({
      status: "held",
      frozen: { deposits: 1, amountUnits: (7n * USDT).toString() },
    });

    await reorg(2, [flaggedTx]);
    expect(await h.balanceOf("USDT", address)).toBe(7n * USDT);
    await pass();
    const gone = (await deps.db.pool.query(`SELECT * FROM vault_deposits WHERE id = $1`, [heldDeposit.id])).rows[0];
    expect(gone.status).toBe("dropped");
    expect(gone.transfer_id).toBe(`${heldDeposit.transfer_id}#dropped:${heldDeposit.id}`);
    const { rows: moves } = await deps.db.pool.query(
      `SELECT from_status, to_status FROM vault_deposit_events WHERE deposit_id = $1 ORDER BY created_at, id`,
      [heldDeposit.id],
    );
    expect(moves.map((r) => [r.from_status, r.to_status])).toEqual([
      [null, "detected"],
      ["detected", "held"],
      ["held", "dropped"],
    ]);
    expect(await sanctions().holds("deposit_id", heldDeposit.id)).toEqual([{ ...hold, status: "dropped" }]);
    const drop = {
      action: "drop",
      actor: "system",
      reason: "the deposit's transfer is no longer indexed (re-org)",
      subject_from: "held",
      subject_to: "dropped",
    };
    expect(await sanctions().actions("deposit_id", heldDeposit.id)).toEqual([drop]);
    // Resolved: listed only with --all; neither release nor reject can touch it.
    expect((await cliSanctionsList(deps.db)).some((x) => x.depositId === heldDeposit.id)).toBe(false);
    expect((await cliSanctionsList(deps.db, { all: true })).find((x) => x.depositId === heldDeposit.id)).toMatchObject({
      status: "dropped",
      subjectStatus: "dropped",
      frozen: null,
      actions: [{ action: "drop", actor: "system", reason: drop.reason, at: expect.any(Number) }],
    });
    await expect(cliSanctionsRelease(deps.db, { depositId: heldDeposit.id }, { reason: "late", operator: "ops" })).rejects.toThrow(
      "Deposit is not held by sanctions screening",
    );

    // Nothing holds the address any more: the clean deposit is swept at the vault's 0.25%.
    for (let i = 0; i < 30 && (await depositOf(cleanTx))!.status !== "completed"; i++) {
      await mine(1);
      await pass();
    }
    expect(await depositOf(cleanTx)).toMatchObject({ status: "completed", amount: "7000000", fee: "17500", net_amount: "6982500" });
    expect(await h.balanceOf("USDT", businessWallet)).toBe(7n * USDT - 17_500n);
    expect(await h.balanceOf("USDT", address)).toBe(0n);
    expect((await deps.db.pool.query(`SELECT status FROM vault_deposits WHERE id = $1`, [heldDeposit.id])).rows[0].status).toBe("dropped");
  });
});

describe("an indexer restart", () => {
  it("rolls back and re-indexes its unfinalized rows: no amount, fee, event or delivery changes", async () => {
    const m = await newMerchant(["payment.completed", "payment.withdrawn", "payment.awaiting_gas", "payment.failed", "payment.expired"]);
    const bal = await http("GET", "/balance", m.apiKey);
    const tank = bal.body.depositAddresses.find((d: any) => d.chainId === CHAIN_ID).address;
    const funder = await fundedPayer("USDT", parseUnits("1", 6), 1);
    await transfer(funder, "USDT", tank, parseUnits("1", 6));
    const full = await createPayment(m.apiKey, { merchant: privateKeyToAccount(generatePrivateKey()).address, amount: "10" });
    const part = await createPayment(m.apiKey, {
      merchant: privateKeyToAccount(generatePrivateKey()).address,
      amount: "10",
      gasless: true,
    });
    const payer = await fundedPayer("USDC", AMOUNT + AMOUNT / 2n, 1);
    await transfer(payer, "USDC", full.recipient_address, AMOUNT);
    await transfer(payer, "USDC", part.recipient_address, AMOUNT / 2n);
    await mine(1);
    await creditConfirmedDeposits(deps);
    await detect();
    await settleUntil(full.id, "completed");
    expect(await row(part.id)).toMatchObject({ status: "pending", received_units: (AMOUNT / 2n).toString() });

    // Everything the service has decided, in every table that holds money or what the merchant is told.
    const snapshot = async () => ({
      payments: (
        await deps.db.pool.query(
          `SELECT id, status, received_units, overpayment_units, settled_units, settlement_tx_hash FROM payments ORDER BY id`,
        )
      ).rows,
      events: (await deps.db.pool.query(`SELECT id, payment_id, to_status FROM payment_events ORDER BY id`)).rows,
      ledger: (await deps.db.pool.query(`SELECT reference, amount_micros FROM ledger_entries ORDER BY id`)).rows,
      outbox: (await deps.db.pool.query(`SELECT id, event, payment_id, status, attempts FROM webhook_deliveries ORDER BY id`)).rows,
      settlements: (await deps.db.pool.query(`SELECT id, status, tx_hash FROM settlements ORDER BY id`)).rows,
    });
    const before = await snapshot();
    expect(before.ledger.map((l) => l.reference.split(":")[0])).toContain("fee");
    const passes = async () => {
      await detect();
      await creditConfirmedDeposits(deps);
      await settleChain(deps, chain);
    };

    // The indexer stops; the processors go on meanwhile, then it starts again on the same schema: Ponder rolls back
    // the rows of unfinalized blocks (all of this test's: finality is 30 blocks) and indexes them again.
    const first = stack.ponder!;
    await first.stop();
    await passes();
    await rpc("anvil_mine", [toHex(1)]);
    restarted = await startPonder({
      env: ponderEnv(stack.env),
      inheritEnv: false,
      schema: first.schema,
      viewsSchema: stack.env.PONDER_VIEWS_SCHEMA!,
      logFile: path.join(dataDir, "ponder-restarted.log"),
    });
    const ready = restarted.waitReady(180_000);
    let up = false;
    void ready.then(
      () => (up = true),
      () => (up = true),
    );
    // Passes while it re-indexes, when the rows of the last blocks may be missing.
    while (!up) {
      await passes();
      await new Promise((r) => setTimeout(r, 200));
    }
    await ready;
    await mine(1);
    for (let i = 0; i < 3; i++) await passes();
    expect(await snapshot()).toEqual(before);
    expect(await h.balanceOf("USDC", full.recipient_address)).toBe(0n);
    expect(await h.balanceOf("USDC", part.recipient_address)).toBe(AMOUNT / 2n);
  });
});

const formatMicros = (m: bigint) => `${m / 1_000_000n}.${(m % 1_000_000n).toString().padStart(6, "0")}`;
