import { createWalletClient, http as viemHttp, parseAbi, type Address } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { expect } from "vitest";
import { sanctionsOracleAbi } from "../../abis/SanctionsOracle.js";
import { viemChain } from "../../chains/clients.js";
import type { ActiveChain } from "../../chains/runtime.js";
import type { Db } from "../../db/client.js";
import { LOCAL_ROLES } from "../../local/accounts.js";
import { chainHelpers } from "./chain.js";
import { asDeployer } from "./deployer-lock.js";

// What the sanctions tests (test/modules/sanctions/) share: flagging on the local oracle (contracts/SanctionsOracle.sol, owned
// by the shared deployer), native coin sent through a contract (an internal transfer, whose sender screening cannot
// identify), and the rows screening writes (sanctions_holds, sanctions_actions, sanctions_screenings).

/**
 * The oracle's owner (the local deployer, shared by parallel test files: one sender at a time) flags `who`, on the
 * run's shared chain (1 s interval mining: waits for the receipt). Checked by reading the oracle back.
 */
export async function flagOnOracle(db: Db, chain: ActiveChain, ...who: Address[]): Promise<void> {
  const h = chainHelpers(chain);
  const owner = createWalletClient({ chain: viemChain(chain), transport: viemHttp(chain.rpcUrl), account: LOCAL_ROLES.deployer });
  await asDeployer(db, async () => {
    const hash = await owner.writeContract({
      address: chain.sanctionsOracle!,
      abi: sanctionsOracleAbi,
      functionName: "addToSanctionsList",
      args: [who],
    });
    await h.wait(hash);
  });
  for (const a of who)
    expect(
      await h.pub.readContract({ address: chain.sanctionsOracle!, abi: sanctionsOracleAbi, functionName: "isSanctioned", args: [a] }),
    ).toBe(true);
}

/** Multicall3's payable entry point: it forwards each call's `value` with an internal CALL. */
const multicall3ValueAbi = parseAbi([
  "struct Call3Value { address target; bool allowFailure; uint256 value; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  "function aggregate3Value(Call3Value[] calls) payable returns (Result[] returnData)",
]);

/**
 * `payer` sends `value` of the native coin to `to` through a contract: the transaction goes to Multicall3 (placed on
 * every local chain at the chain's `multicall3` address, local/deploy.ts), which forwards the coin with an internal
 * call. No transaction is addressed to `to`, so the coin's sender cannot be identified from the chain's blocks.
 */
export async function sendNativeThroughContract(chain: ActiveChain, to: Address, value: bigint, payer: PrivateKeyAccount) {
  const h = chainHelpers(chain);
  const hash = await h.walletOf(payer).writeContract({
    address: chain.multicall3,
    abi: multicall3ValueAbi,
    functionName: "aggregate3Value",
    args: [[{ target: to, allowFailure: false, value, callData: "0x" }]],
    value,
  });
  const receipt = await h.wait(hash);
  // What the tests rely on: no transaction of the block (other files' included) is addressed to `to`.
  const block = await h.pub.getBlock({ blockNumber: receipt.blockNumber, includeTransactions: true });
  expect(block.transactions.filter((tx) => tx.to?.toLowerCase() === to.toLowerCase()).map((tx) => tx.hash)).toEqual([]);
  return receipt;
}

type Column = "payment_id" | "recovery_id" | "deposit_id";

/** The sanctions rows of one subject, oldest first, with the columns the tests assert. */
export function sanctionsRows(db: Db) {
  const pool = db.pool;
  return {
    async holds(column: Column, id: string) {
      const { rows } = await pool.query(
        `SELECT subject, address, source, from_status, status FROM sanctions_holds WHERE ${column} = $1 ORDER BY created_at, id`,
        [id],
      );
      return rows;
    },
    async actions(column: Column, id: string) {
      const { rows } = await pool.query(
        `SELECT a.action, a.actor, a.reason, a.subject_from, a.subject_to FROM sanctions_actions a
           JOIN sanctions_holds h ON h.id = a.hold_id WHERE h.${column} = $1 ORDER BY a.id`,
        [id],
      );
      return rows;
    },
    /** The payment's wait (`sanctions_screenings`), times in ms; undefined when it does not wait. */
    async wait(paymentId: string) {
      const { rows } = await pool.query(
        `SELECT kind, reason, attempts, first_at, last_at, retry_at FROM sanctions_screenings WHERE subject = 'payment' AND subject_id = $1`,
        [paymentId],
      );
      const r = rows[0];
      if (!r) return undefined;
      return {
        kind: r.kind as string,
        reason: r.reason as string,
        attempts: r.attempts as number,
        firstAt: (r.first_at as Date).getTime(),
        lastAt: (r.last_at as Date).getTime(),
        retryAt: (r.retry_at as Date).getTime(),
      };
    },
  };
}
