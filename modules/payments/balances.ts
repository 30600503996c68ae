import { erc20Abi, multicall3Abi, zeroAddress, type Address } from "viem";
import { moneyBlock } from "../../chains/money-block.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";

/** Addresses per Multicall3 call: ~4k gas each (~30k for a token's balanceOf), far below any node's eth_call gas cap. */
const BALANCES_PER_CALL = 1000;

/** A deposit wallet and the asset it is watched for (`zeroAddress`: the native coin). */
export type WalletAsset = { address: Address; token: Address };

/**
 * Balances of deposit wallets on the canonical chain at `blockNumber`, else at moneyBlock (the node's head, never below
 * the indexer's block; a lagging provider answers "latest" with an older state, where a counted deposit seems gone:
 * pinned, it fails there and another answers):
 * one Multicall3 batch per 1000 wallets, ERC-20 `balanceOf` and native `getEthBalance` alike. A wallet
 * the batch could not read (no Multicall3 at that block, a token that reverts) is read alone.
 *
 * The node's answer, not the indexer's: what settlement and re-org checks trust before money moves.
 *
 * @example
 * const [usdt, pol] = await walletBalances(deps, chain, [
 *   { address: p1.recipient_address, token: usdtAddress },
 *   { address: p2.recipient_address, token: zeroAddress },
 * ]);
 */
export async function walletBalances(deps: AppDeps, chain: ActiveChain, wallets: WalletAsset[], blockNumber?: bigint): Promise<bigint[]> {
  if (!wallets.length) return [];
  const client = deps.clients.get(chain.chainId)!;
  const at = blockNumber ?? (await moneyBlock(deps.db, client, chain.chainId));
  const calls = wallets.map((w) =>
    w.token.toLowerCase() === zeroAddress
      ? ({ address: chain.multicall3, abi: multicall3Abi, functionName: "getEthBalance", args: [w.address] } as const)
      : ({ address: w.token, abi: erc20Abi, functionName: "balanceOf", args: [w.address] } as const),
  );
  const results = await client.multicall({
    contracts: calls,
    multicallAddress: chain.multicall3,
    blockNumber: at,
    allowFailure: true,
    // viem splits by calldata bytes; both calls carry 36 bytes of calldata.
    batchSize: 36 * BALANCES_PER_CALL,
  });
  const out: bigint[] = [];
  for (const [i, r] of results.entries()) {
    if (r.status === "success") out.push(r.result as bigint);
    else {
      const w = wallets[i]!;
      out.push(
        w.token.toLowerCase() === zeroAddress
          ? await client.getBalance({ address: w.address, blockNumber: at })
          : await client.readContract({ address: w.token, abi: erc20Abi, functionName: "balanceOf", args: [w.address], blockNumber: at }),
      );
    }
  }
  return out;
}

/** Native balances of `addresses` at `blockNumber` (see walletBalances). */
export function nativeBalances(deps: AppDeps, chain: ActiveChain, addresses: Address[], blockNumber: bigint): Promise<bigint[]> {
  return walletBalances(
    deps,
    chain,
    addresses.map((address) => ({ address, token: zeroAddress })),
    blockNumber,
  );
}
