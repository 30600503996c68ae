import { DomainError, type ErrorKind } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { valueFingerprint } from "../../modules/idempotency/index.js";
import { checkIdempotencyKey, type KeyUse } from "../../modules/idempotency/index.js";
import {
  claimIdempotencyKey,
  keepIdempotencyKey,
  keyScopeOf,
  type Claimed,
  type KeyedRequest,
  type StoredResponse,
} from "../../modules/idempotency/index.js";
import { STATUS } from "../errors.js";
import { settleClaim } from "../middleware/idempotency.js";
import type { GraphqlContext } from "./context.js";

// A mutation's `idempotencyKey` argument (docs/payments.md "Idempotency keys"): REST's `Idempotency-Key` for one field. The same
// store and the same namespace (the caller's API key); the operation is `GRAPHQL <field>`, so a key used on a REST route
// and then on a mutation (or on two mutations) is a 409, like a key reused on another REST endpoint. The field's
// outcome is kept when REST would keep its status: its value, or its domain error when a 4xx other than 401, 408,
// 409, 415 and 429; a 5xx leaves the key to a retry of the same call, anything else forgets it.

type Outcome = { data: unknown } | { error: { kind: ErrorKind; message: string; code?: string; details?: Record<string, unknown> } };

function replay(stored: StoredResponse): unknown {
  const outcome = JSON.parse(stored.body) as Outcome;
  if ("data" in outcome) return outcome.data;
  const { kind, message, code, details } = outcome.error;
  throw new DomainError(kind, message, code, details);
}

/** Settles the claim with the field's outcome (`status` as REST's); the field's answer stands either way. */
async function settle(ctx: GraphqlContext, req: KeyedRequest, claim: Claimed, status: number, outcome: Outcome | null) {
  try {
    await settleClaim(ctx.deps, claim, status, async () => ({ body: JSON.stringify(outcome), headers: [] }));
  } catch (err) {
    logger("graphql").error({ err, key: req.key, field: req.path }, "idempotency key not stored");
  }
}

/**
 * Runs a mutation field under its `idempotencyKey` (when given and the API key resolves; otherwise `run` as always):
 * the first outcome is kept for 24 hours and returned to a call with the same key and the same other arguments.
 * `run` gets the key's use (an operation that records it finds what a first attempt created: createPayment).
 */
export async function idempotentField<R>(
  ctx: GraphqlContext,
  field: string,
  args: { idempotencyKey?: string | null },
  run: (use?: KeyUse) => Promise<R>,
): Promise<R> {
  const { idempotencyKey, ...rest } = args;
  if (idempotencyKey == null) return run();
  const scope = await keyScopeOf(ctx.deps, ctx.caller);
  if (!scope) return run();
  const key = checkIdempotencyKey(idempotencyKey);
  const req: KeyedRequest = { ...scope, key, method: "GRAPHQL", path: field, hash: valueFingerprint(rest), subject: "arguments" };
  const claim = await claimIdempotencyKey(ctx.deps, req);
  if (claim.kind === "replay") return replay(claim.response) as R;
  const stop = keepIdempotencyKey(ctx.deps, claim);
  let value: R;
  try {
    value = await run(claim.use);
  } catch (e) {
    stop();
    const status = e instanceof DomainError ? STATUS[e.kind] : 500;
    const error = e instanceof DomainError ? { kind: e.kind, message: e.message, code: e.code, details: e.details } : null;
    await settle(ctx, req, claim, status, error && { error });
    throw e;
  }
  stop();
  await settle(ctx, req, claim, 200, { data: value });
  return value;
}
