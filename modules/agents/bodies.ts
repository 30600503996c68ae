import { getAddress, isAddress, zeroAddress } from "viem";
import { z } from "zod";
import { Invalid } from "../../core/errors.js";
import { firstIssue, objectError, UNKNOWN_FIELDS } from "../../core/zod-issues.js";

// The zod schemas of the /v1/agent bodies (and the dashboard's agent forms) and the one way they are read: the checks
// that need no database. api/openapi documents the bodies from these very objects; the cap of `markupBps` is the
// agent's own and is checked against its row (agents.ts updateAgent).

export const NOT_AN_OBJECT = "Invalid request body";
export const MARKUP_MESSAGE = (cap: number) => `markupBps must be a whole number of basis points between 0 and ${cap}`;
export const PAYOUT_ADDRESS_INVALID = "payoutAddress must be an EVM address";

/** A markup in basis points: a whole number from 0 to 10000 (the operator's cap for the agent is checked after). */
const markupField = z
  .number({ error: MARKUP_MESSAGE(10_000) })
  .int(MARKUP_MESSAGE(10_000))
  .min(0, MARKUP_MESSAGE(10_000))
  .max(10_000, MARKUP_MESSAGE(10_000));

/** An EVM address, not the zero address (earnings sent there would be burnt); returned checksummed. */
const payoutAddressField = z
  .string({ error: PAYOUT_ADDRESS_INVALID })
  .refine((s) => isAddress(s, { strict: false }) && s.toLowerCase() !== zeroAddress, PAYOUT_ADDRESS_INVALID)
  .transform((s) => getAddress(s.toLowerCase()));

/** PATCH /v1/agent: the agent's markup and payout address, each optional. */
export const updateAgentBody = z.strictObject(
  { markupBps: markupField.optional(), payoutAddress: payoutAddressField.optional() },
  { error: objectError(NOT_AN_OBJECT) },
);

/** POST /v1/agent/withdrawals: the balance of `token` on `chainId`, or with `balance: "usd"` the USD balance paid in that token. */
export const agentWithdrawalBody = z.strictObject(
  {
    chainId: z.string({ error: "chainId must be a chain id string" }).regex(/^[1-9][0-9]{0,9}$/, "chainId must be a chain id string"),
    token: z
      .string({ error: "Invalid Token address format" })
      .refine((s) => isAddress(s, { strict: false }), "Invalid Token address format"),
    balance: z.enum(["token", "usd"], { error: 'balance must be "token" or "usd"' }).default("token"),
  },
  { error: objectError(NOT_AN_OBJECT) },
);

/** The order the API reports a body's problems in: unknown fields first, then the fields as listed. */
export const UPDATE_ORDER = [UNKNOWN_FIELDS, "markupBps", "payoutAddress"];
const ORDER = { update: UPDATE_ORDER, withdrawal: [UNKNOWN_FIELDS, "chainId", "token", "balance"] };

/** A body read with its schema; its first problem (in the order of ORDER) is thrown as Invalid. */
export function parseAgentBody<S extends z.ZodType>(schema: S, raw: unknown, order: keyof typeof ORDER): z.output<S> {
  const parsed = schema.safeParse(raw === undefined ? {} : raw);
  if (parsed.success) return parsed.data;
  throw new Invalid(firstIssue(parsed.error.issues, ORDER[order]).message);
}
