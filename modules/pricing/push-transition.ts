import { statusMachine, type Moves } from "../../db/status-machine.js";
import { oraclePushes } from "./schema.js";

export type PushStatus = "signed" | "sent" | "mined" | "reverted" | "dropped";

/** A price push (`oracle_pushes`): as a settlement, a mined one a re-org took away is `sent` again (its stored bytes). */
export const PUSH_MOVES: Moves<PushStatus> = {
  signed: ["sent", "mined", "reverted", "dropped"],
  sent: ["mined", "reverted", "dropped"],
  mined: ["sent"],
  reverted: [],
  dropped: [],
};

/** The one place a price push changes status, with its audit row in `oracle_push_events`. */
export const transitionPush = statusMachine<{ id: string; status: PushStatus }, PushStatus, typeof oraclePushes>({
  table: oraclePushes,
  audit: "oracle_push_events",
  subject: "push_id",
  moves: PUSH_MOVES,
});
