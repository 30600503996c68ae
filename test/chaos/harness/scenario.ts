import { formatUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Rng } from "./rng.js";

export type TokenName = "USDC" | "USDT" | "ETH";
export type FeeMode = "gasTank" | "gasless" | "payerCoversFee";
/** full: exactly what is due; over: more than due (whole amount swept); partial: less (stays pending). */
export type PayKind = "full" | "over" | "partial";

export type MerchantPlan = {
  index: number;
  name: string;
  type: "direct" | "member";
  /** Funded Gas Tank: may use Gas Tank mode. */
  gasTank: boolean;
  /** Webhook subscription: the default events or every event. */
  events: "default" | "all";
  /** Fresh payout address: its balances must end equal to the expected net amounts exactly. */
  payout: Address;
};

export type PaymentPlan = {
  n: number;
  orderId: string;
  merchant: number;
  token: TokenName;
  mode: FeeMode;
  kind: PayKind;
  amount: string;
  decimals: number;
  /** Per cent of what is due: over 101..130, partial 20..90. */
  payPercent: number;
  /** When to create it, ms after the fault window opens. */
  atMs: number;
};

export const DECIMALS: Record<TokenName, number> = { USDC: 6, USDT: 6, ETH: 18 };

/** The seeded mix of merchants and payments. */
export function planScenario(rng: Rng, o: { seed: number; payments: number; merchants: number; creationWindowMs: number }) {
  const merchants: MerchantPlan[] = [];
  for (let i = 0; i < o.merchants; i++)
    merchants.push({
      index: i,
      name: `Chaos shop ${i}`,
      // Every other merchant has a Gas Tank; the first of each pair pays the platform fee after the promotion.
      type: i % 3 === 2 ? "member" : "direct",
      gasTank: i % 2 === 0,
      events: i % 4 < 2 ? "all" : "default",
      payout: privateKeyToAccount(generatePrivateKeyFrom(rng)).address,
    });
  const payments: PaymentPlan[] = [];
  for (let n = 0; n < o.payments; n++) {
    const merchant = rng.int(0, merchants.length - 1);
    const token = rng.weighted<TokenName>([
      ["USDC", 40],
      ["USDT", 35],
      ["ETH", 25],
    ]);
    const mode = merchants[merchant]!.gasTank
      ? rng.weighted<FeeMode>([
          ["gasTank", 60],
          ["gasless", 20],
          ["payerCoversFee", 20],
        ])
      : rng.pick<FeeMode>(["gasless", "payerCoversFee"]);
    const kind = rng.weighted<PayKind>([
      ["full", 70],
      ["over", 15],
      ["partial", 15],
    ]);
    const decimals = DECIMALS[token];
    // $2-$150 worth: well above the fees (0.10 USD + gas + 1%), so gasless never fails for fees.
    const units = token === "ETH" ? rng.big(700_000_000_000_000n, 50_000_000_000_000_000n) : rng.big(2_000_000n, 150_000_000n);
    payments.push({
      n,
      orderId: `chaos-${o.seed}-${n}`,
      merchant,
      token,
      mode,
      kind,
      amount: formatUnits(units, decimals),
      decimals,
      payPercent: kind === "over" ? rng.int(101, 130) : kind === "partial" ? rng.int(20, 90) : 100,
      atMs: rng.int(0, o.creationWindowMs),
    });
  }
  payments.sort((a, b) => a.atMs - b.atMs);
  return { merchants, payments };
}

/** A private key from the seeded stream (fresh payouts that a replay recreates). */
function generatePrivateKeyFrom(rng: Rng): `0x${string}` {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 255).toString(16).padStart(2, "0")).join("");
  // All zeros or above the curve order are astronomically unlikely; fall back to a random key then.
  return /^0+$/.test(hex) ? generatePrivateKey() : `0x${hex}`;
}
