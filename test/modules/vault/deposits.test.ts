import { createHash } from "node:crypto";
import { createWalletClient, getAddress, http as viemHttp, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testTokenAbi, testTokenBytecode } from "../../../abis/TestToken.js";
import { walletFactoryAbi } from "../../../abis/WalletFactory.js";
import { viemChain } from "../../../chains/clients.js";
import { computeWalletAddress, vaultSalt } from "../../../chains/deposit-address.js";
import { indexerProgress } from "../../../db/indexer-status.js";
import { LOCAL_ROLES } from "../../../local/accounts.js";
import { setVaultFee } from "../../../modules/vault/index.js";
import { allProcessors } from "../../../processors/index.js";
import { startProcessors, type ProcessorRunner } from "../../../processors/runner.js";
import { vaultSweeper } from "../../../processors/vault-sweeper.js";
import { webhookDispatcher, type WebhookDispatcherProcessor } from "../../../processors/webhook-dispatcher.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startReceiver, type Receiver } from "../webhooks/helpers/receiver.js";

// Vault users and deposits end to end on chain 777177: a business configures its vault over the API, hands out
// deposit addresses to two users, the users deposit USDT and USDC (one deposit below the 0.001-token minimum, one
// in a token the vault does not accept), the sweeper moves the funds to the business wallet minus the fee, one
// sweep fails (the vault's fee recipient is not allow-listed on the factory) and is retried to completion after
// the backoff, webhooks reach an HTTPS receiver signed with X-Webhook-Signature, a second business sees nothing
// of the first, and a wallet change leaves old addresses paying the old wallet.

vi.setConfig({ testTimeout: 300_000 });
const WAIT = { timeout: 150_000 };
const CHAIN = 777177;
const USDT = 10n ** 6n; // both test tokens have 6 decimals

let receiver: Receiver;
let svc: TestService;
let dispatcher: WebhookDispatcherProcessor;
let runner: ProcessorRunner;
const processorErrors: string[] = [];
/** Makes the vault sweeper's next broadcast die just before or just after the node gets the bytes. */
let crashAt: "before" | "after" | null = null;
const crash = (at: "before" | "after") => () => {
  if (crashAt !== at) return;
  crashAt = null;
  throw new Error(`simulated crash ${at} broadcast`);
};

type Business = { apiKey: string; wallet: Address; publicId: string; secret: string; path: string };
let A: Business;
let B: Business;
/** Vault A's fee recipient: a fresh address, allow-listed on the factory only halfway through. */
const feeTo = privateKeyToAccount(generatePrivateKey()).address;

const chain = () => svc.deps.chains.find((c) => c.chainId === CHAIN)!;
const h = () => chainHelpers(chain());
const tokenOf = (symbol: string) => h().token(symbol).address;

