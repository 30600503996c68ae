import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { cliSanctionsList, cliSanctionsReject, cliSanctionsRelease, cliSanctionsReturn, factoryOwner } from "../../../cli/sanctions.js";
import { walletFactoryAbi } from "../../../abis/WalletFactory.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { returnHeldFunds, settleReturns } from "../../../modules/sanctions/index.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { detector } from "../../../processors/detector.js";
import { settleChain } from "../../../processors/settler.js";
import { chainHelpers, stepUntil, waitIndexed } from "../../helpers/chain.js";
import { asDeployer } from "../../helpers/deployer-lock.js";
import { flagOnOracle, sanctionsRows } from "../../helpers/sanctions.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// Returning held funds (docs/sanctions.md, "Returning held funds"): the operator sends a sanctioned payment's funds to
// an address they name, with the factory owner's key (WalletFactory.returnFunds), from the CLI. A dry run signs
// nothing; a return is stored signed before broadcast, so a crash in between leaves a row a re-run follows (the same
// transaction, never a second one); release and reject are refused while it is in flight; the settler completes it
// once final and indexed: the payment `cancelled` with `fundsReturned`, the hold `returned` with its audit row. The
// destination is checked and screened. Detection and settlement are driven pass by pass (no background processors).
// The vault deposit case: test/modules/sanctions/vault-reject.test.ts; a return re-orged out, and one that reverts (both need
// blocks mined by hand): test/chaos/reorg.test.ts.

vi.setConfig({ testTimeout: 300_000 });
const CHAIN = 777177;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(async () => {
  await svc?.stop();
});

