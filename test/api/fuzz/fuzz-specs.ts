import fc from "fast-check";
import { zeroAddress } from "viem";
import type { BodySpec } from "./fuzz-bodies.js";
import { HOSTILE_TEXT, hostileString, notBoolean, notNumber, notString, pool, raw, union } from "./fuzz-values.js";

// The bodies of the writing routes for the API fuzz test: a valid body, the values that make each field invalid
// (spec and docs), and the hostile values of the right type that may be accepted.

/** What the setup made: keys, a session, payments, a vault with one token and one user, webhooks of both kinds. */
export type FuzzContext = {
  /** Main merchant's key: payments, a payment webhook, a vault (USDT on 777177), a vault webhook and a vault user. */
  key: string;
  /** Same merchant, a key with no vault. */
  bareKey: string;
  /** Another merchant with one payment of its own. */
  otherKey: string;
  /** Keys of the main merchant, each with no vault: one vault creation each in phase "maybe". */
  freshKeys: string[];
  sessionCookie: string;
  sessionName: string;
  sessionToken: string;
  email: string;
  payments: string[];
  otherPayment: string;
  verifyHash: string;
  publicId: string;
  usdt: string;
  usdc: string;
  wallet: string;
  userId: string;
  chainId: number;
};

export const randomAddress = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
/** The address with the case of its first letter flipped: a broken EIP-55 checksum. */
export const badChecksum = (a: string) => {
  const i = a.slice(2).search(/[a-fA-F]/) + 2;
  const ch = a[i]!;
  return a.slice(0, i) + (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) + a.slice(i + 1);
};

export const ADDRESS_LIKE = ["", "0x", "0x123", "0x" + "g".repeat(40), "0x" + "1".repeat(39), "0x" + "1".repeat(41), "0X" + "a".repeat(40)];
/**
 * A string field's wrong values: other types, the given strings, and random strings that `invalid` says can never
 * be valid for the field (a random string may well be a fine name: only a predicate keeps the body refused).
 */
export const badString = (invalid: (s: string) => boolean, ...strings: unknown[]) =>
  union(notString, pool(strings, hostileString.filter(invalid)));
const notAddress = (s: string) => !/^0x[0-9a-fA-F]{40}$/.test(s.trim());
/** A name, symbol or user id: control characters are refused anywhere but at the ends (those are trimmed). */
const hasControl = (s: string) => /\p{Cc}/u.test(s.trim());
/** Hostile strings of the right type and length (phase "maybe"). */
const hostileText = (max: number, f: (s: string) => string = (s) => s) =>
  pool(
    HOSTILE_TEXT.filter((s) => s.trim().length > 0 && [...f(s)].length <= max).map(f),
    hostileString.filter((s) => s.trim().length > 0 && [...f(s)].length <= max).map(f),
  );

