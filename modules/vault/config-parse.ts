import { getAddress, isAddress, zeroAddress, type Address } from "viem";
import { z } from "zod";
import { Invalid } from "../../core/errors.js";
import { firstIssue, objectError, UNKNOWN_FIELDS } from "../../core/zod-issues.js";
import { BUSINESS_NAME_MAX, TOKEN_SYMBOL_MAX, VAULT_ACTIVE_CHAINS, VAULT_COMING_SOON_CHAINS } from "./types.js";

// The zod schemas of the Vault configuration bodies and the one way they are read (parseVaultBody): the spec's
// messages where it gives them, ours otherwise (docs/vault.md lists them all). Pure: no database, no chain.
// api/openapi documents the bodies from these very objects.

export const NOT_AN_OBJECT = "Body must be a JSON object";
// Control characters would reach webhooks, dashboards and logs as they are.
const CONTROL = /\p{Cc}/u;
const noControl = (s: string) => !CONTROL.test(s);

/**
 * A text field: absent, null or blank is `<name> is required`, another type `<name> must be a string`; trimmed,
 * at most `max` characters (code points), no control characters.
 */
const textField = (name: string, max: number) =>
  z
    .string({ error: (iss) => (iss.input == null ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, `${name} is required`)
    .max(max, `${name} must be at most ${max} characters`)
    .refine(noControl, `${name} must not contain control characters`);

/** `businessName`: a non-empty string, trimmed, at most 100 characters. */
export const businessNameField = textField("businessName", BUSINESS_NAME_MAX);
/** `tokenSymbol`: a non-empty string, trimmed, at most 20 characters. */
export const tokenSymbolField = textField("tokenSymbol", TOKEN_SYMBOL_MAX);

/** All lowercase or all uppercase hex carries no checksum (EIP-55); mixed case must be a valid one. */
const checksumOk = (v: string) => {
  const hex = v.slice(2);
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || isAddress(v);
};

/**
 * An EVM address: `0x` + 40 hex characters; mixed case must be a valid EIP-55 checksum (a typo in a payout
 * address is caught, not paid to). Absent, null or blank is `required`, anything else malformed `invalid`; not the
 * zero address (`zero`). The output is checksummed.
 */
const evmAddressField = (m: { required: string; invalid: string; zero: string }) =>
  z
    .string({ error: (iss) => (iss.input == null ? m.required : m.invalid) })
    .refine((s) => s.trim() !== "", m.required)
    .regex(/^0x[0-9a-fA-F]{40}$/, m.invalid)
    .refine(checksumOk, m.invalid)
    .refine((s) => s.toLowerCase() !== zeroAddress, m.zero)
    .transform((s) => getAddress(s.toLowerCase()));

/** `walletAddress`: required, an EVM address, not the zero address (funds swept there would be burnt). */
export const walletAddressField = evmAddressField({
  required: "walletAddress is required",
  invalid: "Invalid EVM address",
  zero: "walletAddress must not be the zero address",
});

/** `token`: an ERC-20 contract address (the native coin is not a vault token: deposits are token transfers). */
export const vaultTokenField = evmAddressField({
  required: "token is required",
  invalid: "Invalid token address",
  zero: "The native coin cannot be enabled in a vault; enable an ERC-20 token",
});

/** `isActive` (PATCH /vault/v1/config). */
export const isActiveField = z.boolean({ error: "isActive must be a boolean" });

/** Largest chain id stored (integer columns); larger ones are refused as malformed. */
export const MAX_CHAIN_ID = 2_147_483_647;

const CHAIN_ID_MESSAGE = "chainId must be a positive integer number";
/**
 * `chainId`: a JSON number, a positive integer up to MAX_CHAIN_ID. Not `.int()`: zod's int check stops every later
 * check of the body, and the duplicate check of `enabledTokens` must still see the items before this one; the
 * refine is exact where `multipleOf(1)` (there for the JSON Schema) rounds (`777177.0000000001`).
 */
export const chainIdField = z
  .number({ error: (iss) => (iss.input == null ? "chainId is required" : CHAIN_ID_MESSAGE) })
  .refine(Number.isSafeInteger, CHAIN_ID_MESSAGE)
  .multipleOf(1, CHAIN_ID_MESSAGE)
  .min(1, CHAIN_ID_MESSAGE)
  .max(MAX_CHAIN_ID, CHAIN_ID_MESSAGE);

/** A vault chain: 11155111 and 777177; 777178, 1, 137 and 56 are announced; anything else is not a vault chain. */
export const vaultChainIdField = chainIdField.refine((id) => VAULT_ACTIVE_CHAINS.includes(id), {
  error: (iss) =>
    VAULT_COMING_SOON_CHAINS.includes(iss.input as number) ? `Vault is coming soon on chain ${iss.input}` : "Unsupported chain",
});

const tokenToEnableShape = { chainId: vaultChainIdField, token: vaultTokenField, tokenSymbol: tokenSymbolField };

/** POST /vault/v1/config/tokens `{chainId, token, tokenSymbol}`. */
export const tokenToEnableBody = z.strictObject(tokenToEnableShape, { error: objectError(NOT_AN_OBJECT) });
/** An item of `enabledTokens` (POST /vault/v1/config): the same fields; its messages are prefixed with its place. */
export const tokenToEnableItem = z.strictObject(tokenToEnableShape, { error: objectError("must be an object") });
/** DELETE /vault/v1/config/tokens `{chainId, token}`. The chain's status does not matter: only enabled tokens can be removed. */
export const tokenToRemoveBody = z.strictObject({ chainId: chainIdField, token: vaultTokenField }, { error: objectError(NOT_AN_OBJECT) });

export type TokenToEnable = z.output<typeof tokenToEnableBody>;

/** The pseudo key of an `enabledTokens` item's duplicate (reported after the item's own fields). */
export const DUPLICATE = "~duplicate";
/** The pseudo key of a PATCH body with no field (reported after unknown fields). */
export const NOTHING = "~nothing";

/**
 * The order in which the checks of every Vault body report (a key not listed comes last): the order of each body's
 * fields, and where its unknown fields are reported (POST /config after `walletAddress`, POST /users last, before
 * anything else elsewhere).
 */
const ORDER = {
  config: ["businessName", "walletAddress", UNKNOWN_FIELDS, "enabledTokens", "chainId", "token", "tokenSymbol", DUPLICATE],
  update: [UNKNOWN_FIELDS, NOTHING, "businessName", "walletAddress", "isActive"],
  token: [UNKNOWN_FIELDS, "chainId", "token", "tokenSymbol"],
  user: ["externalUserId", "chainId", "tokenAddress", UNKNOWN_FIELDS],
} as const;

/**
 * Reads a Vault body with its schema: no body is `{}`; the first problem, in the body's `order` (ORDER), is thrown
 * as Invalid, an item's prefixed with its place (`enabledTokens[1]: Unsupported chain`).
 * @example parseVaultBody(tokenToRemoveBody, {chainId: 777177}, "token") // throws Invalid("token is required")
 */
export function parseVaultBody<S extends z.ZodType>(schema: S, raw: unknown, order: keyof typeof ORDER): z.output<S> {
  const parsed = schema.safeParse(raw === undefined ? {} : raw);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error.issues, ORDER[order]);
  const [field, index] = issue.path;
  throw new Invalid(typeof index === "number" ? `${String(field)}[${index}]: ${issue.message}` : issue.message);
}

/** One field's value read with its schema; its first problem is thrown as Invalid. */
export function parseField<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Invalid(parsed.error.issues[0]!.message);
  return parsed.data;
}

/** `walletAddress` alone (walletAddressField), e.g. the operator's fee recipient. Throws Invalid. */
export const parseWalletAddress = (v: unknown): Address => parseField(walletAddressField, v);
