import { sql } from "drizzle-orm";
import { bigserial, check, index, integer, primaryKey, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { statusEvents, ts, units } from "../../db/columns.js";
import { fundRecoveries, payments } from "../payments/schema.js";
import { vaultDeposits } from "../vault/schema.js";

// The sanctions module's tables: only this module writes them (other modules read them through its index.ts).

/**
 * Sanctions screening (modules/sanctions, docs/sanctions.md): one row per payment, recovery of unexpected funds or
 * vault deposit held because a sanctions source flagged its sender: the positive result kept for audit (`address`,
 * `source`: `oracle:0x…` or `list:<file>`), and the status the subject was taken from (a payment: `paid`,
 * `deploying_wallet` or `withdraw_request`; a recovery: `requested`). held -> released (the operator lets it settle;
 * that address is not screened again for that payment) or rejected (it never settles here; no funds move), or
 * dropped (a held vault deposit's transfer was rolled back by a re-org); held or rejected -> returned (the operator sent
 * the funds to an address of their choice: sanctions_returns). A released row with the zero address and
 * source `unidentified` is the operator's acceptance of senders that could not be identified (native coin).
 */
export const sanctionsHolds = pgTable(
  "sanctions_holds",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** `payment`, `recovery` or `vault_deposit`. */
    subject: text("subject").notNull(),
    /** The payment; also set for a recovery (the recovery's payment). */
    paymentId: uuid("payment_id").references(() => payments.id),
    recoveryId: uuid("recovery_id").references(() => fundRecoveries.id),
    depositId: uuid("deposit_id").references(() => vaultDeposits.id),
    chainId: integer("chain_id").notNull(),
    /** The flagged sender, lowercase. */
    address: text("address").notNull(),
    source: text("source").notNull(),
    fromStatus: text("from_status").notNull(),
    status: text("status").notNull().default("held"), // held | released | rejected | dropped | returned
    createdAt: ts("created_at").notNull().defaultNow(),
    resolvedAt: ts("resolved_at"),
  },
  (t) => [
    check(
      "sanctions_holds_subject",
      sql`(subject = 'payment' AND payment_id IS NOT NULL AND recovery_id IS NULL AND deposit_id IS NULL) OR (subject = 'recovery' AND recovery_id IS NOT NULL AND payment_id IS NOT NULL AND deposit_id IS NULL) OR (subject = 'vault_deposit' AND deposit_id IS NOT NULL AND payment_id IS NULL AND recovery_id IS NULL)`,
    ),
    check("sanctions_holds_status", sql`status IN ('held', 'released', 'rejected', 'dropped', 'returned')`),
    check("sanctions_holds_address_lowercase", sql`address = lower(address)`),
    uniqueIndex("sanctions_holds_open_payment_idx")
      .on(t.paymentId)
      .where(sql`status = 'held' AND subject = 'payment'`),
    uniqueIndex("sanctions_holds_open_recovery_idx")
      .on(t.recoveryId)
      .where(sql`status = 'held' AND recovery_id IS NOT NULL`),
    uniqueIndex("sanctions_holds_open_deposit_idx")
      .on(t.depositId)
      .where(sql`status = 'held' AND deposit_id IS NOT NULL`),
    index("sanctions_holds_payment_idx")
      .on(t.paymentId)
      .where(sql`payment_id IS NOT NULL`),
    index("sanctions_holds_deposit_idx")
      .on(t.depositId)
      .where(sql`deposit_id IS NOT NULL`),
    index("sanctions_holds_held_idx")
      .on(t.createdAt)
      .where(sql`status = 'held'`),
  ],
);

/** One row per change of a hold's status (modules/sanctions/transition.ts). */
export const sanctionsHoldEvents = statusEvents("sanctions_hold_events", { column: "hold_id", references: () => sanctionsHolds.id });

/**
 * Every decision on a hold (`release`, `reject` by the operator; `drop` by `system` when a held deposit is re-orged
 * away): who, why, when, written with the subject's transition.
 */
