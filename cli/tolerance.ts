import type { ActiveChain } from "../chains/runtime.js";
import { Invalid } from "../core/errors.js";
import type { Db } from "../db/client.js";
import { getUnderpaymentTolerance, putUnderpaymentTolerance, type UnderpaymentTolerance } from "../modules/merchants/index.js";

// The operator's view of a merchant's underpayment tolerance (cli/index.ts; docs/payments.md "Underpayment tolerance"):
//   merchant tolerance --merchant <id>                                       shows it
//   merchant tolerance --merchant <id> --bps <0-500>                         sets the share of the amount due
//   merchant tolerance --merchant <id> --chain <id> --token <addr> --amount <decimal|0>   sets (0: removes) one token's amount
// The change goes through the same checks as PUT /v1/settings/underpayment-tolerance; payments already created keep theirs.

export const TOLERANCE_USAGE = `  merchant tolerance --merchant <merchantId> [--bps <0-500>] [--chain <chainId> --token <address> --amount <decimal>]
      (underpayment tolerance: shown without options; --amount 0 removes the token's absolute amount; new payments only)`;

export async function cliTolerance(
  db: Db,
  chains: ActiveChain[],
  o: { merchantId: string; bps?: string; chain?: string; token?: string; amount?: string },
): Promise<UnderpaymentTolerance> {
  const deps = { db, now: Date.now, chains };
  const caller = { merchantId: o.merchantId };
  const current = await getUnderpaymentTolerance(deps, caller);
  const byToken = o.chain !== undefined || o.token !== undefined || o.amount !== undefined;
  if (o.bps === undefined && !byToken) return current;
  if (byToken && (o.chain === undefined || o.token === undefined || o.amount === undefined))
    throw new Invalid("--chain, --token and --amount go together");
  const amounts = current.amounts
    .filter((a) => !(byToken && a.chainId === o.chain && a.token.toLowerCase() === o.token!.toLowerCase()))
    .map(({ chainId, token, amount }) => ({ chainId, token, amount }));
  // A zero amount removes the token's entry; anything else is checked by the module like the API's body.
  if (byToken && !/^0+(\.0+)?$/.test(o.amount!)) amounts.push({ chainId: o.chain!, token: o.token!, amount: o.amount! });
  const bps = o.bps === undefined ? current.bps : /^\d+$/.test(o.bps) ? Number(o.bps) : o.bps;
  return putUnderpaymentTolerance(deps, caller, { bps, amounts });
}
