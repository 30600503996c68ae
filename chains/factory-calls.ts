import { encodeFunctionData, getAddress, zeroAddress, type Hex } from "viem";
import { walletFactoryAbi } from "../abis/WalletFactory.js";

/** One wallet to deploy (if needed) and sweep: the whole balance of `token` to `payout`, `fee` of it to `feeRecipient`. */
export type SweepRequest = { salt: Hex; payout: Hex; token: Hex; fee: bigint; feeRecipient: Hex };

/** The batch argument of `deployAndSweepBatch`: requests grouped by (token, fee recipient). */
export type SweepGroup = { token: Hex; feeRecipient: Hex; sweeps: { salt: Hex; payout: Hex; fee: bigint }[] };

/**
 * Calldata for the factory: `deployAndSweep` for one wallet (it pays the payout and the fee recipient straight from
 * the wallet), the atomic `deployAndSweepBatch` for several (the wallets are swept to the factory, which pays each
 * merchant and fee recipient once per run: see `groupForBatch`).
 *
 * @example
 * const data = encodeSweep([{ salt, payout, token, fee: 0n, feeRecipient: zeroAddress }]);
 */
export function encodeSweep(requests: readonly SweepRequest[]): Hex {
  if (requests.length === 1) {
    const r = requests[0]!;
    return encodeFunctionData({
      abi: walletFactoryAbi,
      functionName: "deployAndSweep",
      args: [r.salt, r.payout, r.token, r.fee, r.feeRecipient],
    });
  }
  return encodeFunctionData({ abi: walletFactoryAbi, functionName: "deployAndSweepBatch", args: [groupForBatch(requests)] });
}

/**
 * Requests grouped by (token, fee recipient), each token named once; groups ordered by token, with the native coin
 * last (its payouts may run code), and each group's sweeps by payout. The factory pays a (token, payout) or a (token,
 * fee recipient) once per run of consecutive wallets sharing it, so this order pays each merchant and each fee
 * recipient once per token and batch (a merchant whose wallets name several fee recipients: once per group).
 * Addresses are compared case-insensitively; the requests' own values are passed on (the Swept events repeat them).
 */
export function groupForBatch(requests: readonly SweepRequest[]): SweepGroup[] {
  const groups = new Map<string, SweepGroup>();
  for (const r of requests) {
    const key = `${r.token.toLowerCase()}:${r.feeRecipient.toLowerCase()}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { token: r.token, feeRecipient: r.feeRecipient, sweeps: [] }));
    g.sweeps.push({ salt: r.salt, payout: r.payout, fee: r.fee });
  }
  const order = (g: SweepGroup) =>
    `${getAddress(g.token) === zeroAddress ? 1 : 0}:${g.token.toLowerCase()}:${g.feeRecipient.toLowerCase()}`;
  const sorted = [...groups.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  // Array.prototype.sort is stable: wallets of one payout keep the requests' order.
  for (const g of sorted)
    g.sweeps.sort((a, b) =>
      a.payout.toLowerCase() < b.payout.toLowerCase() ? -1 : a.payout.toLowerCase() > b.payout.toLowerCase() ? 1 : 0,
    );
  return sorted;
}
