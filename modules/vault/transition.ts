import { vaultSweeps } from "../../db/schema.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

export type SweepStatus = "signed" | "sent" | "mined" | "completed" | "reverted" | "dropped";

/**
 * A Vault sweep transaction: `signed` → `sent` → `mined` → `completed` (its Swept events indexed and its deposits
 * completed), or `reverted` (its deposits fail), or `dropped` (its nonce went to another transaction; its deposits
 * wait for the next sweep).
 */
export const SWEEP_MOVES: Moves<SweepStatus> = {
  signed: ["sent", "mined", "reverted", "dropped"],
  sent: ["mined", "reverted", "dropped"],
  mined: ["completed"],
  completed: [],
  reverted: [],
  dropped: [],
};

/** The one place a Vault sweep changes status, with its audit row in `vault_sweep_events` (db/status-machine.ts). */
export const transitionSweep = statusMachine<{ id: string; status: SweepStatus }, SweepStatus, typeof vaultSweeps>({
  table: vaultSweeps,
  audit: "vault_sweep_events",
  subject: "sweep_id",
  moves: SWEEP_MOVES,
});