export function paymentSpec(ctx: FuzzContext): BodySpec {
  return {
    base: () => ({ merchant: ctx.wallet, chainId: String(ctx.chainId), token: ctx.usdt, amount: "12.5", orderId: "fuzz-order" }),
    invalid: {
      merchant: badString(notAddress, ...ADDRESS_LIKE, " " + ctx.wallet, zeroAddress),
      token: badString(notAddress, ...ADDRESS_LIKE, " " + ctx.usdt),
      // Numbers are left out: the service also takes an integer chainId (the spec types it as a string).
      chainId: pool(
        [
          null,
          "",
          "0",
          "1",
          "56",
          "-137",
          "137.5",
          "0x89",
          "1e3",
          "99999999999999999999",
          "777177 ",
          " 777177",
          "abc",
          137.5,
          -1,
          0,
          [],
          {},
          true,
        ],
        fc.constantFrom([ctx.chainId], raw("1e400")),
        hostileString.filter((s) => s !== "137" && s !== String(ctx.chainId)),
      ),
      // Spec: a string. A JSON number is refused too (a float cannot carry an exact amount).
      amount: union(
        notString,
        pool(
          [
            "0",
            "-1",
            "0.0",
            "",
            " ",
            "1e3",
            "1,5",
            "abc",
            "12.5.5",
            "NaN",
            "Infinity",
            "0x10",
            "1".repeat(100),
            "0.0000001",
            "-0",
            "1_000",
            "١٢",
            12.5,
            1,
          ],
          hostileString.filter((s) => !/^\s*\d+(\.\d+)?\s*$/.test(s) || /^[\s0.]*$/.test(s)),
        ),
      ),
      orderId: union(pool(["", "a".repeat(101), "😀".repeat(101)]), notString),
      description: pool(
        ["a".repeat(201), "😀".repeat(201), 0, 1.5, true, [], {}, ["x"], raw("1e400")],
        notString.arb.filter((v) => v !== null),
      ),
      redirectUrl: pool([
        "javascript:alert(1)",
        "ftp://example.com",
        "not a url",
        "https://example.com/" + "a".repeat(2000),
        123,
        [],
        {},
        true,
        "data:text/html,x",
        "//evil.com",
        "http://",
        "https://",
      ]),
      expiresAt: pool([
        "1700000000000",
        "tomorrow",
        1.5,
        -1,
        0,
        1,
        1000,
        true,
        [],
        {},
        raw("1e400"),
        raw("-1e400"),
        [1],
        8.64e15 + 1,
        1e300,
      ]),
      blockConfirmations: pool([0, 101, -1, 1.5, "1", "5", true, [], {}, 1e10, raw("1e400")]),
      gasless: notBoolean,
      payerCoversFee: notBoolean,
      customPriceUsd: pool(["-1", "0", "abc", "1e5", "0.0000000000000000001", "", " ", "NaN", [], {}, true, -1, 0, 1.5, raw("1e400")]),
    },
    required: ["merchant", "chainId", "token", "amount", "orderId"],
    strict: false,
    hostile: {
      orderId: hostileText(100),
      description: hostileText(200),
      redirectUrl: hostileText(2000, (s) => `https://example.com/${s}`),
      // Up to the last instant a JavaScript Date holds (8.64e15): valid or refused, never a 500.
      expiresAt: pool([8.64e15, Number.MAX_SAFE_INTEGER, 1e20, 253402300800000, 9e15, raw("1e308")]),
      amount: pool(["0.000001", "1" + "0".repeat(60), "1" + "0".repeat(80), " 12.5 ", "12.50", "0012.5"]),
      customPriceUsd: pool(["1" + "0".repeat(100), "0.000000000000000001", "99999999999999999999999999999999.5"]),
      merchant: pool([ctx.wallet.toLowerCase(), "0x" + ctx.wallet.slice(2).toUpperCase()]),
    },
  };
}

// The stack runs in local mode (WEBHOOK_ALLOW_PRIVATE outside production), where http:// to this machine is accepted:
// plain http:// elsewhere is refused in every mode.
const webhookUrlInvalid = badString(
  (s) => !s.trim().toLowerCase().startsWith("https://"),
  "http://shop.example/hook",
  "ftp://127.0.0.1/hook",
  "",
  " ",
  "not a url",
  "https://user:pw@127.0.0.1/",
  "https://127.0.0.1/" + "a".repeat(2001),
  "https://",
  "javascript:alert(1)",
  "//127.0.0.1/hook",
);

export function webhookSpec(): BodySpec {
  return {
    base: () => ({ url: "https://127.0.0.1/hook", events: ["payment.completed"], isActive: true }),
    invalid: {
      url: webhookUrlInvalid,
      events: pool([
        [],
        ["nope"],
        "payment.completed",
        [1],
        {},
        [null],
        ["payment.completed", "nope"],
        ["deposit.*"],
        true,
        [["payment.completed"]],
        ["payment.completed\u0000"],
      ]),
      isActive: notBoolean,
    },
    required: ["url"],
    strict: true,
    hostile: { url: hostileText(2000, (s) => `https://127.0.0.1/${s}`) },
  };
}

const vaultChainInvalid = union(notNumber, pool([0, -1, 1.5, 2147483648, raw("1e400"), raw("-0"), 137, 1, 56, 424242, 11155111]));
const nameInvalid = badString(hasControl, "", " ", "a".repeat(101), "a\u0000b", "a\u0007b", "\u0000");

export function vaultCreateSpec(ctx: FuzzContext): BodySpec {
  const token = { chainId: ctx.chainId, token: ctx.usdt, tokenSymbol: "USDT" };
  return {
    base: () => ({ businessName: "Fuzz Business", walletAddress: ctx.wallet, enabledTokens: [token] }),
    invalid: {
      businessName: nameInvalid,
      walletAddress: badString(notAddress, ...ADDRESS_LIKE, zeroAddress, badChecksum(ctx.wallet), " " + ctx.wallet),
      enabledTokens: pool([
        "x",
        1,
        {},
        [1],
        [{}],
        [null],
        true,
        [{ ...token, chainId: String(ctx.chainId) }],
        [{ ...token, chainId: 137 }],
        [{ ...token, chainId: 424242 }],
        [{ ...token, token: "0x123" }],
        [{ ...token, token: zeroAddress }],
        [{ ...token, tokenSymbol: "a".repeat(21) }],
        [{ ...token, extra: 1 }],
        [{ chainId: ctx.chainId, token: ctx.usdt }],
        [{ ...token, chainId: raw("1e400") }],
        [{ ...token, chainId: 2147483648 }],
        [{ ...token, tokenSymbol: "US\u0000DT" }],
      ]),
    },
    required: ["businessName", "walletAddress"],
    strict: true,
    hostile: { businessName: hostileText(100) },
  };
}

