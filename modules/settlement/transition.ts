import { settlements } from "./schema.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

export type SettlementStatus = "signed" | "sent" | "mined" | "reverted" | "dropped";

/**
 * A settlement transaction: `signed` → `sent` → `mined` or `reverted`; `dropped` when its nonce went to another
 * transaction. A mined one whose block a re-org took away is `sent` again (the same bytes), and may then mine
 * elsewhere, revert, or be dropped.
 */
export const SETTLEMENT_MOVES: Moves<SettlementStatus> = {
  signed: ["sent", "mined", "reverted", "dropped"],
  sent: ["mined", "reverted", "dropped"],
  mined: ["sent", "reverted", "dropped"],
  reverted: [],
  dropped: [],
};

/** The one place a settlement changes status, with its audit row in `settlement_events` (db/status-machine.ts). */
export const transitionSettlement = statusMachine<{ id: string; status: SettlementStatus }, SettlementStatus, typeof settlements>({
  table: settlements,
  audit: "settlement_events",
  subject: "settlement_id",
  moves: SETTLEMENT_MOVES,
});
