import { responsePathAsArray, type GraphQLResolveInfo } from "graphql";
import { DomainError, Failed } from "../../core/errors.js";
import { logger } from "../../core/log.js";
import { getBalance } from "../../modules/gas-tank/index.js";
import { createPayment } from "../../modules/payments/index.js";
import { getPromoStatus } from "../../modules/payments/index.js";
import { getPayment, listPayments, recoverFunds } from "../../flows/payment-views.js";
import { withdrawPayment } from "../../modules/payments/index.js";
import { cancelPayment } from "../../modules/payments/index.js";
import { getVault } from "../../modules/vault/index.js";
import { listVaultDeposits } from "../../modules/vault/index.js";
import { getVaultUser } from "../../modules/vault/index.js";
import { toGraphqlError } from "../errors.js";
import { idempotentField } from "./idempotency.js";
import { countCall } from "./limits.js";
import type { GraphqlContext } from "./context.js";

/**
 * A root field: the operation's domain errors become field errors with REST's message and
 * `extensions: {code, http}` (api/errors.ts); anything else is logged and answered like REST's
 * 500, with REST's message for it (`internal`) and without its text.
 */
const field =
  <A, R>(run: (args: A, ctx: GraphqlContext) => Promise<R>, internal = "Internal server error") =>
  async (args: A, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<R> => {
    try {
      return await run(args, ctx);
    } catch (e) {
      if (e instanceof DomainError) throw toGraphqlError(e);
      logger("graphql").error({ err: e, field: responsePathAsArray(info.path).join(".") }, "unexpected error");
      throw toGraphqlError(new Failed(internal));
    }
  };

/** A mutation's optional `idempotencyKey` argument. */
type Keyed = { idempotencyKey?: string | null };

const LIST_ARGS = ["limit", "cursor", "status", "createdAfter", "createdBefore", "orderId"] as const;
type ListArgs = Partial<Record<(typeof LIST_ARGS)[number], string | number | null>>;

/**
 * Root resolvers (graphql-js `rootValue`): the operations REST calls, in the same order (rate
 * limit first, like REST's middleware). Objects returned may hold functions: graphql-js calls them
 * only for the fields that were asked for.
 */
export const rootValue = {
  /** GET /v1/payments (API key only: the dashboard's session cookie is not accepted here). */
  payments: field(async (args: ListArgs, ctx) => {
    // REST reads these from the query string: the same strings, so the same checks and messages.
    const query: Record<string, string> = {};
    for (const k of LIST_ARGS) if (args[k] != null) query[k] = String(args[k]);
    return listPayments(ctx.deps, ctx.caller, query);
  }),

  /** GET /v1/payments/{paymentId}: NOT_FOUND for another merchant's payment, as REST's 404. */
  payment: field(async (args: { paymentId: string }, ctx) => getPayment(ctx.deps, ctx.caller, args.paymentId)),

  /** GET /balance (60 calls a minute per key, like REST). */
  balance: field(async (_args: unknown, ctx) => {
    await countCall(ctx.deps, "balance", ctx);
    return getBalance(ctx.deps, ctx.caller);
  }),

  /** GET /promo-status. */
  promoStatus: field(async (_args: unknown, ctx) => getPromoStatus(ctx.deps, ctx.caller)),

  /** GET /vault/v1/config (100 calls a minute per key, like the REST config endpoints). */
  vaultConfig: field(async (_args: unknown, ctx) => {
    await countCall(ctx.deps, "vaultConfig", ctx);
    return getVault(ctx.deps, ctx.caller);
  }),

  /** GET /vault/v1/users (1000 calls a minute per key, like REST). */
  vaultUser: field(async (args: { externalUserId: string; chainId?: number | null; tokenAddress?: string | null }, ctx) => {
    await countCall(ctx.deps, "vaultUser", ctx);
    return getVaultUser(ctx.deps, ctx.caller, {
      externalUserId: args.externalUserId,
      chainId: args.chainId == null ? undefined : String(args.chainId),
      tokenAddress: args.tokenAddress ?? undefined,
    });
  }),

  /** GET /vault/v1/deposits (100 calls a minute per key, like REST). */
  vaultDeposits: field(async (args: { limit?: number | null; status?: string | null; externalUserId?: string | null }, ctx) => {
    await countCall(ctx.deps, "vaultDeposits", ctx);
    return listVaultDeposits(ctx.deps, ctx.caller, {
      limit: args.limit == null ? undefined : String(args.limit),
      status: args.status ?? undefined,
      externalUserId: args.externalUserId ?? undefined,
    });
  }),

  // Mutations take `idempotencyKey` (api/graphql/idempotency.ts), after the rate limit as REST's header.

  /** POST /payments (100 calls a minute per key): the body's checks, then the key, then creation. */
  createPayment: field(async (args: { input: Record<string, unknown> } & Keyed, ctx) => {
    await countCall(ctx.deps, "createPayment", ctx);
    // The key's use goes on the payment: a retry after a crash finds it (modules/payments/create.ts).
    return idempotentField(ctx, "createPayment", args, (use) =>
      createPayment(ctx.deps, ctx.caller, { ...args.input }, { idempotency: use }),
    );
  }, "Failed to create payment"),

  /** POST /v1/payments/{paymentId}/withdraw. */
  withdrawPayment: field(async (args: { paymentId: string } & Keyed, ctx) =>
    idempotentField(ctx, "withdrawPayment", args, () => withdrawPayment(ctx.deps, ctx.caller, args.paymentId)),
  ),

  /** POST /v1/payments/{paymentId}/cancel. */
  cancelPayment: field(async (args: { paymentId: string } & Keyed, ctx) =>
    idempotentField(ctx, "cancelPayment", args, () => cancelPayment(ctx.deps, ctx.caller, args.paymentId)),
  ),

  /** POST /v1/payments/{paymentId}/recover (body `{token}`). */
  recoverFunds: field(async (args: { paymentId: string; token: string } & Keyed, ctx) => {
    await countCall(ctx.deps, "recoverFunds", ctx);
    return idempotentField(ctx, "recoverFunds", args, () => recoverFunds(ctx.deps, ctx.caller, args.paymentId, { token: args.token }));
  }),
};
