// The gas-tank module's one door: other code imports only this file.
export { belowAlert, gasTankAlert, lowGasTank, parseAlertThreshold, setGasTankAlert } from "./alert.js";
export { getBalance } from "./balance.js";
export { creditConfirmedDeposits } from "./credit.js";
export { type LedgerEntryView, ledgerPage, settlementSpendSince } from "./history.js";
export {
  chargeSettlementGas,
  debitRecoveryFee,
  debitSettlementFee,
  debitVaultSweepFee,
  gasTankBalance,
  latestLedgerEntryId,
  refundRecoveryFee,
  refundSettlementFee,
  refundVaultSweepFee,
  settlementFeeCharged,
} from "./ledger.js";
export { runway, type Runway, RUNWAY_WINDOW_DAYS } from "./runway.js";
export { GAS_TANK_DECIMALS, usdt } from "./usdt.js";
export { gasTankView } from "./view.js";
