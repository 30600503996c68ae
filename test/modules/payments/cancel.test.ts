import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual, promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { detectPayments } from "../../../modules/payments/index.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, waitFor, waitIndexed, stepUntil } from "../../helpers/chain.js";
import { paymentKit, type Shop } from "../../helpers/payment-kit.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Cancel (issue 17): POST /v1/payments/{paymentId}/cancel, GraphQL cancelPayment and the CLI, on the real stack.
// Detection and settlement are driven pass by pass (no background processors).
// - A payment that received nothing is cancelled, with one payment.cancelled outbox row.
// - A funded payment, a completed one, and one whose address received a deposit that is indexed but not counted are
//   refused with the exact 409. Another merchant's payment is 404.
// - A cancel racing the detector for the same payment: exactly one of them wins.
// - Funds sent to a cancelled payment's address are listed as unexpected funds and recovered to the payout to the
//   unit, less what a payment of that amount pays in fees (no cheaper channel). The payment stays cancelled.

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
const usdt = () => h().token("USDT").address;
const run = promisify(execFile);

/** Every transition of the payment, oldest first. */
async function history(id: string) {
  const { rows } = await pool().query(`SELECT from_status, to_status, reason FROM payment_events WHERE payment_id = $1 ORDER BY id`, [id]);
  return rows;
}
/** The payment's outbox rows. */
async function outbox(id: string) {
  const { rows } = await pool().query(`SELECT event, payload FROM webhook_deliveries WHERE payment_id = $1 ORDER BY created_at, id`, [id]);
  return rows;
}
/** The payment as the merchant's list shows it. */
async function listed(m: Shop, id: string) {
  const res = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(id)).order_id)}`, { apiKey: m.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0];
}
const cancel = (id: string, apiKey?: string) => svc.http("POST", `/v1/payments/${id}/cancel`, { apiKey });
const gql = (query: string, variables: Record<string, unknown>, apiKey: string) =>
  svc.http("POST", "/graphql", { body: { query, variables }, apiKey });
const cli = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], {
    env: { ...process.env, ...svc.deps.env },
  });
  return JSON.parse(stdout);
};

const indexedPast = (block: bigint) => waitIndexed(svc.deps.db, CHAIN, block);
const until = stepUntil;
/** A fresh detector each time: none skips a block another pass has handled. */
const detect = () => detector().run(svc.deps);
const settle = () => settleChain(svc.deps, chain());

type Racer = { what: string; run: () => Promise<unknown>; /** Its query while it waits for the row lock. */ waitsWith: RegExp };
/**
 * Runs the racers while a transaction of the test holds the payment's row lock, then lets go (replicas.test.ts's
 * pattern). Each racer starts only once the one before waits on that lock: it is blocked by the holder, directly or
 * behind an earlier waiter (pg_blocking_pids), and shows its own query. Postgres grants a row lock to its waiters
 * in the order they came, so the racers take the row in the order given. Returns each racer's result.
 */
async function whileHeld(paymentId: string, racers: Racer[]): Promise<PromiseSettledResult<unknown>[]> {
  const holder = await pool().connect();
  const started: Promise<unknown>[] = [];
  try {
    await holder.query("BEGIN");
    await holder.query(`SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, [paymentId]);
    const { rows } = await holder.query(`SELECT pg_backend_pid() AS pid`);
    const holderPid: number = rows[0].pid;
    for (const r of racers) {
      const run = r.run();
      run.catch(() => {}); // settled below
      started.push(run);
      let seen: unknown;
      await waitFor(
        async () => {
          const { rows: w } = await pool().query(
            `SELECT pid, query, pg_blocking_pids(pid) AS b FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle'`,
          );
          seen = w;
          const blocked = new Set<number>([holderPid]);
          for (let grew = true; grew;) {
            grew = false;
            for (const x of w) if (!blocked.has(x.pid) && x.b.some((b: number) => blocked.has(b))) grew = Boolean(blocked.add(x.pid));
          }
          return w.some((x) => x.pid !== holderPid && blocked.has(x.pid) && r.waitsWith.test(x.query));
        },
        { timeout: 60_000, what: `${r.what} waiting on the held row` },
      ).catch((e) => {
        throw new Error(`${e.message} (holder ${holderPid}): ${JSON.stringify(seen)}`);
      });
    }
  } finally {
    await holder.query("COMMIT");
    holder.release();
  }
  return Promise.allSettled(started);
}

