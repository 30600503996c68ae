// The payments `trigger` makes (cli/sandbox/trigger.ts): how each is created and paid on the local chain, and the
// events it leads to (docs/integration.md).

export type Scenario = {
  /** Gasless (fees taken from the amount) or Gas Tank mode (the merchant's Gas Tank pays them). */
  gasless: boolean;
  /** What the payer sends: the amount, half of it, 1.5 times it, or nothing. */
  send: "exact" | "half" | "over" | "none";
  /** Send another token of the chain than the payment's. */
  otherToken?: boolean;
  /** `expiresAt` this long after creation. */
  expiresInMs?: number;
  /** Pay only once the payment has expired. */
  afterExpiry?: boolean;
  /** The events the merchant gets, in order. */
  expect: string[];
  note: string;
};

const SOON = 10_000;

export const SCENARIOS: Record<string, Scenario> = {
  paid: { gasless: true, send: "exact", expect: ["payment.completed"], note: "paid in full: completed once settled" },
  underpaid: {
    gasless: true,
    send: "half",
    expect: [],
    note: "half paid: stays pending with its receivedAmount, no event; POST /v1/payments/{id}/withdraw then gives payment.withdrawn",
  },
  overpaid: { gasless: true, send: "over", expect: ["payment.completed"], note: "1.5 times the amount: completed, with `overpayment`" },
  "paid-late": {
    gasless: true,
    send: "exact",
    expiresInMs: SOON,
    afterExpiry: true,
    expect: ["payment.expired", "payment.completed"],
    note: "paid in full after it expired (the expiry processor runs every minute): late funds are never dropped",
  },
  "wrong-token": {
    gasless: true,
    send: "exact",
    otherToken: true,
    expect: [],
    note: "the amount in another token: stays pending, the funds listed as unexpectedFunds (POST /v1/payments/{id}/recover), no event",
  },
  "empty-gas-tank": {
    gasless: false,
    send: "exact",
    expect: ["payment.awaiting_gas"],
    note: "Gas Tank mode: awaiting_gas while the Gas Tank cannot cover the fee (a new merchant's is empty); completed once it is funded",
  },
  expired: {
    gasless: true,
    send: "none",
    expiresInMs: SOON,
    expect: ["payment.expired"],
    note: "nothing paid: expired at the expiry processor's first pass after expiresAt (it runs every minute)",
  },
};
