import type { AppDeps } from "../../core/deps.js";
import { RateLimited, isDomainError } from "../../core/errors.js";
import {
  ACCOUNT_THROTTLE,
  ADDRESS_THROTTLE,
  addressKey,
  clearFailures,
  countAttempt,
  failuresOf,
  releaseAttempt,
  reserveAttempt,
  type ThrottlePolicy,
} from "../merchants/index.js";

/**
 * Wrong POS PINs lock out the address that types them, never a terminal or a shop (guesses from one
 * address used to lock the right PIN on every terminal of the merchant). A wrong PIN names no cashier (a PIN alone
 * finds its cashier), so the (terminal, cashier) of a failure is its terminal. Counted and locked as
 * login-throttle.ts does (free failures, then 30 s doubling up to 15 min, forgotten an hour after the last):
 * - per (terminal, client address): 5 free; 1 while the terminal is in step-up;
 * - per client address over every POS terminal: 20 free (a shop's tills often share one address).
 * Failures are also counted per terminal and per merchant from every address, without ever locking: 10 on the
 * terminal or 20 on the merchant, each less than 15 min after the one before, put the terminal in step-up. An
 * address with no recent failure is never refused, so a correct PIN from it works during any attack.
 */

export const TOO_MANY_PINS = "Too many PIN attempts";

/** Per (terminal, address): a cashier may mistype a few times at the counter. */
export const PAIR_THROTTLE: ThrottlePolicy = ACCOUNT_THROTTLE;
/** Per (terminal, address) in step-up: one wrong PIN, then the waits. */
export const STEP_UP_THROTTLE: ThrottlePolicy = { ...ACCOUNT_THROTTLE, free: 1 };
/** Per address, over every terminal of every merchant. */
export const POS_ADDRESS_THROTTLE: ThrottlePolicy = ADDRESS_THROTTLE;
/** Failures of a terminal (any address) that put it in step-up. */
export const TERMINAL_STEP_UP = 10;
/** Failures over a merchant's terminals (any address) that put all of them in step-up. */
export const MERCHANT_STEP_UP = 20;
/**
 * How the step-up counts are kept: never locked (free up to Postgres's integer), forgotten 15 min after the last
 * failure (an ordinary day's typos do not add up).
 */
const STEP_UP_COUNT: ThrottlePolicy = { free: 2_147_483_647, baseMs: 0, maxMs: 0, forgetMs: 15 * 60_000 };

export const terminalPinKey = (terminalId: string) => `pos:${terminalId}`;
export const merchantPinKey = (merchantId: string) => `pos:merchant:${merchantId}`;
export const posAddressKey = (address: string) => `pos:${addressKey(address)}`;
export const pairPinKey = (terminalId: string, address: string) => `pos:${terminalId}:${addressKey(address)}`;

/** A booked PIN attempt: `pinFailed` or `pinSucceeded` settles it. */
export type PinAttempt = { pair: string; pairPolicy: ThrottlePolicy; address: string; terminal: string; merchant: string };

/** Books one attempt on `key`; a lock is refused with the POS's own message. */
async function reserve(deps: Pick<AppDeps, "db" | "now">, key: string, policy: ThrottlePolicy) {
  try {
    await reserveAttempt(deps, key, policy);
  } catch (err) {
    if (isDomainError(err) && err.kind === "rate_limited") throw new RateLimited(Number(err.details?.retryAfter ?? 1), TOO_MANY_PINS);
    throw err;
  }
}

/**
 * Books a PIN attempt on `terminal` from client address `from` as a failure, before the PIN is checked (atomic:
 * concurrent guesses cannot all pass). Throws RateLimited (`Too many PIN attempts`) while the address is locked
 * on this terminal or everywhere.
 *
 * @example
 * const attempt = await reservePinAttempt(deps, terminal, "203.0.113.7");
 */
export async function reservePinAttempt(
  deps: Pick<AppDeps, "db" | "now">,
  terminal: { id: string; merchantId: string },
  from: string,
): Promise<PinAttempt> {
  const a = {
    pair: pairPinKey(terminal.id, from),
    address: posAddressKey(from),
    terminal: terminalPinKey(terminal.id),
    merchant: merchantPinKey(terminal.merchantId),
  };
  const stepUp =
    (await failuresOf(deps, a.terminal, STEP_UP_COUNT)) >= TERMINAL_STEP_UP ||
    (await failuresOf(deps, a.merchant, STEP_UP_COUNT)) >= MERCHANT_STEP_UP;
  const pairPolicy = stepUp ? STEP_UP_THROTTLE : PAIR_THROTTLE;
  // The pair first: an attempt it refuses does not spend the address's budget at the other terminals.
  await reserve(deps, a.pair, pairPolicy);
  try {
    await reserve(deps, a.address, POS_ADDRESS_THROTTLE);
  } catch (err) {
    await releaseAttempt(deps.db, a.pair, pairPolicy);
    throw err;
  }
  return { ...a, pairPolicy };
}

/** The PIN was wrong: the booked failures stay; the terminal's and merchant's step-up counts grow. */
export async function pinFailed(deps: Pick<AppDeps, "db" | "now">, a: PinAttempt): Promise<void> {
  await countAttempt(deps, a.terminal, STEP_UP_COUNT);
  await countAttempt(deps, a.merchant, STEP_UP_COUNT);
}

/**
 * The PIN was right: the pair's failures are forgotten; only this attempt is given back to the address (one
 * cashier's sign-in must not wash an address's guesses at other terminals).
 */
export async function pinSucceeded(deps: Pick<AppDeps, "db">, a: PinAttempt): Promise<void> {
  await clearFailures(deps.db, a.pair);
  await releaseAttempt(deps.db, a.address, POS_ADDRESS_THROTTLE);
}
