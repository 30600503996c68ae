import { randomBytes } from "node:crypto";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { getAddress, keccak256, parseGwei, toHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { agentPayoutAccount } from "../../../modules/agents/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// A signer's gas runway (modules/settlement/runway.ts, signer-runway.ts) in GET /api/health and GET /metrics. The
// spend is what the database knows: mined settlement and Vault sweep rows inserted here for this file's own settler
// (startTestService gives every test file a key of its own), so setting that key's balance on the shared chains
// (anvil_setBalance) disturbs no other test. No processor runs: nothing else spends or signs for it.
vi.setConfig({ testTimeout: 60_000 });

const CHAIN = 777177; // 1 s blocks in the registry: the window is 3,600 blocks
const OTHER = 137;
const WINDOW = 3_600n;

let svc: TestService;
let settler: Address;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  settler = privateKeyToAccount(svc.deps.config.SETTLER_PRIVATE_KEY as Hex).address;
});
afterAll(() => svc?.stop());

const hash = () => keccak256(randomBytes(32));
const setBalance = (chainId: number, wei: bigint) =>
  svc.deps.clients.get(chainId)!.request({ method: "anvil_setBalance" as any, params: [settler, toHex(wei)] as any });

/** A settlement (or Vault sweep) row of this file's settler, as reconcile leaves it once its receipt is recorded. */
async function sweepRow(
  table: "settlements" | "vault_sweeps",
  row: { nonce: number; status: string; gas: bigint; price: bigint; block: bigint },
) {
  const ids = table === "settlements" ? "payment_ids" : "deposit_ids";
  await svc.deps.db.pool.query(
    `INSERT INTO ${table} (chain_id, signer, nonce, tx_hash, raw_tx, ${ids}, status, gas_used, effective_gas_price, block_number)
     VALUES ($1, $2, $3, $4, '0x', '{}', $5, $6, $7, $8)`,
    [CHAIN, settler.toLowerCase(), row.nonce, hash(), row.status, row.gas.toString(), row.price.toString(), row.block.toString()],
  );
}