describe("cancel", () => {
  it("a payment that received nothing: 200, cancelled, one payment.cancelled outbox row; asking again is 409", async () => {
    const m = await shop("empty");
    const to = payout();
    const id = await create(m, { merchant: to, amount: "1" });
    const res = await cancel(id, m.apiKey);
    expect([res.status, res.body]).toEqual([200, { success: true, error: null, data: { paymentId: id, status: "cancelled" } }]);

    const r = await row(id);
    expect(r).toMatchObject({ status: "cancelled", received_units: "0" });
    const events = await pool().query(`SELECT from_status, to_status, reason, created_at FROM payment_events WHERE payment_id = $1`, [id]);
    expect(events.rows.map(({ created_at, ...e }) => e)).toEqual([
      { from_status: "pending", to_status: "cancelled", reason: "cancelled by the merchant" },
    ]);
    // The event, written in the cancel's transaction: the common fields (status after the event) and the reason.
    expect(await outbox(id)).toEqual([
      {
        event: "payment.cancelled",
        payload: {
          event: "payment.cancelled",
          paymentId: id,
          orderId: r.order_id,
          merchant: to,
          recipientAddress: r.recipient_address,
          amount: "1",
          token: r.token_address,
          chainId: CHAIN,
          status: "cancelled",
          timestamp: events.rows[0].created_at.getTime(),
          terminal: null,
          bridge: null,
          reason: "cancelled by the merchant",
        },
      },
    ]);
    expect(await listed(m, id)).toMatchObject({ paymentId: id, status: "cancelled", receivedAmount: "0", unexpectedFunds: [] });

    // Final: a second cancel and a withdraw are refused, nothing else is written.
    const again = await cancel(id, m.apiKey);
    expect([again.status, again.body]).toEqual([
      409,
      { success: false, error: "Payment cannot be cancelled in status cancelled", data: null },
    ]);
    const w = await svc.http("POST", `/v1/payments/${id}/withdraw`, { apiKey: m.apiKey });
    expect([w.status, w.body]).toEqual([409, { success: false, error: "Payment has no partial payment to withdraw", data: null }]);
    expect(await history(id)).toHaveLength(1);
    expect(await outbox(id)).toHaveLength(1);
  });

  it("GraphQL cancelPayment and the CLI do the same; GraphQL's errors are REST's", async () => {
    const m = await shop("graphql-cli");
    const viaGql = await create(m, { merchant: payout(), amount: "2" });
    const CANCEL = `mutation ($id: String!) { cancelPayment(paymentId: $id) { paymentId status } }`;
    const ok = await gql(CANCEL, { id: viaGql }, m.apiKey);
    expect(ok.body).toEqual({ data: { cancelPayment: { paymentId: viaGql, status: "cancelled" } } });
    expect((await row(viaGql)).status).toBe("cancelled");

    const viaCli = await create(m, { merchant: payout(), amount: "2" });
    expect(await cli("payment", "cancel", "--merchant", m.id, "--payment", viaCli)).toEqual({ paymentId: viaCli, status: "cancelled" });
    expect(await history(viaCli)).toEqual([{ from_status: "pending", to_status: "cancelled", reason: "cancelled by the merchant" }]);
    expect((await outbox(viaCli)).map((o) => o.event)).toEqual(["payment.cancelled"]);

    const other = await svc.newMerchant({ name: "someone else" });
    for (const [id, apiKey, status, error] of [
      [viaGql, m.apiKey, 409, "Payment cannot be cancelled in status cancelled"],
      [randomUUID(), m.apiKey, 404, "Payment not found"],
      ["not-a-uuid", m.apiKey, 404, "Payment not found"],
      [viaGql, other.apiKey, 404, "Payment not found"],
    ] as const) {
      const rest = await cancel(id, apiKey);
      expect([rest.status, rest.body]).toEqual([status, { success: false, error, data: null }]);
      const res = await gql(CANCEL, { id }, apiKey);
      expect(res.body.data).toEqual({ cancelPayment: null });
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].message).toBe(error);
      expect(res.body.errors[0].extensions).toEqual({ code: status === 409 ? "CONFLICT" : "NOT_FOUND", http: status });
    }
  });

  it("another merchant's payment, an unknown or malformed id are 404, no key is 401; the payment is left as it was", async () => {
    const m = await shop("owner");
    const other = await shop("intruder");
    const id = await create(m, { merchant: payout(), amount: "1" });
    for (const [target, apiKey] of [
      [id, other.apiKey],
      [randomUUID(), m.apiKey],
      ["not-a-uuid", m.apiKey],
    ] as const) {
      const res = await cancel(target, apiKey);
      expect([res.status, res.body], target).toEqual([404, { success: false, error: "Payment not found", data: null }]);
    }
    const anonymous = await cancel(id);
    expect([anonymous.status, anonymous.body]).toEqual([401, { error: "Unauthorized" }]);
    expect(await row(id)).toMatchObject({ status: "pending", received_units: "0" });
    expect(await history(id)).toEqual([]);
    expect(await outbox(id)).toEqual([]);
  });

  it("a funded payment is 409 (withdraw instead), and so is a completed one; neither changes", async () => {
    const m = await shop("funded");
    const partial = await create(m, { merchant: payout(), amount: "1" });
    const full = await create(m, { merchant: payout(), amount: "1", gasless: true });
    await h().pay("USDT", (await row(partial)).recipient_address, 400_000n);
    await indexedPast((await h().pay("USDT", (await row(full)).recipient_address, 1_000_000n)).blockNumber);
    await until("partial recorded, full paid", detect, async () => {
      const [p, f] = [await row(partial), await row(full)];
      return p.received_units === "400000" && f.status === "paid";
    });

    const before = await row(partial);
    const refused = await cancel(partial, m.apiKey);
    expect([refused.status, refused.body]).toEqual([
      409,
      { success: false, error: "Payment has received funds: withdraw instead", data: null },
    ]);
    expect(await row(partial)).toEqual(before);
    expect(await history(partial)).toEqual([]);
    expect(await outbox(partial)).toEqual([]);
    expect(await listed(m, partial)).toMatchObject({ status: "pending", receivedAmount: "0.4" });

    await until("settled", settle, async () => (await row(full)).status === "completed");
    const completedBefore = await row(full);
    const late = await cancel(full, m.apiKey);
    expect([late.status, late.body]).toEqual([
      409,
      { success: false, error: "Payment cannot be cancelled in status completed", data: null },
    ]);
    expect(await row(full)).toEqual(completedBefore);
    expect((await outbox(full)).map((o) => o.event)).toEqual(["payment.completed"]);
  });

  it("a deposit indexed but not counted (3 confirmations) is 409 with its own message; nothing changes", async () => {
    const m = await shop("uncounted");
    const UNCOUNTED = { success: false, error: "Payment address has received funds not counted yet", data: null };
    /** The cancel is refused with `body` and leaves the payment exactly as it was. */
    const refused = async (id: string, body: unknown) => {
      const before = await row(id);
      const res = await cancel(id, m.apiKey);
      expect([res.status, res.body]).toEqual([409, body]);
      expect(await row(id)).toEqual(before);
      expect(await history(id)).toEqual([]);
      expect(await outbox(id)).toEqual([]);
    };

    // The full amount is indexed, and no detection pass has counted it yet: the window before the detector's next
    // pass. The row still reads pending with nothing received.
    const full = await create(m, { merchant: payout(), amount: "1", blockConfirmations: 3 });
    await indexedPast((await h().pay("USDT", (await row(full)).recipient_address, 1_000_000n)).blockNumber);
    expect(await row(full)).toMatchObject({ status: "pending", received_units: "0", payment_tx_hash: null });
    await refused(full, UNCOUNTED);

    // A partial deposit: a pass at its own block (1 of 3 confirmations) leaves it uncounted. The row keeps 0, so there
    // is nothing to withdraw either. At 3 of 3 it is counted, and the message says to withdraw.
    const part = await create(m, { merchant: payout(), amount: "1", blockConfirmations: 3 });
    const P = (await h().pay("USDT", (await row(part)).recipient_address, 400_000n)).blockNumber;
    await indexedPast(P + 2n);
    await detectPayments(svc.deps, chain(), P);
    expect(await row(part)).toMatchObject({ status: "pending", received_units: "0" });
    await refused(part, UNCOUNTED);
    const w = await svc.http("POST", `/v1/payments/${part}/withdraw`, { apiKey: m.apiKey });
    expect([w.status, w.body]).toEqual([409, { success: false, error: "Payment has no partial payment to withdraw", data: null }]);
    await detectPayments(svc.deps, chain(), P + 2n);
    expect(await row(part)).toMatchObject({ status: "pending", received_units: "400000" });
    await refused(part, { success: false, error: "Payment has received funds: withdraw instead", data: null });
  });

  it("a cancel racing a detection pass over an indexed payment: exactly one wins, in either order", async () => {
    const m = await shop("race");
    const token = getAddress(usdt());
    // The invariant whoever takes the row first: exactly one transition and what follows from it.
    // - Cancelled: the cancel answered 200, and the funds are unexpected funds, recoverable.
    // - Paid: the cancel got a 409, and no funds are unexpected.
    const winner = async (id: string, res: { status: number; body: any }) => {
      const [r, events, queued, item] = [await row(id), await history(id), (await outbox(id)).map((o) => o.event), await listed(m, id)];
      expect(events, JSON.stringify(events)).toHaveLength(1);
      if (r.status === "cancelled") {
        expect(res.status).toBe(200);
        expect(events).toEqual([{ from_status: "pending", to_status: "cancelled", reason: "cancelled by the merchant" }]);
        expect(r.received_units).toBe("0");
        expect(queued).toEqual(["payment.cancelled"]);
        expect(item.unexpectedFunds).toEqual([
          { token, symbol: "USDT", decimals: 6, amount: "1", units: "1000000", recoverable: true, recovery: null },
        ]);
        return "cancelled";
      }
      expect(res.status).toBe(409);
      expect(events).toEqual([{ from_status: "pending", to_status: "paid", reason: "payment received in full" }]);
      expect(r).toMatchObject({ status: "paid", received_units: "1000000" });
      expect(queued).toEqual([]);
      expect(item.unexpectedFunds).toEqual([]);
      return "paid";
    };

    // The transfer is indexed before either starts. The cancel reads the locked row and the transfer, so it loses
    // in both orders: first in line, it sees the uncounted deposit; second, it sees the payment paid.
    for (const [first, error] of [
      ["cancel", "Payment address has received funds not counted yet"],
      ["detector", "Payment cannot be cancelled in status paid"],
    ] as const) {
      const id = await create(m, { merchant: payout(), amount: "1" });
      await indexedPast((await h().pay("USDT", (await row(id)).recipient_address, 1_000_000n)).blockNumber);
      expect(await row(id)).toMatchObject({ status: "pending", received_units: "0" });
      const racers: Record<string, Racer> = {
        cancel: {
          what: "the cancel",
          run: () => cancel(id, m.apiKey),
          waitsWith: /FROM payments WHERE id = \$1 AND merchant_id = \$2 FOR UPDATE/,
        },
        detector: { what: "the detector", run: detect, waitsWith: /^SELECT \* FROM payments WHERE id = \$1 FOR UPDATE$/ },
      };
      const order = first === "cancel" ? [racers.cancel!, racers.detector!] : [racers.detector!, racers.cancel!];
      const settled = await whileHeld(id, order);
      for (const x of settled) expect(x.status, String((x as PromiseRejectedResult).reason)).toBe("fulfilled");
      const res = (settled[first === "cancel" ? 0 : 1] as PromiseFulfilledResult<{ status: number; body: any }>).value;
      expect(await winner(id, res), first).toBe("paid");
      expect(res.body, first).toEqual({ success: false, error, data: null });
    }
  });

  it("funds sent after the cancel are indexed, listed as unexpected funds and recovered to the payout less a payment's fees", async () => {
    const m = await shop("late funds");
    const to = payout();
    const id = await create(m, { merchant: to, amount: "1" });
    const res = await cancel(id, m.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const address = (await row(id)).recipient_address as Address;
    // The address stays registered for the indexer: nothing unregisters a cancelled payment's address.
    const watched = await pool().query(`SELECT kind FROM watched_addresses WHERE chain_id = $1 AND address = $2`, [
      CHAIN,
      address.toLowerCase(),
    ]);
    expect(watched.rowCount).toBe(1);

    // The payer pays anyway: the full amount, after the cancel.
    const paid = await h().pay("USDT", address, 1_000_000n);
    await indexedPast(paid.blockNumber);
    const token = getAddress(usdt());
    const entry = {
      token,
      symbol: "USDT",
      decimals: 6,
      amount: "1",
      units: "1000000",
      recoverable: true,
      recovery: null,
    };
    await until("late funds listed", detect, async () => isDeepStrictEqual((await listed(m, id)).unexpectedFunds, [entry]));
    // Detection leaves a cancelled payment alone: nothing counted, no transition, no event.
    await detect();
    expect(await row(id)).toMatchObject({ status: "cancelled", received_units: "0", payment_tx_hash: null });
    expect(await history(id)).toHaveLength(1);
    expect((await outbox(id)).map((o) => o.event)).toEqual(["payment.cancelled"]);

    const rec = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token: usdt() } });
    expect([rec.status, rec.body]).toEqual([
      200,
      {
        success: true,
        error: null,
        data: { recoveryId: expect.any(String), paymentId: id, token, status: "requested", amount: "1", units: "1000000", payout: to },
      },
    ]);
    expect(await h().balanceOf("USDT", to)).toBe(0n);
    await until(
      "recovered",
      settle,
      async () =>
        (await pool().query(`SELECT status FROM fund_recoveries WHERE id = $1`, [rec.body.data.recoveryId])).rows[0].status === "recovered",
    );
    // Charged as a 1 USDT payment would be (docs/unexpected-funds.md, "Fees"): 1% and the 0.10 processing fee.
    expect(await h().balanceOf("USDT", to)).toBe(890_000n);
    expect(await h().balanceOf("USDT", address)).toBe(0n);
    const done = (await pool().query(`SELECT recovered_units, tx_hash FROM fund_recoveries WHERE id = $1`, [rec.body.data.recoveryId]))
      .rows[0];
    expect(done.recovered_units).toBe("890000");
    const after = await listed(m, id);
    expect(after).toMatchObject({ status: "cancelled", receivedAmount: "0" });
    expect(after.unexpectedFunds).toEqual([
      {
        ...entry,
        amount: "0",
        units: "0",
        recoverable: false,
        recovery: {
          recoveryId: rec.body.data.recoveryId,
          status: "recovered",
          transactionHash: done.tx_hash,
          recoveredAmount: "0.89",
          recoveredUnits: "890000",
          feeUnits: "110000",
          gasTankFee: "0",
          error: null,
          requestedAt: expect.any(Number),
        },
      },
    ]);
    // Recovered funds are no settlement: the payment stays cancelled, with no sweep of its own.
    expect(await row(id)).toMatchObject({ status: "cancelled", settlement_tx_hash: null, withdrawal_tx_hash: null });
    expect((await pool().query(`SELECT 1 FROM settlements WHERE $1 = ANY(payment_ids)`, [id])).rowCount).toBe(0);
  });
});