export function vaultPatchSpec(ctx: FuzzContext): BodySpec {
  return {
    base: () => ({ businessName: "Fuzz Business" }),
    invalid: {
      businessName: nameInvalid,
      walletAddress: badString(notAddress, ...ADDRESS_LIKE, zeroAddress, badChecksum(ctx.wallet)),
      isActive: notBoolean,
    },
    required: [],
    strict: true,
    hostile: { businessName: hostileText(100) },
  };
}

export function vaultTokenSpec(ctx: FuzzContext, token: string, withSymbol: boolean): BodySpec {
  const invalid: BodySpec["invalid"] = {
    chainId: vaultChainInvalid,
    token: badString(notAddress, ...ADDRESS_LIKE, zeroAddress, badChecksum(ctx.usdt)),
  };
  if (withSymbol)
    invalid.tokenSymbol = badString((s) => hasControl(s) || [...s.trim()].length > 20, "", " ", "a".repeat(21), "US\u0000DT", "\u0007");
  return {
    base: () => (withSymbol ? { chainId: ctx.chainId, token, tokenSymbol: "USDT" } : { chainId: ctx.chainId, token }),
    invalid,
    required: Object.keys(invalid),
    strict: true,
    hostile: withSymbol ? { tokenSymbol: hostileText(20) } : undefined,
  };
}

export function vaultWebhookSpec(): BodySpec {
  return {
    base: () => ({ url: "https://127.0.0.1/vault-hook", events: ["deposit.*"] }),
    invalid: {
      url: webhookUrlInvalid,
      events: pool([[], ["nope"], "deposit.*", [1], {}, [null], ["payment.completed"], ["deposit.*", "nope"], true, ["deposit.*\u0000"]]),
      isActive: notBoolean,
    },
    required: ["url"],
    strict: true,
    hostile: { url: hostileText(2000, (s) => `https://127.0.0.1/${s}`) },
  };
}

export function vaultUserSpec(ctx: FuzzContext): BodySpec {
  return {
    base: () => ({ externalUserId: ctx.userId, chainId: ctx.chainId, tokenAddress: ctx.usdt }),
    invalid: {
      externalUserId: badString(hasControl, "", " ", "a".repeat(101), "a\u0000b", "\u0007"),
      chainId: vaultChainInvalid,
      tokenAddress: union(
        badString(notAddress, ...ADDRESS_LIKE, zeroAddress, ctx.usdc, badChecksum(ctx.usdt)),
        pool([ctx.usdc], randomAddress),
      ),
    },
    required: ["externalUserId", "chainId", "tokenAddress"],
    strict: true,
    hostile: { externalUserId: hostileText(100) },
  };
}

/** PUT /v1/settings/underpayment-tolerance (docs/payments.md "Underpayment tolerance"): `bps` 0..500, `amounts` per chain and token. */
export function toleranceSpec(ctx: FuzzContext): BodySpec {
  const entry = { chainId: String(ctx.chainId), token: ctx.usdt, amount: "0.5" };
  return {
    base: () => ({ bps: 100, amounts: [entry] }),
    invalid: {
      bps: union(notNumber, pool([-1, 501, 1.5, 10_000, 1e10, 2147483648, raw("1e400"), raw("100.5")])),
      amounts: pool([
        "x",
        1,
        {},
        true,
        [1],
        [null],
        [{}],
        [entry.chainId],
        [{ ...entry, chainId: ctx.chainId }],
        [{ ...entry, chainId: "424242" }],
        [{ ...entry, chainId: "0777177" }],
        [{ ...entry, chainId: "" }],
        [{ ...entry, token: "0x123" }],
        [{ ...entry, token: "0x000000000000000000000000000000000000dEaD" }],
        [{ ...entry, amount: "0" }],
        [{ ...entry, amount: "-1" }],
        [{ ...entry, amount: "1e3" }],
        [{ ...entry, amount: "" }],
        [{ ...entry, amount: 1 }],
        [{ ...entry, amount: "0." + "0".repeat(30) + "1" }],
        [{ ...entry, amount: "1\u0000" }],
        [{ ...entry, extra: 1 }],
        [entry, entry],
        Array.from({ length: 101 }, () => entry),
      ]),
    },
    required: ["bps"],
    strict: true,
    hostile: {
      bps: pool([0, 500]),
      amounts: pool([[], [{ ...entry, amount: "1" + "0".repeat(50) }], [{ ...entry, token: ctx.usdt.toLowerCase(), amount: "0.000001" }]]),
    },
  };
}
