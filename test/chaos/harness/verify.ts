import type pg from "pg";
import { getAddress, type Address, type PublicClient } from "viem";
import { walletFactoryAbi } from "../../../abis/WalletFactory.js";
import { testTokenAbi } from "../../../abis/TestToken.js";
import type { ActiveChain } from "../../../chains/runtime.js";
import type { ApiCall } from "./api-client.js";
import { tokenAddress, type Merchant, type PaymentRecord } from "./driver.js";
import type { TokenName } from "./scenario.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

export type Verification = {
  failures: string[];
  numbers: {
    completed: number;
    partialPending: number;
    orphans: number;
    sweeps: number;
    reorgs: number;
    outboxRows: number;
    webhookRequests: number;
    webhooksDelivered: number;
    duplicatesDelivered: number;
    gasTankFeesMicros: bigint;
  };
};

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const isPaid = (r: PaymentRecord) => r.dueUnits !== undefined && r.sentUnits >= r.dueUnits;
const isPartial = (r: PaymentRecord) => r.dueUnits !== undefined && r.sentUnits > 0n && r.sentUnits < r.dueUnits;

/** What the merchant's payout must receive from a settled payment: all of it in Gas Tank mode, else minus the fees. */
export function expectedNet(r: PaymentRecord): bigint {
  return r.plan.mode === "gasTank" ? r.sentUnits : r.sentUnits - r.fees!.total;
}
const expectedSweepFee = (r: PaymentRecord) => (r.plan.mode === "gasTank" ? 0n : r.fees!.total);

/**
 * The Gas Tank fee of a Gas Tank mode payment (USDT micros) from the spec's rules: platform fee at its
 * USD value + 0.10 USD + the gas fee's USD value, rounded up. The gas fee's USD value is known only
 * through its token units (rounded up), so a range comes out; for 6-decimal stablecoins it is exact.
 */
export function gasTankFeeRange(r: PaymentRecord): [bigint, bigint] {
  const f = r.fees!;
  const price = r.plan.token === "ETH" ? 3000n : 1n;
  const scale = 10n ** BigInt(r.plan.decimals);
  const usd18 = (units: bigint) => ceilDiv(units * price * 10n ** 18n, scale);
  const plat = usd18(f.platform);
  // gas fee units g = ceil(gasUsd18 * scale / (price * 1e18)) => gasUsd18 in ((g-1) * price * 1e18 / scale, g * price * 1e18 / scale]
  const gasHi = (f.gas * price * 10n ** 18n) / scale;
  const gasLo = f.gas === 0n ? 0n : ((f.gas - 1n) * price * 10n ** 18n) / scale + 1n;
  const micros = (gas: bigint) => ceilDiv(plat + 10n ** 17n + gas, 10n ** 12n);
  return [micros(gasLo), micros(gasHi)];
}

