import { fundRecoveries } from "./schema.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

// The transitions of the payments module's tables other than `payments` itself (whose transition() is
// state-machine.ts): recoveries of unexpected funds.

export type RecoveryStatus = "requested" | "signed" | "sent" | "mined" | "recovered" | "failed";

/**
 * A recovery (docs/unexpected-funds.md): `requested` → `signed` → `sent` → `mined` → `recovered` once its Swept event
 * is indexed; `failed` when it cannot execute, reverts, is refused (nothing left, Gas Tank short) or sanctions
 * screening rejects or returns its funds; a dropped transaction goes back to `requested`.
 */
export const RECOVERY_MOVES: Moves<RecoveryStatus> = {
  requested: ["signed", "failed"],
  signed: ["sent", "mined", "failed", "requested"],
  sent: ["mined", "failed", "requested"],
  mined: ["recovered"],
  recovered: [],
  failed: [],
};

/** The one place a recovery changes status, with its audit row in `fund_recovery_events` (db/status-machine.ts). */
export const transitionRecovery = statusMachine<{ id: string; status: RecoveryStatus }, RecoveryStatus, typeof fundRecoveries>({
  table: fundRecoveries,
  audit: "fund_recovery_events",
  subject: "recovery_id",
  moves: RECOVERY_MOVES,
});