const chain = (chainId = CHAIN) => svc.deps.chains.find((c) => c.chainId === chainId)!;
const h = (chainId = CHAIN) => chainHelpers(chain(chainId));
const pool = () => svc.deps.db.pool;
const rows = () => sanctionsRows(svc.deps.db);
const fresh = () => privateKeyToAccount(generatePrivateKey()).address;
const row = async (id: string) => (await pool().query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
const returnsOf = async (holdId: string) =>
  (await pool().query(`SELECT * FROM sanctions_returns WHERE hold_id = $1 ORDER BY created_at`, [holdId])).rows;
const outbox = async (id: string, event: string) =>
  (await pool().query(`SELECT payload FROM webhook_deliveries WHERE payment_id = $1 AND event = $2`, [id, event])).rows.map(
    (r) => r.payload,
  );

/** `sanctions return` as the CLI runs it, with the run's service configuration; the local deployer owns the factory. */
const giveBack = (target: { paymentId: string }, opts: Parameters<typeof cliSanctionsReturn>[4], owner = LOCAL_ROLES.deployer) =>
  cliSanctionsReturn(
    svc.deps.db,
    svc.deps.chains,
    owner,
    target,
    { reason: "return ordered by compliance", operator: "ops", ...opts },
    svc.deps.config,
    svc.clock.now,
  );

/** A payment of `token` (zero address: native coin) paid in full by a payer the oracle flags, then `sanctioned`. */
async function sanctionedPayment(
  chainId: number,
  token: Address,
  pay: (wallet: Address, due: bigint, payer: PrivateKeyAccount) => Promise<{ blockNumber: bigint }>,
) {
  const m = await svc.newMerchant({ name: `return ${token}` });
  const hook = await svc.http("PUT", "/v1/webhooks", {
    apiKey: m.apiKey,
    body: { url: "https://127.0.0.1:9/hooks", events: [...PAYMENT_EVENTS] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const payer = await h(chainId).newPayer();
  await flagOnOracle(svc.deps.db, chain(chainId), payer.address);
  const res = await svc.http("POST", "/payments", {
    apiKey: m.apiKey,
    body: { orderId: `order-${Math.random()}`, chainId: String(chainId), merchant: fresh(), amount: "2", gasless: true, token },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = (res.body.url as string).split("/pay/")[1]!;
  const p = await row(id);
  const wallet = getAddress(p.recipient_address);
  await waitIndexed(svc.deps.db, chainId, (await pay(wallet, BigInt(p.due_units), payer)).blockNumber);
  await stepUntil(
    "paid",
    () => detector().run(svc.deps),
    async () => (await row(id)).status === "paid",
  );
  await stepUntil(
    "sanctioned",
    () => settleChain(svc.deps, chain(chainId)),
    async () => (await row(id)).status === "sanctioned",
  );
  const hold = (await pool().query(`SELECT id FROM sanctions_holds WHERE payment_id = $1 AND status = 'held'`, [id])).rows[0].id as string;
  return { m, id, wallet, due: BigInt(p.due_units), payer, hold };
}

/** Mines the chain's finality depth past `block`, waits until it is indexed, and runs the settler's step until done. */
async function completeAt(block: bigint, done: () => Promise<boolean>, chainId = CHAIN) {
  await h(chainId).mine(chain(chainId).finalityBlocks);
  await waitIndexed(svc.deps.db, chainId, block);
  await stepUntil("return completed", () => settleReturns(svc.deps, chain(chainId)), done);
}

describe("sanctions return", () => {
  it("returns a sanctioned USDT payment's funds: dry run, checks, a crash before broadcast, completion at finality", async () => {
    const usdt = h().token("USDT").address;
    const { m, id, wallet, due, payer, hold } = await sanctionedPayment(CHAIN, usdt, (w, due, payer) => h().pay("USDT", w, due, payer));
    const to = fresh();

    // A dry run: the plan and its gas, nothing stored or signed.
    const nonce = await h().pub.getTransactionCount({ address: LOCAL_ROLES.deployer.address });
    const plan = await giveBack({ paymentId: id }, { to });
    expect(plan).toMatchObject({
      dryRun: true,
      holdId: hold,
      holdStatus: "held",
      subject: "payment",
      chainId: CHAIN,
      sanctionedAddress: getAddress(payer.address),
      wallet,
      token: getAddress(usdt),
      amountUnits: due.toString(),
      balanceUnits: due.toString(),
      to: getAddress(to),
      toScreening: { status: "clear", sources: [`oracle:${chain().sanctionsOracle!.toLowerCase()}`], licence: null },
      heldUnits: due.toString(),
      signer: LOCAL_ROLES.deployer.address,
    });
    expect(BigInt((plan as { gasEstimate: string }).gasEstimate)).toBeGreaterThan(50_000n);
    expect(await returnsOf(hold)).toEqual([]);
    expect(await h().pub.getTransactionCount({ address: LOCAL_ROLES.deployer.address })).toBe(nonce);

    // Destinations refused before anything is signed: the flagged payer (without a licence), the deposit address, the
    // factory, an address the service watches (another payment's), none, and an amount above the balance.
    const other = await svc.http("POST", "/payments", {
      apiKey: m.apiKey,
      body: { orderId: `other-${Math.random()}`, chainId: String(CHAIN), merchant: fresh(), amount: "1", token: usdt },
    });
    const watched = (await row((other.body.url as string).split("/pay/")[1]!)).recipient_address;
    for (const [dest, message] of [
      [
        payer.address,
        `${getAddress(payer.address)} is flagged by oracle:${chain().sanctionsOracle!.toLowerCase()}: returning funds to it needs --licence <reference>`,
      ],
      [wallet, "--to is the deposit address itself"],
      [chain().factory!, "--to is the wallet factory"],
      [watched, "--to is an address this service watches (payment): funds sent there would be taken for a deposit"],
      [zeroAddress, "--to may not be the zero address"],
      ["0x1234", "--to must be an address (0x followed by 40 hex digits)"],
    ])
      await expect(giveBack({ paymentId: id }, { to: dest, yes: true }), dest).rejects.toThrow(message);
    await expect(giveBack({ paymentId: id }, { to, amount: (due + 1n).toString(), yes: true })).rejects.toThrow(
      `the deposit address holds ${due} units, less than the ${due + 1n} to return`,
    );
    for (const amount of ["0", "-1", "1.5", "1e6"])
      await expect(giveBack({ paymentId: id }, { to, amount, yes: true }), amount).rejects.toThrow(
        "--amount must be a positive whole number of smallest units",
      );
    const implementation = await h().pub.readContract({ address: chain().factory!, abi: walletFactoryAbi, functionName: "implementation" });
    await expect(giveBack({ paymentId: id }, { to: implementation, yes: true })).rejects.toThrow(
      "--to is the wallets' implementation contract",
    );
    // With a licence the flagged payer is a valid destination (only the dry run here).
    expect(await giveBack({ paymentId: id }, { to: payer.address, licence: "OFAC-2026-0042" })).toMatchObject({
      dryRun: true,
      toScreening: { status: "sanctioned", licence: "OFAC-2026-0042" },
    });
    // The settler's key is not the owner: refused by the CLI (and the contract would revert).
    await expect(giveBack({ paymentId: id }, { to, yes: true }, LOCAL_ROLES.settler)).rejects.toThrow(
      `the key given (${LOCAL_ROLES.settler.address}) is not the factory owner (${LOCAL_ROLES.deployer.address})`,
    );
    expect(await returnsOf(hold)).toEqual([]);

    // The owner's transactions are sent under the deployer lock (other files share the key), crash and re-run included.
    const decision = { actor: "ops", reason: "return ordered by compliance" };
    const sent = await asDeployer(svc.deps.db, async () => {
      // A crash between storing and broadcasting: one signed row, nothing on chain.
      let hash: Hex | undefined;
      const crash = {
        beforeBroadcast: (h: Hex) => {
          hash = h;
          throw new Error("crash before broadcast");
        },
      };
      await expect(
        returnHeldFunds(svc.deps, LOCAL_ROLES.deployer, { paymentId: id }, { to, confirm: true, hooks: crash }, decision),
      ).rejects.toThrow("crash before broadcast");
      const [stored] = await returnsOf(hold);
      expect(stored).toMatchObject({
        status: "signed",
        tx_hash: hash,
        to_address: to.toLowerCase(),
        amount_units: due.toString(),
        actor: "ops",
      });
      await expect(h().pub.getTransactionReceipt({ hash: hash! })).rejects.toThrow();
      // While it is in flight the hold can be neither released nor rejected, and the dry run says it is in flight.
      await expect(cliSanctionsRelease(svc.deps.db, { paymentId: id }, { reason: "x", operator: "ops" })).rejects.toThrow(
        `A return of these funds is in flight (return ${stored.id}, signed): decide again once it completes, reverts or is dropped`,
      );
      await expect(cliSanctionsReject(svc.deps.db, { paymentId: id }, { reason: "x", operator: "ops" })).rejects.toThrow(
        "A return of these funds is in flight",
      );
      expect(await giveBack({ paymentId: id }, { to })).toMatchObject({
        dryRun: true,
        inFlight: true,
        returnId: stored.id,
        status: "signed",
      });
      // The re-run follows the stored transaction (the same bytes), signs nothing new, and waits for its receipt.
      const out = await giveBack({ paymentId: id }, { to: fresh(), yes: true });
      expect(out).toMatchObject({ inFlight: true, returnId: stored.id, status: "mined", txHash: hash, holdStatus: "held" });
      expect((await returnsOf(hold)).map((r) => [r.id, r.status, r.tx_hash])).toEqual([[stored.id, "mined", hash]]);
      return { returnId: stored.id as string, hash: hash!, block: BigInt((await returnsOf(hold))[0].block_number) };
    });
    // Mined, not final: the payment is still sanctioned and nothing is decided.
    expect((await row(id)).status).toBe("sanctioned");
    expect(await h().balanceOf("USDT", wallet)).toBe(0n);
    expect(await h().balanceOf("USDT", to)).toBe(due);

    await completeAt(sent.block, async () => (await returnsOf(hold))[0].status === "completed");
    const done = await row(id);
    expect(done.status).toBe("cancelled");
    expect(done.received_units).toBe(due.toString());
    expect((await rows().holds("payment_id", id)).map((x) => x.status)).toEqual(["returned"]);
    expect(await rows().actions("payment_id", id)).toEqual([
      { action: "return", actor: "ops", reason: "return ordered by compliance", subject_from: "sanctioned", subject_to: "cancelled" },
    ]);
    const cancelled = await outbox(id, "payment.cancelled");
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]).toMatchObject({
      event: "payment.cancelled",
      status: "cancelled",
      reason: "sanctions",
      sanctionedAddress: getAddress(payer.address),
      fundsReturned: { to: getAddress(to), token: getAddress(usdt), amountUnits: due.toString(), transactionHash: sent.hash },
    });
    // The merchant's list: nothing left at the address, nothing to recover.
    const listed = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent(done.order_id)}`, { apiKey: m.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data[0].unexpectedFunds).toEqual([]);
    expect((await cliSanctionsList(svc.deps.db, { all: true })).find((x) => x.paymentId === id)).toMatchObject({
      status: "returned",
      subjectStatus: "cancelled",
      return: {
        returnId: sent.returnId,
        status: "completed",
        to: getAddress(to),
        amountUnits: due.toString(),
        txHash: sent.hash,
        error: null,
      },
    });
    // Done is done: another return finds nothing to return, and the settler's pass changes nothing.
    await expect(giveBack({ paymentId: id }, { to, yes: true })).rejects.toThrow(
      `Payment funds were already returned (return ${sent.returnId})`,
    );
    await settleChain(svc.deps, chain());
    expect((await row(id)).status).toBe("cancelled");
    expect(await outbox(id, "payment.cancelled")).toHaveLength(1);
  });

  it("returns part of a rejected payment's funds; the rest's recovery is held by screening, then returned in turn", async () => {
    const usdt = h().token("USDT").address;
    const { m, id, wallet, due, hold } = await sanctionedPayment(CHAIN, usdt, (w, due, payer) => h().pay("USDT", w, due, payer));
    await cliSanctionsReject(svc.deps.db, { paymentId: id }, { reason: "confirmed match", operator: "ops" });
    expect((await row(id)).status).toBe("cancelled");
    const to = fresh();
    const part = due / 2n;
    const out = await asDeployer(svc.deps.db, () => giveBack({ paymentId: id }, { to, amount: part.toString(), yes: true }));
    expect(out).toMatchObject({ holdStatus: "rejected", status: "mined", amountUnits: part.toString(), balanceUnits: due.toString() });
    expect(await h().balanceOf("USDT", to)).toBe(part);
    expect(await h().balanceOf("USDT", wallet)).toBe(due - part);
    await completeAt(BigInt((out as { blockNumber: string }).blockNumber), async () => (await returnsOf(hold))[0].status === "completed");
    // Rejected before: the payment stays cancelled, with no second event; the hold is returned, with the audit row.
    expect((await row(id)).status).toBe("cancelled");
    expect(await outbox(id, "payment.cancelled")).toHaveLength(1);
    expect((await rows().holds("payment_id", id)).map((x) => x.status)).toEqual(["returned"]);
    expect((await rows().actions("payment_id", id)).map((a) => [a.action, a.subject_from, a.subject_to])).toEqual([
      ["reject", "sanctioned", "cancelled"],
      ["return", "cancelled", "cancelled"],
    ]);

    // What stays at the address is listed to the merchant as unexpected funds, recoverable only if screening clears
    // it: its sender is the flagged payer, so the recovery is held in turn (modules/sanctions/recovery.ts), not swept.
    const listed = await svc.http("GET", `/v1/payments?orderId=${encodeURIComponent((await row(id)).order_id)}`, { apiKey: m.apiKey });
    expect(listed.body.data[0].unexpectedFunds).toEqual([
      expect.objectContaining({ token: getAddress(usdt), units: (due - part).toString() }),
    ]);
    const recover = await svc.http("POST", `/v1/payments/${id}/recover`, { apiKey: m.apiKey, body: { token: usdt } });
    expect(recover.status, JSON.stringify(recover.body)).toBe(200);
    const recovery = (await pool().query(`SELECT id FROM fund_recoveries WHERE payment_id = $1`, [id])).rows[0].id as string;
    await stepUntil(
      "the recovery held",
      () => settleChain(svc.deps, chain()),
      async () => (await rows().holds("recovery_id", recovery)).some((x) => x.status === "held"),
    );
    expect(await h().balanceOf("USDT", wallet)).toBe(due - part);

    // The held recovery's funds are returned in turn: all that is left; the recovery fails with why.
    const recoveryHold = (await pool().query(`SELECT id FROM sanctions_holds WHERE recovery_id = $1`, [recovery])).rows[0].id as string;
    const to2 = fresh();
    const back = await asDeployer(svc.deps.db, () =>
      cliSanctionsReturn(
        svc.deps.db,
        svc.deps.chains,
        LOCAL_ROLES.deployer,
        { recoveryId: recovery },
        { to: to2, reason: "rest returned", operator: "ops", yes: true },
        svc.deps.config,
      ),
    );
    expect(back).toMatchObject({ subject: "recovery", holdStatus: "held", status: "mined", amountUnits: (due - part).toString() });
    await completeAt(
      BigInt((back as { blockNumber: string }).blockNumber),
      async () => (await returnsOf(recoveryHold))[0].status === "completed",
    );
    expect(await h().balanceOf("USDT", wallet)).toBe(0n);
    expect(await h().balanceOf("USDT", to2)).toBe(due - part);
    const failed = (await pool().query(`SELECT status, error FROM fund_recoveries WHERE id = $1`, [recovery])).rows[0];
    expect(failed).toEqual({ status: "failed", error: `returned by sanctions screening: ${due - part} units to ${getAddress(to2)}` });
    expect((await rows().actions("recovery_id", recovery)).map((a) => [a.action, a.subject_from, a.subject_to])).toEqual([
      ["return", "requested", "failed"],
    ]);
  });

  it("returns a sanctioned native-coin payment's coin (Polygon's finality, 200 blocks, is not mined here)", async () => {
    const { id, wallet, due, hold } = await sanctionedPayment(137, zeroAddress, (w, due, payer) => h(137).sendNative(w, due, payer));
    const to = fresh();
    const out = await asDeployer(svc.deps.db, () => giveBack({ paymentId: id }, { to, yes: true }));
    expect(out).toMatchObject({
      holdStatus: "held",
      status: "mined",
      token: zeroAddress,
      amountUnits: due.toString(),
      next: "the settler completes it once 200 blocks deep and indexed",
    });
    expect(await h(137).pub.getBalance({ address: to })).toBe(due);
    expect(await h(137).pub.getBalance({ address: wallet })).toBe(0n);
    // Not final yet: still sanctioned, the return mined and followed by the settler's pass.
    await settleChain(svc.deps, chain(137));
    expect((await row(id)).status).toBe("sanctioned");
    expect((await returnsOf(hold)).map((r) => r.status)).toEqual(["mined"]);
  });

  it("the owner's key: FACTORY_OWNER_PRIVATE_KEY, else the local deployer; a malformed key is refused", () => {
    const key = generatePrivateKey();
    expect(factoryOwner({ FACTORY_OWNER_PRIVATE_KEY: key }).address).toBe(privateKeyToAccount(key).address);
    expect(factoryOwner({}, LOCAL_ROLES.deployer).address).toBe(LOCAL_ROLES.deployer.address);
    expect(() => factoryOwner({})).toThrow("FACTORY_OWNER_PRIVATE_KEY is not set: returning funds needs the factory owner's key");
    expect(() => factoryOwner({ FACTORY_OWNER_PRIVATE_KEY: "0x12" })).toThrow(
      "FACTORY_OWNER_PRIVATE_KEY must be 0x followed by 64 hex digits",
    );
  });
});