async function scrape(): Promise<string> {
  const res = await fetch(`${svc.url.replace(/\/api$/, "")}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}
/** The value of one series as written (`+Inf` stays a string), or undefined when the series is absent. */
function series(text: string, name: string, labels: Record<string, string>): string | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = [...m[2]!.matchAll(/\w+="[^"]*"/g)].map((x) => x[0]);
    if (have.sort().join(",") === want.join(",")) return m[3];
  }
  return undefined;
}

it("health shows each signer's balance and runway from the last hour's mined spend, and degrades under SIGNER_RUNWAY_MIN_BLOCKS or at 0 while transactions wait; /metrics has the same numbers", async () => {
  expect(svc.deps.config.SIGNER_RUNWAY_MIN_BLOCKS).toBe(1000); // the default
  const head = await svc.deps.clients.get(CHAIN)!.getBlockNumber({ cacheTime: 0 });
  const gwei = parseGwei("1");
  // At the window's edge (head − 3,600: on a young test chain that may be below block 0; the arithmetic is the same):
  // older than any head the service reads from now on, so not counted.
  await sweepRow("settlements", { nonce: 0, status: "mined", gas: 100_000n, price: gwei, block: head - WINDOW });
  // In the window: 3 × 120,000 gas at 1 gwei = 0.00036 ETH over 3,600 blocks, 10^11 wei a block. A reverted
  // transaction pays its gas too; a completed Vault sweep is the settler's as well.
  await sweepRow("settlements", { nonce: 1, status: "mined", gas: 120_000n, price: gwei, block: head - 10n });
  await sweepRow("vault_sweeps", { nonce: 2, status: "completed", gas: 120_000n, price: gwei, block: head - 5n });
  await sweepRow("settlements", { nonce: 3, status: "reverted", gas: 120_000n, price: gwei, block: head - 2n });
  // Re-orged out and sent again: its recorded receipt no longer stands, so its gas is not counted.
  await sweepRow("settlements", { nonce: 4, status: "sent", gas: 5_000_000n, price: gwei, block: head - 1n });

  // 1000 ETH (what startTestService gives the settler): 10^21 × 3,600 / 3.6 × 10^14 = 10^10 blocks. Healthy.
  let health = await svc.http("GET", "/health");
  const chainEntry = (body: any, chainId: number) => body.settlement.find((s: any) => s.chainId === chainId);
  const mine = (body: any, chainId: number) => chainEntry(body, chainId).signers.find((s: any) => s.address === settler);
  expect(mine(health.body, CHAIN)).toEqual({
    address: settler,
    roles: expect.arrayContaining(["settler", "vault-sweeper"]),
    balanceWei: (10n ** 21n).toString(),
    spentWei: "360000000000000",
    spendBlocks: 3600,
    runwayBlocks: 10_000_000_000,
    pendingTransactions: 0,
    ok: true,
  });
  expect(mine(health.body, OTHER)).toMatchObject({ spentWei: "0", runwayBlocks: null, ok: true }); // nothing spent there
  expect(health.body.issues.filter((i: string) => i.includes("signer"))).toEqual([]);

  // 0.0000412 ETH: 412 blocks at 10^11 wei a block, under the 1,000 bound. On the other chain: nothing at all while
  // a transaction of this signer waits there (no spend there: the runway alone would say nothing).
  await setBalance(CHAIN, 41_200_000_000_000n);
  await setBalance(OTHER, 0n);
  await svc.deps.db.pool.query(
    `INSERT INTO tx_versions (hash, chain_id, signer, nonce, version, raw_tx, max_fee_per_gas, max_priority_fee_per_gas, signed_block)
     VALUES ($1, $2, $3, 0, 0, '0x', '1', '1', 1)`,
    [hash(), OTHER, settler.toLowerCase()],
  );
  health = await svc.http("GET", "/health");
  expect(health.status).toBe(503);
  expect(health.body.status).toBe("degraded");
  expect(health.body.issues).toEqual(
    expect.arrayContaining([
      `settlement ${CHAIN}: signer ${settler} has gas for 412 blocks at the last hour's spending (bound 1000 blocks)`,
      `settlement ${OTHER}: signer ${settler} has no gas (balance 0) while 1 transaction(s) wait`,
    ]),
  );
  expect(chainEntry(health.body, CHAIN).ok).toBe(false);
  expect(mine(health.body, CHAIN)).toMatchObject({ balanceWei: "41200000000000", runwayBlocks: 412, ok: false });
  expect(mine(health.body, OTHER)).toMatchObject({ balanceWei: "0", runwayBlocks: null, pendingTransactions: 1, ok: false });

  // The answer fits its documented schema (GET /api/openapi.json, HealthResponse).
  const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { components: unknown; paths: unknown };
  const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
  ajv.addFormat("uri", (s: string) => URL.canParse(s));
  ajv.addSchema({ $id: "https://openapi.test/doc.json", components: doc.components, paths: doc.paths });
  const documented = ajv.getSchema("https://openapi.test/doc.json#/paths/~1health/get/responses/503/content/application~1json/schema");
  expect(documented(health.body), JSON.stringify(documented.errors)).toBe(true);

  // The gauges: balance in wei and runway in blocks per chain and signer; no spend is +Inf, not a missing series.
  const text = await scrape();
  expect(series(text, "chainpay_signer_balance_wei", { chain_id: String(CHAIN), signer: settler })).toBe("41200000000000");
  expect(series(text, "chainpay_signer_runway_blocks", { chain_id: String(CHAIN), signer: settler })).toBe("412");
  expect(series(text, "chainpay_signer_balance_wei", { chain_id: String(OTHER), signer: settler })).toBe("0");
  expect(series(text, "chainpay_signer_runway_blocks", { chain_id: String(OTHER), signer: settler })).toBe("+Inf");
  expect(Number(series(text, "chainpay_settler_balance", { chain_id: String(CHAIN) }))).toBeCloseTo(0.0000412, 12);
  expect(series(text, "chainpay_metrics_source_up", { source: "settler" })).toBe("1");
  // The agent payout wallet of the test stack (its own key): its balance is shown; its withdrawals record no gas, so
  // its runway is unknown and left out.
  const payout = getAddress(agentPayoutAccount(svc.deps.config).address);
  expect(payout).not.toBe(settler); // AGENT_PAYOUT_PRIVATE_KEY of local/accounts.ts
  expect(series(text, "chainpay_signer_balance_wei", { chain_id: String(CHAIN), signer: payout })).toMatch(/^\d/);
  expect(series(text, "chainpay_signer_runway_blocks", { chain_id: String(CHAIN), signer: payout })).toBeUndefined();
  expect(chainEntry(health.body, CHAIN).signers.find((s: any) => s.address === payout)).toMatchObject({
    roles: ["agent-payouts"],
    spentWei: null,
    runwayBlocks: null,
    ok: true,
  });
});