export const sanctionsActions = pgTable(
  "sanctions_actions",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    holdId: uuid("hold_id")
      .notNull()
      .references(() => sanctionsHolds.id),
    action: text("action").notNull(),
    actor: text("actor").notNull(),
    reason: text("reason").notNull(),
    /** The payment's, recovery's or deposit's status before and after. */
    subjectFrom: text("subject_from").notNull(),
    subjectTo: text("subject_to").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    check("sanctions_actions_action", sql`action IN ('release', 'reject', 'drop', 'return')`),
    check("sanctions_actions_reason", sql`length(btrim(reason)) > 0`),
    check("sanctions_actions_actor", sql`length(btrim(actor)) > 0`),
    index("sanctions_actions_hold_idx").on(t.holdId),
  ],
);

/**
 * A return of held funds (`sanctions return`, modules/sanctions/return.ts): the factory owner's `returnFunds`
 * transaction sending `amount_units` of `token` (zero address: native coin) from the held subject's deposit address to
 * `to_address`, stored with its signed bytes before broadcast. signed -> sent -> mined -> completed (final and indexed:
 * the hold becomes `returned`), or reverted / dropped (nothing moved). At most one open (signed, sent, mined) per hold.
 * `licence`: the operator's reference when `to_address` is itself flagged. Addresses lowercase.
 */
export const sanctionsReturns = pgTable(
  "sanctions_returns",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    holdId: uuid("hold_id")
      .notNull()
      .references(() => sanctionsHolds.id),
    chainId: integer("chain_id").notNull(),
    wallet: text("wallet").notNull(),
    token: text("token").notNull(),
    toAddress: text("to_address").notNull(),
    amountUnits: units("amount_units").notNull(),
    licence: text("licence"),
    actor: text("actor").notNull(),
    reason: text("reason").notNull(),
    status: text("status").notNull().default("signed"), // signed | sent | mined | completed | reverted | dropped
    signer: text("signer").notNull(),
    nonce: integer("nonce").notNull(),
    txHash: text("tx_hash").notNull().unique(),
    rawTx: text("raw_tx").notNull(),
    blockNumber: units("block_number"),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    check("sanctions_returns_status", sql`status IN ('signed', 'sent', 'mined', 'completed', 'reverted', 'dropped')`),
    check("sanctions_returns_amount_positive", sql`amount_units > 0`),
    check(
      "sanctions_returns_lowercase",
      sql`wallet = lower(wallet) AND token = lower(token) AND to_address = lower(to_address) AND signer = lower(signer)`,
    ),
    check("sanctions_returns_reason", sql`length(btrim(reason)) > 0`),
    check("sanctions_returns_actor", sql`length(btrim(actor)) > 0`),
    uniqueIndex("sanctions_returns_open_idx")
      .on(t.holdId)
      .where(sql`status IN ('signed', 'sent', 'mined')`),
    index("sanctions_returns_chain_open_idx")
      .on(t.chainId, t.nonce)
      .where(sql`status IN ('signed', 'sent', 'mined')`),
    index("sanctions_returns_hold_idx").on(t.holdId),
  ],
);

/** One row per change of a return's status (modules/sanctions/transition.ts). */
export const sanctionsReturnEvents = statusEvents("sanctions_return_events", {
  column: "return_id",
  references: () => sanctionsReturns.id,
});

/**
 * A payment or recovery whose screening could not finish (`unavailable`: a source did not answer; `unidentified`:
 * a native-coin sender could not be identified) and waits under SANCTIONS_FAIL_MODE=closed: the settler leaves it
 * out until `retry_at` (a backoff, so stuck rows neither cost a search every pass nor starve newer ones). Deleted
 * once it is screened (clear or held) or released by the operator; shown by `sanctions list`.
 */
export const sanctionsScreenings = pgTable(
  "sanctions_screenings",
  {
    /** `payment` or `recovery`. */
    subject: text("subject").notNull(),
    subjectId: uuid("subject_id").notNull(),
    paymentId: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    chainId: integer("chain_id").notNull(),
    kind: text("kind").notNull(), // unavailable | unidentified
    reason: text("reason").notNull(),
    attempts: integer("attempts").notNull().default(1),
    firstAt: ts("first_at").notNull(),
    lastAt: ts("last_at").notNull(),
    retryAt: ts("retry_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "sanctions_screenings_pk", columns: [t.subject, t.subjectId] }),
    check("sanctions_screenings_subject", sql`subject IN ('payment', 'recovery')`),
    check("sanctions_screenings_kind", sql`kind IN ('unavailable', 'unidentified')`),
    index("sanctions_screenings_payment_idx").on(t.paymentId),
  ],
);
