import { parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { testTokenAbi } from "../../../abis/TestToken.js";
import type { ActiveChain } from "../../../chains/runtime.js";
import { LOCAL_PRICES } from "../../../local/deploy.js";
import { createApiKey, createMerchant } from "../../../modules/merchants/index.js";
import type { Db } from "../../../db/client.js";
import { PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { chainHelpers } from "../../helpers/chain.js";
import type { ApiCall } from "./api-client.js";
import type { MerchantPlan, PaymentPlan, TokenName } from "./scenario.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

export type Merchant = MerchantPlan & { id: string; apiKey: string; hookPath: string; subscribed: string[]; gasTankFunded: bigint };

export type Fees = { platform: bigint; gas: bigint; processing: bigint; total: bigint; feePercentage: number };

export type PaymentRecord = {
  plan: PaymentPlan;
  paymentId?: string;
  recipient?: Address;
  amountUnits: bigint;
  fees?: Fees;
  /** What the payer must send: the amount, plus the fees in payer-covers-fee mode. */
  dueUnits?: bigint;
  /** What the payer sent (the driver's own number, never read back from the service). */
  sentUnits: bigint;
  payTx?: Hex;
  error?: string;
  /** Creation-time fee rule violations (checked against the spec's rules, not the service's code). */
  feeRuleErrors: string[];
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
/** Oracle prices the local chain starts with (local/deploy.ts): stablecoins 1 USD, ETH 3000 USD. */
const PRICE18: Record<TokenName, bigint> = {
  USDC: parseUnits(LOCAL_PRICES.USDC!, 18),
  USDT: parseUnits(LOCAL_PRICES.USDT!, 18),
  ETH: parseUnits(LOCAL_PRICES.ETH!, 18),
};
/** Spec: processing fee 0.10 USD, converted at the token's price and rounded up to the smallest unit. */
export const processingFeeUnits = (t: TokenName, decimals: number) => ceilDiv(10n ** 17n * 10n ** BigInt(decimals), PRICE18[t]);

export function tokenAddress(chain: ActiveChain, t: TokenName): Address {
  return t === "ETH" ? zeroAddress : chain.tokens.find((x) => x.symbol === t)!.address;
}

/** Merchants made the way the operator CLI makes them; webhooks and Gas Tanks through the API. */
export async function setupMerchants(o: {
  db: Db;
  api: ApiCall;
  chain: ActiveChain;
  plans: MerchantPlan[];
  receiver: WebhookReceiver;
  gasTankUsdt: string;
  log: (m: string) => void;
}): Promise<Merchant[]> {
  const h = chainHelpers(o.chain);
  const merchants: Merchant[] = [];
  for (const plan of o.plans) {
    const m = await createMerchant(o.db, { name: plan.name, type: plan.type });
    const { key } = await createApiKey(o.db, m.id);
    const hookPath = `/hooks/m${plan.index}`;
    const subscribed = plan.events === "all" ? [...PAYMENT_EVENTS] : ["payment.completed", "payment.withdrawn"];
    const res = await o.api("PUT", "/v1/webhooks", {
      apiKey: key,
      body: plan.events === "all" ? { url: o.receiver.urlFor(hookPath), events: subscribed } : { url: o.receiver.urlFor(hookPath) },
    });
    if (res.status !== 201) throw new Error(`PUT /v1/webhooks: ${res.status} ${JSON.stringify(res.body)}`);
    o.receiver.registerSecret(hookPath, res.body.data.secret);
    merchants.push({ ...plan, id: m.id, apiKey: key, hookPath, subscribed, gasTankFunded: 0n });
  }
  // Gas Tanks funded with the USDT-like token through each merchant's deposit address, credited before the window.
  const funded = merchants.filter((m) => m.gasTank);
  await Promise.all(
    funded.map(async (m) => {
      const bal = await o.api("GET", "/balance", { apiKey: m.apiKey });
      const dep = bal.body.depositAddresses.find((d: { chainId: number }) => d.chainId === o.chain.chainId);
      m.gasTankFunded = parseUnits(o.gasTankUsdt, 6);
      await h.pay("USDT", dep.address, m.gasTankFunded);
    }),
  );
  for (const m of funded) {
    const want = `${o.gasTankUsdt}.000000`;
    for (let i = 0; ; i++) {
      const b = await o.api("GET", "/balance", { apiKey: m.apiKey });
      if (b.body.balance === want) break;
      if (i > 600) throw new Error(`Gas Tank of ${m.name} not credited: ${b.body.balance}`);
      await sleep(200);
    }
  }
  o.log(`merchants: ${merchants.length} (${funded.length} with a Gas Tank of ${o.gasTankUsdt} USDT)`);
  return merchants;
}

/** Payers with their own accounts (parallel workers never share a nonce), gas and tokens. */
export async function fundPayers(chain: ActiveChain, n: number): Promise<PrivateKeyAccount[]> {
  const h = chainHelpers(chain);
  const payers = Array.from({ length: n }, () => privateKeyToAccount(generatePrivateKey()));
  await Promise.all(
    payers.map(async (p) => {
      await h.pub.request({ method: "anvil_setBalance" as any, params: [p.address, `0x${parseEther("1000000").toString(16)}`] as any });
      await h.mint("USDC", p.address, 10n ** 15n, p);
      await h.mint("USDT", p.address, 10n ** 15n, p);
    }),
  );
  return payers;
}

const units = (s: string, d: number) => parseUnits(s, d);

/** Checks a created payment's fees against the spec's rules; returns the fees and what is due. */
function checkFees(m: Merchant, plan: PaymentPlan, p: any, errors: string[]): { fees: Fees; due: bigint } {
  const d = plan.decimals;
  const fees: Fees = {
    platform: units(p.fees.platformFee, d),
    gas: units(p.fees.gasFee, d),
    processing: units(p.fees.processingFee, d),
    total: units(p.fees.totalFee, d),
    feePercentage: p.fees.feePercentage,
  };
  const amount = units(plan.amount, d);
  const allowed = m.type === "member" ? [0] : [0, 1];
  if (!allowed.includes(fees.feePercentage)) errors.push(`feePercentage ${fees.feePercentage} for a ${m.type} merchant`);
  const bps = BigInt(Math.round(fees.feePercentage * 100));
  if (fees.platform !== ceilDiv(amount * bps, 10_000n)) errors.push(`platformFee ${fees.platform} != ceil(${amount} * ${bps} / 10000)`);
  const proc = processingFeeUnits(plan.token, d);
  if (fees.processing !== proc) errors.push(`processingFee ${fees.processing} != ${proc}`);
  if (fees.gas < 0n) errors.push(`gasFee ${fees.gas} < 0`);
  if (fees.total !== fees.platform + fees.gas + fees.processing) errors.push(`totalFee ${fees.total} != sum of components`);
  if (p.gasless !== (plan.mode === "gasless")) errors.push(`gasless ${p.gasless} for mode ${plan.mode}`);
  if (p.payerCoversFee !== (plan.mode === "payerCoversFee")) errors.push(`payerCoversFee ${p.payerCoversFee} for mode ${plan.mode}`);
  if (p.token.decimals !== d) errors.push(`decimals ${p.token.decimals} != ${d}`);
  if (p.amount !== plan.amount) errors.push(`amount ${p.amount} != ${plan.amount}`);
  return { fees, due: plan.mode === "payerCoversFee" ? amount + fees.total : amount };
}

/**
 * Creates and pays the planned payments on `workers` parallel payers, each at its planned moment after
 * `t0`: create over the API (retried through outages), read it back by orderId, pay on Anvil directly.
 */
export async function runPayments(o: {
  api: ApiCall;
  chain: ActiveChain;
  merchants: Merchant[];
  plans: PaymentPlan[];
  payers: PrivateKeyAccount[];
  t0: number;
  log: (m: string) => void;
}): Promise<PaymentRecord[]> {
  const h = chainHelpers(o.chain);
  const records: PaymentRecord[] = o.plans.map((plan) => ({
    plan,
    amountUnits: units(plan.amount, plan.decimals),
    sentUnits: 0n,
    feeRuleErrors: [],
  }));
  let next = 0;
  const worker = async (payer: PrivateKeyAccount) => {
    for (;;) {
      const r = records[next++];
      if (!r) return;
      const { plan } = r;
      const m = o.merchants[plan.merchant]!;
      const wait = o.t0 + plan.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      try {
        const created = await o.api("POST", "/payments", {
          apiKey: m.apiKey,
          body: {
            merchant: m.payout,
            chainId: String(o.chain.chainId),
            token: tokenAddress(o.chain, plan.token),
            amount: plan.amount,
            orderId: plan.orderId,
            gasless: plan.mode === "gasless",
            payerCoversFee: plan.mode === "payerCoversFee",
          },
        });
        if (created.status !== 200) throw new Error(`POST /payments: ${created.status} ${JSON.stringify(created.body)}`);
        r.paymentId = String(created.body.url).split("/pay/")[1]!;
        const listed = await o.api("GET", `/v1/payments?orderId=${encodeURIComponent(plan.orderId)}`, { apiKey: m.apiKey });
        const p = listed.body.data?.find((x: any) => x.paymentId === r.paymentId);
        if (!p) throw new Error(`payment ${r.paymentId} not listed: ${listed.status} ${JSON.stringify(listed.body).slice(0, 300)}`);
        r.recipient = p.recipientAddress;
        const { fees, due } = checkFees(m, plan, p, r.feeRuleErrors);
        r.fees = fees;
        r.dueUnits = due;
        const send =
          plan.kind === "full"
            ? due
            : plan.kind === "over"
              ? ceilDiv(due * BigInt(plan.payPercent), 100n)
              : (due * BigInt(plan.payPercent)) / 100n;
        const wallet = h.walletOf(payer);
        const hash =
          plan.token === "ETH"
            ? await wallet.sendTransaction({ to: r.recipient!, value: send })
            : await wallet.writeContract({
                address: h.token(plan.token).address,
                abi: testTokenAbi,
                functionName: "transfer",
                args: [r.recipient!, send],
              });
        // Sent is sent: recorded before the receipt, so a failed wait cannot hide money from the checks.
        r.sentUnits = send;
        r.payTx = hash;
        await h.wait(hash);
      } catch (e) {
        r.error = (e as Error).message.split("\n")[0];
        o.log(`payment ${plan.n} (${plan.orderId}): ${r.error}`);
      }
    }
  };
  await Promise.all(o.payers.map(worker));
  return records;
}