export async function verify(o: {
  pool: pg.Pool;
  pub: PublicClient;
  chain: ActiveChain;
  merchants: Merchant[];
  records: PaymentRecord[];
  receiver: WebhookReceiver;
  ambiguousCreates: number;
  gasTankBalances: Map<string, string>;
  api: ApiCall;
  viewsSchema: string;
  /** The native coin's price the service charges mined gas at (modules/settlement/gas-true-up.ts); null: none. */
  nativePriceUsd18: bigint | null;
}): Promise<Verification> {
  const failures: string[] = [];
  const fail = (m: string) => failures.push(m);
  const merchantIds = o.merchants.map((m) => m.id);
  const known = new Map(o.records.filter((r) => r.paymentId).map((r) => [r.paymentId!, r]));

  for (const r of o.records) {
    if (r.error) fail(`payment ${r.plan.orderId}: driver error: ${r.error}`);
    for (const e of r.feeRuleErrors) fail(`payment ${r.plan.orderId}: fee rule: ${e}`);
  }

  const { rows: payments } = await o.pool.query(
    `SELECT id, merchant_id, order_id, status, received_units, gas_tank_fee_micros, gas_fee_usd18, recipient_address FROM payments WHERE merchant_id = ANY($1)`,
    [merchantIds],
  );
  const row = new Map(payments.map((p) => [p.id as string, p]));
  // Orphans: creations whose answer was lost, found by listing every merchant's payments through the API
  // (walking the pages); each must be an untouched pending payment of ours.
  const listed = new Map<string, any>();
  for (const m of o.merchants) {
    let cursor: string | null = null;
    do {
      const q: string = `/v1/payments?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await o.api("GET", q, { apiKey: m.apiKey });
      if (res.status !== 200) throw new Error(`GET ${q}: ${res.status} ${JSON.stringify(res.body)}`);
      for (const p of res.body.data) listed.set(p.paymentId, p);
      cursor = res.body.hasMore ? res.body.nextCursor : null;
    } while (cursor);
  }
  if (listed.size !== payments.length) fail(`the API lists ${listed.size} payments, the database holds ${payments.length}`);
  for (const p of payments)
    if (listed.get(p.id)?.status !== p.status) fail(`payment ${p.id}: listed ${listed.get(p.id)?.status}, stored ${p.status}`);
  const orderIds = new Set(o.records.map((r) => r.plan.orderId));
  const orphans = [...listed.values()]
    .filter((p) => !known.has(p.paymentId))
    .map((p) => row.get(p.paymentId) ?? { id: p.paymentId, order_id: p.orderId, status: p.status, received_units: "?" });
  for (const p of orphans) {
    if (!orderIds.has(p.order_id)) fail(`unknown payment ${p.id} (${p.order_id})`);
    if (p.status !== "pending" || p.received_units !== "0") fail(`orphan payment ${p.id} is ${p.status} with ${p.received_units} received`);
  }
  if (orphans.length > o.ambiguousCreates)
    fail(`${orphans.length} orphan payments but only ${o.ambiguousCreates} creations went unanswered`);

  const { rows: events } = await o.pool.query(`SELECT payment_id, to_status, reason FROM payment_events WHERE payment_id = ANY($1)`, [
    payments.map((p) => p.id),
  ]);
  const transitions = (id: string, to: string) => events.filter((e) => e.payment_id === id && e.to_status === to).length;
  const reorgs = events.filter((e) => e.to_status === "pending" && String(e.reason ?? "").startsWith("reorg:")).length;
  // The chain never re-orgs in this run: a payment sent back to pending would be the indexer's restart
  // (rows rolled back, re-indexed) taken for a re-org.
  if (reorgs > 0) fail(`${reorgs} payments sent back to pending as re-orged, with no re-org on the chain`);

  const { rows: outbox } = await o.pool.query(
    `SELECT id, merchant_id, payment_id, event, status FROM webhook_deliveries WHERE merchant_id = ANY($1) AND kind = 'payment'`,
    [merchantIds],
  );
  const { rows: settlements } = await o.pool.query(`SELECT payment_ids, status, tx_hash FROM settlements`);

  // The chain's own record of sweeps, read from Anvil (not from the indexer).
  const logs = await o.pub.getContractEvents({
    address: o.chain.factory!,
    abi: walletFactoryAbi,
    eventName: "Swept",
    fromBlock: BigInt(o.chain.startBlock),
    toBlock: "latest",
  });
  // And the indexer's view of them: one indexed Swept row per swept wallet as well.
  const { rows: indexed } = await o.pool.query<{ wallet: string; n: number }>(
    `SELECT wallet, count(*)::int AS n FROM "${o.viewsSchema}".sweep WHERE chain_id = $1 GROUP BY wallet`,
    [o.chain.chainId],
  );
  const indexedSweeps = new Map(indexed.map((x) => [getAddress(x.wallet), x.n]));
  const sweepsOf = new Map<string, any[]>();
  for (const l of logs) {
    const w = getAddress((l as any).args.wallet as Address);
    sweepsOf.set(w, [...(sweepsOf.get(w) ?? []), (l as any).args]);
  }

  let completed = 0;
  let partialPending = 0;
  let sweeps = 0;
  const expectedBalance = new Map<string, bigint>(); // `${merchant}:${token}`
  const expectedTankFees = new Map<string, bigint>();
  /** Per payment: the quote, with its gas charged again at the mined sweep's cost. */
  const expectedFee = new Map<string, bigint>();
  for (const r of o.records) {
    if (!r.paymentId) continue;
    const p = row.get(r.paymentId);
    const tag = `payment ${r.plan.orderId} (${r.paymentId}, ${r.plan.token} ${r.plan.mode} ${r.plan.kind})`;
    if (!p) {
      fail(`${tag}: not in the database`);
      continue;
    }
    const swept = sweepsOf.get(getAddress(r.recipient!)) ?? [];
    const covering = settlements.filter((s) => s.payment_ids.includes(r.paymentId) && ["signed", "sent", "mined"].includes(s.status));
    if (isPaid(r)) {
      const m = o.merchants[r.plan.merchant]!;
      if (p.status !== "completed") fail(`${tag}: fully paid but ${p.status}`);
      else completed++;
      if (p.received_units !== r.sentUnits.toString()) fail(`${tag}: received ${p.received_units}, sent ${r.sentUnits}`);
      if (transitions(r.paymentId, "completed") !== 1) fail(`${tag}: ${transitions(r.paymentId, "completed")} transitions to completed`);
      const completedRows = outbox.filter((w) => w.payment_id === r.paymentId && w.event === "payment.completed").length;
      if (completedRows !== 1) fail(`${tag}: ${completedRows} payment.completed outbox rows`);
      if (covering.length !== 1 || covering[0].status !== "mined")
        fail(`${tag}: settlements ${JSON.stringify(covering.map((s) => [s.tx_hash, s.status]))}, want exactly one mined`);
      const indexedN = indexedSweeps.get(getAddress(r.recipient!)) ?? 0;
      if (indexedN !== 1) fail(`${tag}: ${indexedN} indexed Swept rows for its wallet`);
      if (swept.length !== 1) fail(`${tag}: wallet swept ${swept.length} times`);
      else {
        sweeps++;
        const s = swept[0];
        if (s.amount !== expectedNet(r)) fail(`${tag}: swept ${s.amount} to the merchant, expected ${expectedNet(r)}`);
        if (s.fee !== expectedSweepFee(r)) fail(`${tag}: sweep fee ${s.fee}, expected ${expectedSweepFee(r)}`);
        if (getAddress(s.payout) !== getAddress(m.payout)) fail(`${tag}: swept to ${s.payout}, not the payout ${m.payout}`);
      }
      const key = `${m.index}:${r.plan.token}`;
      expectedBalance.set(key, (expectedBalance.get(key) ?? 0n) + expectedNet(r));
      if (r.plan.mode === "gasTank") {
        const quoted = BigInt(p.gas_tank_fee_micros);
        const [lo, hi] = gasTankFeeRange(r);
        if (quoted < lo || quoted > hi) fail(`${tag}: Gas Tank fee ${quoted} micros outside the spec's ${lo}..${hi}`);
        // Its gas charged again at what the mined sweep cost: its share of the chain's receipt, at the native price.
        let fee = quoted;
        if (o.nativePriceUsd18 !== null && covering.length === 1 && covering[0].status === "mined") {
          const receipt = await o.pub.getTransactionReceipt({ hash: covering[0].tx_hash });
          const n = BigInt(covering[0].payment_ids.length);
          const mined = (((receipt.gasUsed + n - 1n) / n) * receipt.effectiveGasPrice * o.nativePriceUsd18 + 10n ** 30n - 1n) / 10n ** 30n;
          fee = quoted - (BigInt(p.gas_fee_usd18) + 10n ** 12n - 1n) / 10n ** 12n + mined;
        }
        expectedFee.set(r.paymentId!, fee);
        expectedTankFees.set(m.id, (expectedTankFees.get(m.id) ?? 0n) + fee);
      }
    } else if (isPartial(r)) {
      if (p.status !== "pending") fail(`${tag}: partial payment is ${p.status}`);
      else partialPending++;
      if (p.received_units !== r.sentUnits.toString()) fail(`${tag}: received ${p.received_units}, sent ${r.sentUnits}`);
      if (swept.length !== 0 || covering.length !== 0)
        fail(`${tag}: partial payment swept (${swept.length}) or settled (${covering.length})`);
      if (transitions(r.paymentId, "completed") !== 0) fail(`${tag}: partial payment went through completed`);
    }
  }

  // Every merchant payout's balance per token: exactly the sum of expected net amounts.
  for (const m of o.merchants)
    for (const t of ["USDC", "USDT", "ETH"] as TokenName[]) {
      const want = expectedBalance.get(`${m.index}:${t}`) ?? 0n;
      const got =
        t === "ETH"
          ? await o.pub.getBalance({ address: m.payout })
          : ((await o.pub.readContract({
              address: tokenAddress(o.chain, t),
              abi: testTokenAbi,
              functionName: "balanceOf",
              args: [m.payout],
            })) as bigint);
      if (got !== want) fail(`${m.name} ${t}: payout holds ${got}, expected ${want} (diff ${got - want})`);
    }

  // Gas Tank ledger: settlement fee debits (net of refunds) are the fees of what was settled, per payment and per merchant.
  const { rows: ledger } = await o.pool.query<{ merchant_id: string; kind: string; amount_micros: string; payment_id: string | null }>(
    `SELECT merchant_id, kind, amount_micros, payment_id FROM ledger_entries WHERE merchant_id = ANY($1)`,
    [merchantIds],
  );
  let gasTankFeesMicros = 0n;
  for (const m of o.merchants) {
    const mine = ledger.filter((l) => l.merchant_id === m.id);
    const deposits = mine.filter((l) => l.kind === "gas_tank_deposit").reduce((s, l) => s + BigInt(l.amount_micros), 0n);
    const fees = -mine.filter((l) => l.kind !== "gas_tank_deposit").reduce((s, l) => s + BigInt(l.amount_micros), 0n);
    gasTankFeesMicros += fees;
    if (deposits !== m.gasTankFunded) fail(`${m.name}: Gas Tank deposits ${deposits}, funded ${m.gasTankFunded}`);
    const want = expectedTankFees.get(m.id) ?? 0n;
    if (fees !== want) fail(`${m.name}: Gas Tank fees net ${fees} micros, settled payments' fees ${want}`);
    const perPayment = new Map<string, bigint>();
    for (const l of mine) if (l.payment_id) perPayment.set(l.payment_id, (perPayment.get(l.payment_id) ?? 0n) - BigInt(l.amount_micros));
    for (const [id, net] of perPayment) {
      const r = known.get(id);
      const settled = r && isPaid(r) && r.plan.mode === "gasTank";
      const want1 = settled ? (expectedFee.get(id) ?? 0n) : 0n;
      if (net !== want1) fail(`${m.name}: payment ${id} costs its Gas Tank ${net} micros, expected ${want1}`);
    }
    const balance = o.gasTankBalances.get(m.id);
    if (m.gasTank) {
      const b = BigInt((balance ?? "x").replace(".", ""));
      if (b !== deposits - fees) fail(`${m.name}: GET /balance ${balance}, ledger says ${deposits - fees} micros`);
    }
  }

  // Webhooks: every outbox row answered 2xx at least once; every subscribed event of the audit trail has its row.
  const got = new Map(o.receiver.deliveries().map((d) => [d.webhookId, d]));
  const outboxIds = new Set(outbox.map((w) => w.id));
  for (const w of outbox) {
    const d = got.get(w.id);
    if (!d || d.delivered === 0) fail(`webhook ${w.id} (${w.event} of ${w.payment_id}, ${w.status}) never delivered`);
    else if (d.event !== w.event || d.paymentId !== w.payment_id) fail(`webhook ${w.id}: received ${d.event} of ${d.paymentId}`);
  }
  for (const d of got.values()) {
    if (!outboxIds.has(d.webhookId)) fail(`receiver got webhook-id ${d.webhookId} (${d.event}) that is in no outbox row`);
    if (d.badSignatures) fail(`webhook ${d.webhookId}: ${d.badSignatures} request(s) with a bad X-Signature`);
  }
  const eventOf: Record<string, string> = {
    completed: "payment.completed",
    awaiting_gas: "payment.awaiting_gas",
    failed: "payment.failed",
    expired: "payment.expired",
    withdrawn: "payment.withdrawn",
  };
  for (const p of payments) {
    const m = o.merchants.find((x) => x.id === p.merchant_id)!;
    for (const [status, event] of Object.entries(eventOf)) {
      const want = m.subscribed.includes(event) ? transitions(p.id, status) : 0;
      const have = outbox.filter((w) => w.payment_id === p.id && w.event === event).length;
      if (have !== want)
        fail(`payment ${p.id}: ${have} ${event} outbox rows for ${want} transitions (subscribed: ${m.subscribed.includes(event)})`);
    }
  }
  const deliveries = [...got.values()];
  return {
    failures,
    numbers: {
      completed,
      partialPending,
      orphans: orphans.length,
      sweeps,
      reorgs,
      outboxRows: outbox.length,
      webhookRequests: deliveries.reduce((s, d) => s + d.requests, 0),
      webhooksDelivered: deliveries.filter((d) => d.delivered > 0).length,
      duplicatesDelivered: deliveries.reduce((s, d) => s + Math.max(0, d.delivered - 1), 0),
      gasTankFeesMicros,
    },
  };
}
