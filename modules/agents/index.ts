// The agents module's one door: other code imports only this file.
export {
  type Agent,
  agentByReferralCode,
  agentOfCaller,
  agentTermsOf,
  attachMerchant,
  createAgent,
  findAgent,
  NOT_AN_AGENT,
  requireAgent,
  setAgentTerms,
  updateAgent,
} from "./agents.js";
export { agentWithdrawalBody, updateAgentBody } from "./bodies.js";
export {
  accrueAgentEarnings,
  type AgentBalance,
  agentBalances,
  type ReferredMerchant,
  referredMerchants,
  USD_CURRENCY,
} from "./earnings.js";
export { agentPayoutAccount, PAYOUT_ALERT_ATTEMPTS, payoutBacklog, payoutFundingWarning } from "./payout-wallet.js";
export {
  type AgentWithdrawal,
  listWithdrawals,
  NO_PAYOUT_ADDRESS,
  NOTHING_TO_WITHDRAW,
  payAgentWithdrawals,
  requestWithdrawal,
} from "./withdrawals.js";
export { transitionWithdrawal, WITHDRAWAL_MOVES, WITHDRAWAL_STATUSES, type WithdrawalStatus } from "./transition.js";
