import { sanctionsHolds, sanctionsReturns } from "./schema.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

// The transitions of the sanctions module's tables (docs/sanctions.md): holds and the returns of held funds. Each
// status change goes through one of them, with its audit row (`sanctions_hold_events`, `sanctions_return_events`) in
// the caller's transaction. A hold's decision also has its own audit row, by whom and why (`sanctions_actions`).

export type HoldStatus =
  /** A sanctions source flagged the subject's sender: it neither settles nor is recovered until the operator decides. */
  | "held"
  /** The operator lets it settle (also written at once, then moved to itself, when they accept unidentified senders). */
  | "released"
  /** The operator decided it never settles here; its funds stay where they are until returned. */
  | "rejected"
  /** A held vault deposit whose transfer a re-org took away (closed by `system`). */
  | "dropped"
  /** Its funds were sent to an address the operator named: a return completed. */
  | "returned";

/** Decided once (released, rejected or dropped), except that the funds of a rejected hold may still be returned. */
export const HOLD_MOVES: Moves<HoldStatus> = {
  held: ["released", "rejected", "dropped", "returned"],
  released: [],
  rejected: ["returned"],
  dropped: [],
  returned: [],
};

export type ReturnStatus =
  /** Signed and stored, before broadcast (the settler sends the same bytes until the node has them). */
  | "signed"
  /** The node accepted the bytes. */
  | "sent"
  /** In a block, succeeded or reverted: its outcome is taken only at the chain's finality depth. */
  | "mined"
  /** Final and indexed: the funds left, the hold is `returned`. */
  | "completed"
  /** Reverted at finality: nothing moved (the operator may return again). */
  | "reverted"
  /** Its nonce went to another transaction: nothing moved (the operator may return again). */
  | "dropped";

/** `signed` → `sent` → `mined` → `completed` or `reverted`; `dropped` before it mines; a re-org takes `mined` back to `sent`. */
export const RETURN_MOVES: Moves<ReturnStatus> = {
  signed: ["sent", "mined", "dropped"],
  sent: ["mined", "dropped"],
  mined: ["sent", "reverted", "completed"],
  completed: [],
  reverted: [],
  dropped: [],
};

/** The one place a hold changes status, with its audit row in `sanctions_hold_events` (db/status-machine.ts). */
export const transitionHold = statusMachine<{ id: string; status: HoldStatus }, HoldStatus, typeof sanctionsHolds>({
  table: sanctionsHolds,
  audit: "sanctions_hold_events",
  subject: "hold_id",
  moves: HOLD_MOVES,
});

/** The one place a return changes status, with its audit row in `sanctions_return_events` (db/status-machine.ts). */
export const transitionReturn = statusMachine<{ id: string; status: ReturnStatus }, ReturnStatus, typeof sanctionsReturns>({
  table: sanctionsReturns,
  audit: "sanctions_return_events",
  subject: "return_id",
  moves: RETURN_MOVES,
});
