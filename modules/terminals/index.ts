// The terminals module's one door: other code imports only this file.
export { type Cashier, createCashier, deleteCashier, listCashiers } from "./cashiers.js";
export { POS_COOKIE, posLogin, posLogout, posSession, type PosSession, posTerminal, type PosTerminal } from "./pos-sessions.js";
export { type PosToken, servedTokens, terminalTokens, tokenKey } from "./terminal-settings.js";
export {
  type CashierAccess,
  createTerminal,
  deleteTerminal,
  deleteTerminalById,
  getTerminal,
  listTerminals,
  type Terminal,
  terminalCodeOf,
  type TerminalInput,
  updateTerminal,
} from "./terminals.js";
