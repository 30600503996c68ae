/**
 * Exact money arithmetic on bigint. No JS number ever carries an amount or a price:
 * amounts are integers of the token's smallest unit, USD prices and USD values are
 * integers with 18 decimals ("usd18"), the Gas Tank counts USDT micros (6 decimals).
 *
 * Parsing rules (parseAmount / parsePrice18 / parseDecimal):
 * - accepted: plain decimal digits with an optional fraction, `12`, `12.5`, `0.000001`, `.5`, `5.`;
 * - rejected (InvalidAmountError, or null from the `try*` variants): empty strings, whitespace,
 *   signs (`-1`, `+1`), exponents (`1e6`), hex, `NaN`, `Infinity`, thousand separators, anything
 *   above uint256;
 * - fraction digits beyond `decimals` are rejected unless they are all zeros (`1.500000000` with 6
 *   decimals is exactly 1.5 and accepted): a value is never silently rounded.
 * Zero is a valid amount here; positivity is the caller's rule (`parsePositiveAmount` checks it).
 */

export class InvalidAmountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidAmountError";
  }
}

export const PRICE_DECIMALS = 18;
/** 1 USD (or 1 token per USD) with 18 decimals. */
export const ONE_USD18 = 10n ** 18n;
/** Largest uint256: no on-chain amount can exceed it. */
export const MAX_UINT256 = (1n << 256n) - 1n;

const DECIMAL_RE = /^(\d*)(?:\.(\d*))?$/;

function checkDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) throw new RangeError(`invalid decimals: ${decimals}`);
}

/** 10^n as bigint. */
export function pow10(n: number): bigint {
  checkDecimals(n);
  return 10n ** BigInt(n);
}

/**
 * `strict`: the grammar of amounts callers send to the API: digits with an optional point and
 * digits ("12.5"; not ".5", "5." or "1e3"), and no more fraction digits than `decimals`, zeros included.
 */
export type ParseOptions = { strict?: boolean };
const STRICT_RE = /^\d+(\.\d+)?$/;

/**
 * A human decimal string to smallest units. Throws InvalidAmountError when the string is not a
 * plain non-negative decimal or would lose precision at `decimals` (see the module comment).
 */
export function parseAmount(decimal: string, decimals: number, opts: ParseOptions = {}): bigint {
  checkDecimals(decimals);
  if (typeof decimal !== "string") throw new InvalidAmountError("amount must be a string");
  if (opts.strict && !STRICT_RE.test(decimal)) throw new InvalidAmountError(`not a plain decimal: ${JSON.stringify(decimal)}`);
  const m = DECIMAL_RE.exec(decimal);
  if (!m || (m[1] === "" && (m[2] === undefined || m[2] === "")))
    throw new InvalidAmountError(`not a decimal number: ${JSON.stringify(decimal)}`);
  const whole = m[1] || "0";
  // uint256 has 78 digits: refuse longer integer parts before building a huge bigint.
  if (whole.replace(/^0+/, "").length > 78) throw new InvalidAmountError("amount too large");
  let frac = m[2] ?? "";
  if (frac.length > decimals) {
    if (opts.strict || /[^0]/.test(frac.slice(decimals))) throw new InvalidAmountError(`more than ${decimals} fraction digits: ${decimal}`);
    frac = frac.slice(0, decimals);
  }
  const units = BigInt(whole + frac.padEnd(decimals, "0"));
  if (units > MAX_UINT256) throw new InvalidAmountError("amount too large");
  return units;
}

/** parseAmount returning null instead of throwing. */
export function tryParseAmount(decimal: unknown, decimals: number, opts: ParseOptions = {}): bigint | null {
  if (typeof decimal !== "string") return null;
  try {
    return parseAmount(decimal, decimals, opts);
  } catch (e) {
    if (e instanceof InvalidAmountError) return null;
    throw e;
  }
}

/** parseAmount that also requires a value above zero; null when invalid or zero. */
export function parsePositiveAmount(decimal: unknown, decimals: number, opts: ParseOptions = {}): bigint | null {
  const v = tryParseAmount(decimal, decimals, opts);
  return v !== null && v > 0n ? v : null;
}

/**
 * Smallest units to a human decimal string without trailing zeros: (12500000n, 6) -> "12.5",
 * (0n, 6) -> "0", (1n, 18) -> "0.000000000000000001". Negative values get a leading "-".
 */
export function formatAmount(units: bigint, decimals: number, opts: { fixed?: boolean } = {}): string {
  checkDecimals(decimals);
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const padded = decimals === 0 ? "" : (abs % base).toString().padStart(decimals, "0");
  // `fixed` keeps every decimal place ("5.000000"), for balances quoted "with 6 decimals".
  const frac = opts.fixed ? padded : padded.replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/** A USD price string ("3000", "0.000012345678901234") to 18-decimal fixed point; throws InvalidAmountError. */
export function parsePrice18(str: string): bigint {
  return parseAmount(str, PRICE_DECIMALS);
}

/** parsePrice18 returning null instead of throwing. */
export function tryParsePrice18(str: unknown): bigint | null {
  return tryParseAmount(str, PRICE_DECIMALS);
}

/** 18-decimal fixed point to a decimal string without trailing zeros. */
export function formatPrice18(x: bigint): string {
  return formatAmount(x, PRICE_DECIMALS);
}

function checkDivisor(d: bigint): void {
  if (d === 0n) throw new RangeError("division by zero");
}

/** floor(a * b / d), exact for any sign. */
export function mulDivFloor(a: bigint, b: bigint, d: bigint): bigint {
  checkDivisor(d);
  const n = a * b;
  const q = n / d;
  return n % d !== 0n && n < 0n !== d < 0n ? q - 1n : q;
}

/** ceil(a * b / d), exact for any sign. */
export function mulDivCeil(a: bigint, b: bigint, d: bigint): bigint {
  checkDivisor(d);
  const n = a * b;
  const q = n / d;
  return n % d !== 0n && n < 0n === d < 0n ? q + 1n : q;
}

export type Rounding = "floor" | "ceil";

/**
 * A JSON number literal (`1.0001`, `3e3`, `1.2345E-7`, `-0.5`) to fixed point with `decimals`
 * digits, exactly (no float ever involved), rounding the digits beyond `decimals` as asked.
 * Returns null when the text is not a JSON number literal.
 */
export function decimalLiteralToFixed(literal: string, decimals: number, rounding: Rounding = "floor"): bigint | null {
  checkDecimals(decimals);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal.trim());
  if (!m) return null;
  const exp = Number(m[4] ?? "0");
  // Absurd exponents: treat as not a usable number rather than building huge bigints.
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return null;
  const digits = BigInt(m[2]! + (m[3] ?? ""));
  const mantissa = m[1] === "-" ? -digits : digits;
  // value = mantissa * 10^(exp - fractionDigits); target = value * 10^decimals
  const shift = exp - (m[3]?.length ?? 0) + decimals;
  if (shift >= 0) return mantissa * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  return rounding === "ceil" ? mulDivCeil(mantissa, 1n, div) : mulDivFloor(mantissa, 1n, div);
}

/** USD with 18 decimals to USDT micros (6 decimals), rounded up (the service never under-charges the Gas Tank). */
export function usd18ToMicrosCeil(usd18: bigint): bigint {
  return mulDivCeil(usd18, 1n, 10n ** 12n);
}

/** Token units to USD (18 decimals) at `priceUsd18`, rounded up. */
export function unitsToUsd18Ceil(units: bigint, decimals: number, priceUsd18: bigint): bigint {
  return mulDivCeil(units, priceUsd18, pow10(decimals));
}
