import { agentWithdrawals } from "./schema.js";
import { statusMachine, type Moves } from "../../db/status-machine.js";

export const WITHDRAWAL_STATUSES = ["requested", "signed", "sent", "mined", "reverted", "paid", "failed"] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/**
 * `requested` → `signed` → `sent` → `mined` → `paid`, or `reverted` → `failed`. A dropped transaction goes back to
 * `requested`; a re-org takes `mined` or `reverted` back to `sent`, or moves it to the other outcome or another block
 * (docs/agents.md, "Paying withdrawals").
 */
export const WITHDRAWAL_MOVES: Moves<WithdrawalStatus> = {
  requested: ["signed"],
  signed: ["sent", "mined", "reverted", "requested"],
  sent: ["mined", "reverted", "requested"],
  mined: ["paid", "sent", "reverted"],
  reverted: ["failed", "sent", "mined"],
  paid: [],
  failed: [],
};

/** The one place a withdrawal changes status, with its audit row in `agent_withdrawal_events` (db/status-machine.ts). */
export const transitionWithdrawal = statusMachine<{ id: string; status: WithdrawalStatus }, WithdrawalStatus, typeof agentWithdrawals>({
  table: agentWithdrawals,
  audit: "agent_withdrawal_events",
  subject: "withdrawal_id",
  moves: WITHDRAWAL_MOVES,
});