async function business(name: string, path: string): Promise<Business> {
  const m = await svc.newMerchant({ name });
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const created = await svc.http("POST", "/vault/v1/config", {
    apiKey: m.apiKey,
    body: {
      businessName: name,
      walletAddress: wallet,
      enabledTokens: [
        { chainId: CHAIN, token: tokenOf("USDT"), tokenSymbol: "USDT" },
        { chainId: CHAIN, token: tokenOf("USDC"), tokenSymbol: "USDC" },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const hook = await svc.http("PUT", "/vault/v1/config/webhooks", {
    apiKey: m.apiKey,
    body: { url: new URL(path, receiver.url).toString(), events: ["deposit.*"] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  return { apiKey: m.apiKey, wallet, publicId: created.body.data.publicId, secret: hook.body.data.secret, path };
}

/** The factory owner's transactions, one test file at a time (the deployer is shared, like in test/helpers/service.ts). */
async function asFactoryOwner(fn: string, args: unknown[]) {
  const lock = await svc.deps.db.pool.connect();
  await lock.query(`SELECT pg_advisory_lock(hashtext('test:deployer'))`);
  try {
    const owner = createWalletClient({ chain: viemChain(chain()), transport: viemHttp(chain().rpcUrl), account: LOCAL_ROLES.deployer });
    const hash = await owner.writeContract({
      address: chain().factory!,
      abi: walletFactoryAbi,
      functionName: fn as "setFeeRecipient",
      args: args as [Address, boolean],
    });
    await h().wait(hash);
  } finally {
    await lock.query(`SELECT pg_advisory_unlock(hashtext('test:deployer'))`);
    lock.release();
  }
}

beforeAll(async () => {
  receiver = await startReceiver();
  // Deposits and sweeps count once 2 blocks deep (the default is the chain's finality, 30 blocks).
  svc = await startTestService({ processors: false, env: { VAULT_CONFIRMATIONS: "2" } });
  dispatcher = webhookDispatcher({ tls: { ca: receiver.ca }, log: (m) => void processorErrors.push(m) });
  runner = startProcessors(
    svc.deps,
    allProcessors().map((p) =>
      p.name === dispatcher.name
        ? dispatcher
        : p.name === "vault-sweeper"
          ? vaultSweeper({ beforeBroadcast: crash("before"), afterBroadcast: crash("after") })
          : p,
    ),
    (m) => {
      processorErrors.push(m);
      if (process.env.DEBUG_PROCESSORS) console.error(m);
    },
  );
  A = await business("Vault Shop A", "/hooks/a");
  B = await business("Vault Shop B", "/hooks/b");
  // The operator registers business A with 0.5% to its own recipient, which the factory does not know yet.
  await setVaultFee(svc.deps, { publicId: A.publicId, feeBps: 50, recipient: feeTo });
});
afterAll(async () => {
  await runner?.stop();
  await dispatcher?.close();
  await svc?.stop();
  await receiver?.close();
});

const newUser = (b: Business, externalUserId: string, symbol = "USDT", chainId: number = CHAIN) =>
  svc.http("POST", "/vault/v1/users", { apiKey: b.apiKey, body: { externalUserId, chainId, tokenAddress: tokenOf(symbol) } });

async function listDeposits(b: Business, query = "") {
  const res = await svc.http("GET", `/vault/v1/deposits${query}`, { apiKey: b.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { deposits: any[]; total: number };
}

/** The deposit of a transaction, once it satisfies `ok`. */
async function depositOf(b: Business, txHash: Hex, ok: (d: { status: string; hold: string | null }) => boolean, what: string) {
  // Polled in the database (the API allows 100 lists a minute), then read once through the API.
  await waitFor(
    async () => {
      const { rows } = await svc.deps.db.pool.query(`SELECT status, hold FROM vault_deposits WHERE deposit_tx_hash = $1`, [txHash]);
      return rows[0] && ok(rows[0]);
    },
    { ...WAIT, what },
  );
  const d = (await listDeposits(b, "?limit=100")).deposits.find((x) => x.depositTxHash === txHash);
  expect(d && ok(d), `${what}: as the API shows it`).toBe(true);
  return d;
}

/** Deliveries of `event` for a deposit, signature checked against the business's secret. */
function hooks(b: Business, depositId: string, event: string) {
  return receiver.received
    .filter((r) => r.path === b.path)
    .map((r) => ({ r, body: JSON.parse(r.rawBody) }))
    .filter((x) => x.body.event === event && x.body.data.depositId === depositId)
    .map((x) => {
      expect(x.r.headers["x-webhook-signature"]).toBe(
        createHash("sha256")
          .update(x.r.rawBody + b.secret)
          .digest("hex"),
      );
      return x.body;
    });
}

async function gasOf(txHash: Hex) {
  return (await svc.deps.clients.get(CHAIN)!.getTransactionReceipt({ hash: txHash })).gasUsed;
}

const fee50 = (amount: bigint) => (amount * 50n) / 10_000n;
const WEBHOOK_DATA_KEYS = [
  "depositId",
  "externalUserId",
  "amount",
  "fee",
  "netAmount",
  "tokenSymbol",
  "tokenAddress",
  "chainId",
  "depositAddress",
  "status",
  "depositTxHash",
  "processTxHash",
  "timestamp",
].sort();

describe("vault users", () => {
  it("POST /users hands out one address per (user, wallet) for every token; validation messages", async () => {
    const first = await newUser(A, "alice");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const expected = computeWalletAddress({ factory: chain().factory!, salt: vaultSalt("alice", A.wallet), payout: A.wallet });
    expect(first.body).toEqual({
      success: true,
      data: { depositAddress: expected, externalUserId: "alice", chainId: CHAIN, tokenSymbol: "USDT", isNew: true },
    });
    // The factory agrees.
    const onChain = await h().pub.readContract({
      address: chain().factory!,
      abi: walletFactoryAbi,
      functionName: "computeAddress",
      args: [vaultSalt("alice", A.wallet), A.wallet],
    });
    expect(onChain).toBe(expected);
    const again = await newUser(A, "alice");
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ ...first.body.data, isNew: false });
    const usdc = await newUser(A, "alice", "USDC");
    expect(usdc.body.data).toEqual({ ...first.body.data, tokenSymbol: "USDC", isNew: false });
    const bob = await newUser(A, "bob");
    expect(bob.status).toBe(201);
    expect(bob.body.data.depositAddress).not.toBe(expected);
    // Registered for indexing before it was returned.
    const { rows } = await svc.deps.db.pool.query(`SELECT kind FROM watched_addresses WHERE chain_id = $1 AND address = $2`, [
      CHAIN,
      expected.toLowerCase(),
    ]);
    expect(rows).toEqual([{ kind: "vault" }]);

    const bad = async (body: unknown, status: number, error: string, apiKey: string = A.apiKey) => {
      const res = await svc.http("POST", "/vault/v1/users", { apiKey, body });
      expect({ status: res.status, body: res.body }).toEqual({ status, body: { success: false, error } });
    };
    const usdt = tokenOf("USDT");
    await bad({ externalUserId: "u", chainId: CHAIN, tokenAddress: usdt }, 401, "Unauthorized", ""); // no x-api-key header
    await bad({ externalUserId: "u", chainId: CHAIN, tokenAddress: usdt }, 401, "Unauthorized", "nope");
    await bad({ chainId: CHAIN, tokenAddress: usdt }, 400, "externalUserId is required");
    await bad({ externalUserId: "  ", chainId: CHAIN, tokenAddress: usdt }, 400, "externalUserId is required");
    await bad({ externalUserId: 42, chainId: CHAIN, tokenAddress: usdt }, 400, "externalUserId must be a string");
    await bad(
      { externalUserId: "x".repeat(101), chainId: CHAIN, tokenAddress: usdt },
      400,
      "externalUserId must be at most 100 characters",
    );
    await bad({ externalUserId: "a\nb", chainId: CHAIN, tokenAddress: usdt }, 400, "externalUserId must not contain control characters");
    await bad({ externalUserId: "u", tokenAddress: usdt }, 400, "chainId is required");
    await bad({ externalUserId: "u", chainId: "777177", tokenAddress: usdt }, 400, "chainId must be a positive integer number");
    await bad({ externalUserId: "u", chainId: 137, tokenAddress: usdt }, 400, "Vault is coming soon on chain 137");
    await bad({ externalUserId: "u", chainId: 5, tokenAddress: usdt }, 400, "Unsupported chain");
    await bad({ externalUserId: "u", chainId: CHAIN }, 400, "tokenAddress is required");
    await bad({ externalUserId: "u", chainId: CHAIN, tokenAddress: "0x123" }, 400, "Invalid token address");
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await bad(
      { externalUserId: "u", chainId: CHAIN, tokenAddress: other },
      400,
      `Token ${other} is not enabled for this vault on chain ${CHAIN}`,
    );
    await bad({ externalUserId: "u", chainId: CHAIN, tokenAddress: usdt, extra: 1 }, 400, "Unknown field: extra");
    await bad([1], 400, "Body must be a JSON object");
    const noVault = await svc.newMerchant();
    await bad({ externalUserId: "u", chainId: CHAIN, tokenAddress: usdt }, 404, "Vault not configured", noVault.apiKey);
  });

  it("GET /users before any deposit; 404 and 400", async () => {
    const res = await svc.http("GET", "/vault/v1/users?externalUserId=alice", { apiKey: A.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The latest POST for alice asked for USDC.
    expect(res.body.data).toMatchObject({
      externalUserId: "alice",
      chainId: CHAIN,
      tokenSymbol: "USDC",
      totalDeposited: "0",
      depositCount: 0,
      lastDepositAt: null,
    });
    const missing = await svc.http("GET", "/vault/v1/users?externalUserId=nobody", { apiKey: A.apiKey });
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { success: false, error: "User not found" } });
    const none = await svc.http("GET", "/vault/v1/users", { apiKey: A.apiKey });
    expect({ status: none.status, body: none.body }).toEqual({
      status: 400,
      body: { success: false, error: "externalUserId is required" },
    });
  });
});

describe("deposits and sweeps", () => {
  let alice: Address;
  let bob: Address;
  const gas: Record<string, bigint> = {};

  beforeAll(async () => {
    alice = (await newUser(A, "alice")).body.data.depositAddress;
    bob = (await newUser(A, "bob")).body.data.depositAddress;
  });

  it("a sweep that cannot execute fails (one deposit.failed webhook), then completes after the fix and the backoff", async () => {
    const tx = await h().pay("USDT", alice, 10n * USDT);
    const failed = await depositOf(A, tx.transactionHash, (d) => d.status === "failed", "the first sweep to fail");
    expect(failed).toMatchObject({
      externalUserId: "alice",
      amount: "10000000",
      fee: "50000",
      netAmount: "9950000",
      processTxHash: null,
      hold: null,
    });
    expect((await listDeposits(A, "?status=failed")).deposits.map((d) => d.depositId)).toEqual([failed.depositId]);
    const failedHook = await waitFor(async () => hooks(A, failed.depositId, "deposit.failed")[0], { ...WAIT, what: "deposit.failed" });
    expect(Object.keys(failedHook).sort()).toEqual(["data", "event", "timestamp"]);
    expect(Object.keys(failedHook.data).sort()).toEqual(WEBHOOK_DATA_KEYS);
    expect(failedHook.data).toMatchObject({
      depositId: failed.depositId,
      externalUserId: "alice",
      amount: "10000000",
      tokenSymbol: "USDT",
      tokenAddress: tokenOf("USDT"),
      chainId: CHAIN,
      depositAddress: alice,
      status: "failed",
      depositTxHash: tx.transactionHash,
      processTxHash: null,
    });
    // Nothing moved.
    expect(await h().balanceOf("USDT", alice)).toBe(10n * USDT);

    // The operator allow-lists the recipient; the retry waits for the backoff (the clock is moved past it).
    await asFactoryOwner("setFeeRecipient", [feeTo, true]);
    svc.clock.advance(61 * 60_000);
    const done = await depositOf(A, tx.transactionHash, (d) => d.status === "completed", "the retried sweep to complete");
    expect(done).toMatchObject({ amount: "10000000", fee: "50000", netAmount: "9950000", status: "completed" });
    expect(done.processTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.processedAt).toEqual(expect.any(Number));
    gas.firstSweep = await gasOf(done.processTxHash);
    const completedHook = await waitFor(async () => hooks(A, done.depositId, "deposit.completed")[0], {
      ...WAIT,
      what: "deposit.completed",
    });
    expect(completedHook.data).toMatchObject({
      status: "completed",
      fee: "50000",
      netAmount: "9950000",
      processTxHash: done.processTxHash,
    });
    // One deposit.failed for the whole failure episode, however many retries it took.
    expect(hooks(A, failed.depositId, "deposit.failed")).toHaveLength(1);
    expect(await h().balanceOf("USDT", alice)).toBe(0n);
  });

  it("a deposit at or below 0.001 tokens waits; the next deposit's sweep carries it", async () => {
    const small = await h().pay("USDC", alice, 1000n); // exactly 0.001 USDC: not above the minimum
    const held = await depositOf(A, small.transactionHash, (d) => d.hold === "below_minimum", "the small deposit");
    expect(held).toMatchObject({ status: "detected", amount: "1000", fee: "0", netAmount: "1000", tokenSymbol: "USDC" });
    for (let i = 0; i < 3; i++) await runner.runOnce("vault-sweeper");
    expect((await depositOf(A, small.transactionHash, () => true, "the small deposit")).status).toBe("detected");
    expect(await h().balanceOf("USDC", alice)).toBe(1000n);

    const big = await h().pay("USDC", alice, 5n * USDT);
    const bigDone = await depositOf(A, big.transactionHash, (d) => d.status === "completed", "the USDC sweep");
    const smallDone = await depositOf(A, small.transactionHash, (d) => d.status === "completed", "the carried deposit");
    expect(bigDone).toMatchObject({ amount: "5000000", fee: "25000", netAmount: "4975000" });
    expect(smallDone).toMatchObject({
      amount: "1000",
      fee: "5",
      netAmount: "995",
      hold: "below_minimum",
      processTxHash: bigDone.processTxHash,
    });
    await waitFor(async () => hooks(A, smallDone.depositId, "deposit.completed").length === 1, {
      ...WAIT,
      what: "the carried deposit's webhook",
    });
    expect(await h().balanceOf("USDC", alice)).toBe(0n);
  });

  it("a later deposit sweeps the deployed wallet; a second user's first deposit deploys its own", async () => {
    const later = await h().pay("USDT", alice, 3n * USDT);
    const d = await depositOf(A, later.transactionHash, (x) => x.status === "completed", "alice's later USDT deposit");
    expect(d).toMatchObject({ fee: "15000", netAmount: "2985000" });
    gas.laterSweep = await gasOf(d.processTxHash);

    const first = await h().pay("USDT", bob, 7n * USDT);
    const b = await depositOf(A, first.transactionHash, (x) => x.status === "completed", "bob's first deposit");
    expect(b).toMatchObject({ externalUserId: "bob", fee: "35000", netAmount: "6965000", depositAddress: bob });
    gas.bobFirstSweep = await gasOf(b.processTxHash);
    console.log(
      `[vault gas] first deposit of a user (deployAndSweep, deploys the wallet): ${gas.firstSweep} (bob: ${gas.bobFirstSweep}); ` +
        `later deposit (sweep of the deployed wallet): ${gas.laterSweep}`,
    );
    expect(gas.laterSweep).toBeLessThan(gas.firstSweep!);
  });

  it("a sweeper that dies before or after broadcasting: the stored bytes are sent once, nothing is swept twice", async () => {
    const carol = (await newUser(A, "carol")).body.data.depositAddress as Address;
    for (const at of ["before", "after"] as const) {
      crashAt = at;
      const tx = await h().pay("USDT", carol, USDT);
      const done = await depositOf(A, tx.transactionHash, (d) => d.status === "completed", `carol's deposit (crash ${at} broadcast)`);
      expect(crashAt).toBeNull(); // the crash did happen
      expect(done).toMatchObject({ fee: "5000", netAmount: "995000" });
      const { rows } = await svc.deps.db.pool.query(`SELECT status, tx_hash FROM vault_sweeps WHERE $1 = ANY(deposit_ids)`, [
        done.depositId,
      ]);
      expect(rows).toEqual([{ status: "completed", tx_hash: done.processTxHash }]);
      // Its status changes, each with its audit row (modules/vault/transition.ts); sent, whether or not it crashed first.
      const { rows: trail } = await svc.deps.db.pool.query(
        `SELECT e.from_status, e.to_status FROM vault_sweep_events e JOIN vault_sweeps s ON s.id = e.sweep_id WHERE s.tx_hash = $1 ORDER BY e.id`,
        [done.processTxHash],
      );
      expect(trail.map((r) => `${r.from_status}->${r.to_status}`)).toEqual(["signed->sent", "sent->mined", "mined->completed"]);
    }
    expect(await h().balanceOf("USDT", carol)).toBe(0n);
    expect(processorErrors.filter((m) => m.includes("simulated crash"))).toHaveLength(2);
  });

  it("a token the vault does not accept is recorded, not swept, and recovered on request at the vault's fee", async () => {
    const payer = await h().newPayer();
    const w = h().walletOf(payer);
    const deployed = await h().wait(
      await w.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Other", "OTHR", 18] }),
    );
    const other = getAddress(deployed.contractAddress!);
    await h().wait(
      await w.writeContract({ address: other, abi: testTokenAbi, functionName: "mint", args: [payer.address, 2n * 10n ** 18n] }),
    );
    const sent = await h().wait(
      await w.writeContract({ address: other, abi: testTokenAbi, functionName: "transfer", args: [bob, 2n * 10n ** 18n] }),
    );
    const held = await depositOf(A, sent.transactionHash, (x) => x.hold === "token_not_enabled", "the foreign-token deposit");
    expect(held).toMatchObject({ status: "detected", tokenSymbol: "OTHR", tokenAddress: other, amount: "2000000000000000000", fee: "0" });
    for (let i = 0; i < 3; i++) await runner.runOnce("vault-sweeper");
    expect(await balanceOf(other, bob)).toBe(2n * 10n ** 18n);

    const notYours = await svc.http("POST", `/vault/v1/deposits/${held.depositId}/recover`, { apiKey: B.apiKey });
    expect({ status: notYours.status, body: notYours.body }).toEqual({ status: 404, body: { success: false, error: "Deposit not found" } });
    // A token outside the registry is swept at its merchant's cost, from the Gas Tank (docs/vault.md, "Custom tokens").
    const { rows: owner } = await svc.deps.db.pool.query(`SELECT merchant_id FROM vault_deposits WHERE id = $1`, [held.depositId]);
    const merchantId = owner[0].merchant_id as string;
    await svc.deps.db.pool.query(
      `INSERT INTO ledger_entries (merchant_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 1000000, $2)`,
      [merchantId, `test-credit:${held.depositId}`],
    );
    const asked = await svc.http("POST", `/vault/v1/deposits/${held.depositId}/recover`, { apiKey: A.apiKey });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    const done = await depositOf(A, sent.transactionHash, (x) => x.status === "completed", "the recovery");
    // Removing a token (so deposits are held) is no way around the fee: a recovery pays the vault's 0.5% too.
    expect(done).toMatchObject({ fee: "10000000000000000", netAmount: "1990000000000000000" });
    expect(await balanceOf(other, A.wallet)).toBe(1_990_000_000_000_000_000n);
    expect(await balanceOf(other, feeTo)).toBe(10_000_000_000_000_000n);
    expect(await balanceOf(other, bob)).toBe(0n);
    const { rows: charged } = await svc.deps.db.pool.query(
      `SELECT kind, amount_micros::text AS micros FROM ledger_entries WHERE merchant_id = $1 AND kind <> 'adjustment'`,
      [merchantId],
    );
    expect(charged).toHaveLength(1);
    expect(charged[0].kind).toBe("vault_sweep_fee");
    expect(BigInt(charged[0].micros)).toBeLessThanOrEqual(-100_000n); // the processing fee, plus the cap's gas where priced
    const again = await svc.http("POST", `/vault/v1/deposits/${held.depositId}/recover`, { apiKey: A.apiKey });
    expect({ status: again.status, body: again.body }).toEqual({
      status: 409,
      body: { success: false, error: "Deposit already processed" },
    });
  });

  it("a recorded deposit whose transfer vanished (re-org) is dropped: not listed, counted or swept", async () => {
    const { rows: users } = await svc.deps.db.pool.query(`SELECT id, vault_id, merchant_id, salt FROM vault_users WHERE address = $1`, [
      bob.toLowerCase(),
    ]);
    const u = users[0]!;
    // What a rolled-back transfer leaves behind: a deposit whose transfer id the indexer no longer has, in a block
    // above the finalized one (the only ones Ponder rolls back).
    const block = (await svc.deps.clients.get(CHAIN)!.getBlockNumber()) + 1n;
    const transferId = `${CHAIN}:0x${"ab".repeat(32)}:7`;
    const { rows } = await svc.deps.db.pool.query(
      `INSERT INTO vault_deposits (vault_id, merchant_id, vault_user_id, chain_id, address, payout, token_address, token_symbol, token_decimals,
         amount, fee, net_amount, hold, transfer_id, deposit_tx_hash, block_number, log_index)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'USDT', 6, 1000, 0, 1000, 'below_minimum', $8, $9, $10, 7) RETURNING id`,
      [
        u.vault_id,
        u.merchant_id,
        u.id,
        CHAIN,
        bob.toLowerCase(),
        A.wallet.toLowerCase(),
        tokenOf("USDT").toLowerCase(),
        transferId,
        `0x${"ab".repeat(32)}`,
        block.toString(),
      ],
    );
    const id = rows[0].id;
    await waitFor(
      async () => (await svc.deps.db.pool.query(`SELECT status FROM vault_deposits WHERE id = $1`, [id])).rows[0].status === "dropped",
      { ...WAIT, what: "the phantom deposit to be dropped" },
    );
    const { rows: after } = await svc.deps.db.pool.query(`SELECT transfer_id, sweep_id FROM vault_deposits WHERE id = $1`, [id]);
    expect(after).toEqual([{ transfer_id: `${transferId}#dropped:${id}`, sweep_id: null }]); // the id is free for the transfer re-mined
    expect((await listDeposits(A, "?limit=100")).deposits.some((d) => d.depositId === id)).toBe(false);
    const { rows: events } = await svc.deps.db.pool.query(`SELECT from_status, to_status FROM vault_deposit_events WHERE deposit_id = $1`, [
      id,
    ]);
    expect(events).toEqual([{ from_status: "detected", to_status: "dropped" }]);
  });

  it("tokens that reached an address before it was handed out are recorded from its balance and swept with the next deposit", async () => {
    const C = await business("Vault Shop C", "/hooks/c");
    const dave = computeWalletAddress({ factory: chain().factory!, salt: vaultSalt("dave", C.wallet), payout: C.wallet });
    const early = await h().pay("USDT", dave, 3n * USDT);
    // Indexed while nobody watched the address: the indexer skipped it.
    await waitFor(
      async () => {
        const p = (await indexerProgress(svc.deps.db))?.find((x) => x.chainId === CHAIN);
        return p && BigInt(p.indexedBlock) >= early.blockNumber;
      },
      { ...WAIT, what: "the early transfer's block indexed" },
    );
    expect((await newUser(C, "dave")).body.data.depositAddress).toBe(dave);
    const tx = await h().pay("USDT", dave, 2n * USDT);
    const done = await depositOf(C, tx.transactionHash, (x) => x.status === "completed", "dave's deposit");
    expect(done).toMatchObject({ amount: "2000000", fee: "5000", netAmount: "1995000" });
    const { deposits, total } = await listDeposits(C);
    expect(total).toBe(2);
    const excess = deposits.find((d) => d.depositId !== done.depositId);
    expect(excess).toMatchObject({
      externalUserId: "dave",
      amount: "3000000",
      fee: "7500",
      netAmount: "2992500",
      status: "completed",
      depositTxHash: null,
      processTxHash: done.processTxHash,
      hold: null,
    });
    expect(await h().balanceOf("USDT", dave)).toBe(0n);
    expect(await h().balanceOf("USDT", C.wallet)).toBe(1_995_000n + 2_992_500n);
    const { rows } = await svc.deps.db.pool.query(`SELECT error FROM vault_sweeps WHERE tx_hash = $1`, [done.processTxHash]);
    expect(rows).toEqual([{ error: null }]); // nothing swept unexplained
  });

  it("a wallet change: the old address still pays the old wallet, a new POST gives a new address", async () => {
    const oldWallet = A.wallet;
    const newWallet = privateKeyToAccount(generatePrivateKey()).address;
    const patched = await svc.http("PATCH", "/vault/v1/config", { apiKey: A.apiKey, body: { walletAddress: newWallet } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    A.wallet = newWallet;
    const fresh = await newUser(A, "alice");
    expect(fresh.status).toBe(201);
    expect(fresh.body.data.isNew).toBe(true);
    expect(fresh.body.data.depositAddress).toBe(
      computeWalletAddress({ factory: chain().factory!, salt: vaultSalt("alice", newWallet), payout: newWallet }),
    );
    expect(fresh.body.data.depositAddress).not.toBe(alice);

    const toOld = await h().pay("USDT", alice, 2n * USDT);
    const toNew = await h().pay("USDT", fresh.body.data.depositAddress, 4n * USDT);
    const oldDone = await depositOf(A, toOld.transactionHash, (x) => x.status === "completed", "the deposit to the old address");
    const newDone = await depositOf(A, toNew.transactionHash, (x) => x.status === "completed", "the deposit to the new address");
    expect(oldDone).toMatchObject({ externalUserId: "alice", depositAddress: alice, fee: "10000", netAmount: "1990000" });
    expect(newDone).toMatchObject({
      externalUserId: "alice",
      depositAddress: fresh.body.data.depositAddress,
      fee: "20000",
      netAmount: "3980000",
    });
    expect(await h().balanceOf("USDT", newWallet)).toBe(3_980_000n);
    // The old wallet got every USDT sweep from the addresses made for it: 9.95 + 2.985 + 6.965 + 2 x 0.995 + 1.99.
    expect(await h().balanceOf("USDT", oldWallet)).toBe(9_950_000n + 2_985_000n + 6_965_000n + 2n * 995_000n + 1_990_000n);
    A.wallet = oldWallet; // the next test sums per payout from the deposits themselves
  });

  it("balances match netAmount and fee to the smallest unit; user totals; listing", async () => {
    const { deposits, total } = await listDeposits(A, "?limit=100");
    // alice: 10 USDT, 0.001 USDC, 5 USDC, 3 USDT, 2 USDT (old address), 4 USDT; bob: 7 USDT, 2 OTHR; carol: 2 x 1 USDT
    expect(total).toBe(10);
    expect(deposits.every((d) => d.status === "completed")).toBe(true);
    const sum = (f: (d: any) => boolean, k: "fee" | "netAmount") => deposits.filter(f).reduce((a, d) => a + BigInt(d[k]), 0n);
    for (const symbol of ["USDT", "USDC"]) {
      const token = tokenOf(symbol);
      expect(await h().balanceOf(symbol, feeTo)).toBe(sum((d) => d.tokenAddress === token, "fee"));
      const payouts = await svc.deps.db.pool.query<{ payout: string }>(
        `SELECT DISTINCT payout FROM vault_deposits WHERE token_address = $1 AND vault_id = (SELECT id FROM vault_configs WHERE public_id = $2)`,
        [token.toLowerCase(), A.publicId],
      );
      for (const { payout } of payouts.rows) {
        const addrs = (await svc.deps.db.pool.query(`SELECT address FROM vault_users WHERE business_wallet = $1`, [payout])).rows.map((r) =>
          getAddress(r.address),
        );
        expect(await h().balanceOf(symbol, getAddress(payout))).toBe(
          sum((d) => d.tokenAddress === token && addrs.includes(d.depositAddress), "netAmount"),
        );
      }
    }
    // The fee recipient holds exactly the fees: 0.5% of every accepted deposit (floor, per deposit).
    expect(await h().balanceOf("USDT", feeTo)).toBe(
      fee50(10n * USDT) + fee50(3n * USDT) + fee50(7n * USDT) + 2n * fee50(USDT) + fee50(2n * USDT) + fee50(4n * USDT),
    );
    expect(await h().balanceOf("USDC", feeTo)).toBe(fee50(5n * USDT) + fee50(1000n));

    const user = await svc.http("GET", `/vault/v1/users?externalUserId=alice&tokenAddress=${tokenOf("USDT")}`, { apiKey: A.apiKey });
    expect(user.body.data).toMatchObject({ externalUserId: "alice", tokenSymbol: "USDT", totalDeposited: "19000000", depositCount: 4 });
    expect(user.body.data.depositAddress).not.toBe(alice); // the latest POST (after the wallet change)
    expect(user.body.data.lastDepositAt).toEqual(expect.any(Number));
    const usdc = await svc.http("GET", `/vault/v1/users?externalUserId=alice&tokenAddress=${tokenOf("USDC")}`, { apiKey: A.apiKey });
    expect(usdc.body.data).toMatchObject({ tokenSymbol: "USDC", totalDeposited: "5001000", depositCount: 2 });

    const page = await listDeposits(A, "?limit=2&externalUserId=bob");
    expect(page.total).toBe(2);
    expect(page.deposits).toHaveLength(2);
    expect(Object.keys(page.deposits[0]).sort()).toEqual(
      [
        "depositId",
        "externalUserId",
        "amount",
        "fee",
        "netAmount",
        "chainId",
        "tokenSymbol",
        "status",
        "depositTxHash",
        "processTxHash",
        "createdAt",
        "processedAt",
        "tokenAddress",
        "depositAddress",
        "hold",
      ].sort(),
    );
    expect((await listDeposits(A, "?status=processing")).total).toBe(0);
    for (const [q, error] of [
      ["?limit=0", "limit must be an integer between 1 and 100"],
      ["?limit=101", "limit must be an integer between 1 and 100"],
      ["?limit=abc", "limit must be an integer between 1 and 100"],
      ["?status=done", "status must be one of: detected, processing, completed, failed"],
      [`?externalUserId=${"x".repeat(101)}`, "externalUserId must be at most 100 characters"],
    ] as const) {
      const res = await svc.http("GET", `/vault/v1/deposits${q}`, { apiKey: A.apiKey });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { success: false, error } });
    }
    const unauth = await svc.http("GET", "/vault/v1/deposits");
    expect({ status: unauth.status, body: unauth.body }).toEqual({ status: 401, body: { success: false, error: "Unauthorized" } });
  });

  it("a second business sees none of the first one's users or deposits (REST and GraphQL)", async () => {
    expect(await listDeposits(B)).toEqual({ deposits: [], total: 0 });
    expect(await listDeposits(B, "?externalUserId=alice")).toEqual({ deposits: [], total: 0 });
    const user = await svc.http("GET", "/vault/v1/users?externalUserId=alice", { apiKey: B.apiKey });
    expect({ status: user.status, body: user.body }).toEqual({ status: 404, body: { success: false, error: "User not found" } });
    // B's own "alice" is another address (another wallet), with nothing deposited.
    const mine = await newUser(B, "alice");
    expect(mine.status).toBe(201);
    expect(mine.body.data.depositAddress).not.toBe(alice);

    const gql = async (apiKey: string) =>
      (
        await svc.http("POST", "/graphql", {
          apiKey,
          body: {
            query: `{ vaultUser(externalUserId: "bob") { depositAddress totalDeposited depositCount }
                      vaultDeposits(limit: 5, externalUserId: "bob") { total deposits { depositId status fee netAmount } } }`,
          },
        })
      ).body;
    const a = await gql(A.apiKey);
    expect(a.data.vaultUser).toEqual({ depositAddress: bob, totalDeposited: "7000000", depositCount: 1 }); // USDT only
    expect(a.data.vaultDeposits.total).toBe(2);
    const b = await gql(B.apiKey);
    expect(b.data.vaultUser).toBeNull();
    expect(b.errors[0]).toMatchObject({ message: "User not found", extensions: { http: 404 } });
    expect(b.data.vaultDeposits).toEqual({ total: 0, deposits: [] });
  });

  it("every webhook delivered was signed and shaped as the spec says; no processor error", async () => {
    // 10 deposit.completed + 1 deposit.failed; the last ones may still be on their way.
    const ours = await waitFor(
      async () => {
        const got = receiver.received.filter((r) => r.path === A.path);
        return got.length >= 11 && got;
      },
      { ...WAIT, what: "every webhook" },
    );
    expect(ours).toHaveLength(11);
    for (const r of ours) {
      expect(r.headers["x-webhook-signature"]).toBe(
        createHash("sha256")
          .update(r.rawBody + A.secret)
          .digest("hex"),
      );
      const body = JSON.parse(r.rawBody);
      expect(Object.keys(body).sort()).toEqual(["data", "event", "timestamp"]);
      expect(Object.keys(body.data).sort()).toEqual(WEBHOOK_DATA_KEYS);
    }
    expect(receiver.received.filter((r) => r.path === B.path)).toEqual([]);
    expect(processorErrors.filter((m) => /vault/i.test(m) && !m.includes("simulated crash"))).toEqual([]);
  });
});

async function balanceOf(token: Address, who: Address): Promise<bigint> {
  return (await svc.deps.clients
    .get(CHAIN)!
    .readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [who] })) as bigint;
}
