import { erc20Abi, formatUnits, getAddress, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { remoteSignerOf } from "../../chains/remote-signer.js";
import type pg from "pg";
import type { Config } from "../../core/config.js";

type Q = Pick<pg.Pool, "query">;

/**
 * The wallet that pays agents' withdrawals: AGENT_PAYOUT_PRIVATE_KEY, else the settler's key. It must hold the tokens
 * it pays out: the agents' shares are taken from payments into FEE_RECIPIENT (and Gas Tank fees into
 * TREASURY_ADDRESS), so the wallet is funded by itself only when it is that address (as on the local stack).
 *
 * @example
 * const account = agentPayoutAccount(deps.config); // the account the agent-payouts processor signs with
 */
export function agentPayoutAccount(
  config: Pick<Config, "AGENT_PAYOUT_PRIVATE_KEY" | "SETTLER_PRIVATE_KEY" | "SIGNER_URL" | "SIGNER_ADDRESS">,
): LocalAccount {
  if (config.AGENT_PAYOUT_PRIVATE_KEY) return privateKeyToAccount(config.AGENT_PAYOUT_PRIVATE_KEY as Hex);
  // The settler's: its remote signer when it has one (chains/remote-signer.ts), else its key.
  const remote = remoteSignerOf(config);
  if (remote) return remote;
  if (!config.SETTLER_PRIVATE_KEY) throw new Error("AGENT_PAYOUT_PRIVATE_KEY and SETTLER_PRIVATE_KEY are not set");
  return privateKeyToAccount(config.SETTLER_PRIVATE_KEY as Hex);
}

/**
 * Why the payout wallet cannot pay a withdrawal now (it holds less of the token than the amount), or null. Read
 * before anything is signed, so the withdrawal, the agent and health say what is missing rather than a revert.
 */
export async function payoutShortfall(
  client: PublicClient,
  wallet: Address,
  w: { token_address: string; units: string; decimals: number; symbol: string },
): Promise<string | null> {
  const units = BigInt(w.units);
  const native = w.token_address.toLowerCase() === zeroAddress;
  const held = native
    ? await client.getBalance({ address: wallet })
    : await client.readContract({ address: getAddress(w.token_address), abi: erc20Abi, functionName: "balanceOf", args: [wallet] });
  if (held >= units) return null;
  return `the payout wallet ${wallet} holds ${formatUnits(held, w.decimals)} ${w.symbol}, the withdrawal is ${formatUnits(units, w.decimals)}`;
}

/** A withdrawal that failed to send this many times in a row (the second try comes 5 s after the first) turns health degraded. */
export const PAYOUT_ALERT_ATTEMPTS = 2;

export type PayoutBacklog = {
  /** Withdrawals not sent yet (`requested`). */
  waiting: number;
  /** Of those, the ones that failed to send PAYOUT_ALERT_ATTEMPTS times or more. */
  stuck: number;
  oldestRequestedAt: number | null;
  /** The latest reason one could not be sent. */
  lastError: string | null;
};

/**
 * Agent withdrawals waiting to be sent, for GET /api/health (api/routes/health.ts): a payout wallet short of a token or
 * of gas stalls them, and that is the operator's to fix.
 */
export async function payoutBacklog(db: Q): Promise<PayoutBacklog> {
  const { rows } = await db.query<{ waiting: number; stuck: number; oldest: Date | null; last_error: string | null }>(
    `SELECT count(*)::int AS waiting, count(*) FILTER (WHERE attempts >= $1)::int AS stuck, min(created_at) AS oldest,
            (SELECT error FROM agent_withdrawals WHERE status = 'requested' AND error IS NOT NULL ORDER BY updated_at DESC LIMIT 1) AS last_error
       FROM agent_withdrawals WHERE status = 'requested'`,
    [PAYOUT_ALERT_ATTEMPTS],
  );
  const r = rows[0]!;
  return { waiting: r.waiting, stuck: r.stuck, oldestRequestedAt: r.oldest ? r.oldest.getTime() : null, lastError: r.last_error };
}

/**
 * A warning for the start log when the payout wallet receives none of the money it pays out (neither FEE_RECIPIENT
 * nor TREASURY_ADDRESS): the operator must fund it, or withdrawals wait. Null when it is funded by fees or no key is set.
 */
export function payoutFundingWarning(
  config: Pick<Config, "AGENT_PAYOUT_PRIVATE_KEY" | "SETTLER_PRIVATE_KEY" | "FEE_RECIPIENT" | "TREASURY_ADDRESS">,
): string | null {
  if (!config.AGENT_PAYOUT_PRIVATE_KEY && !config.SETTLER_PRIVATE_KEY) return null;
  const wallet = agentPayoutAccount(config).address.toLowerCase();
  // Unset FEE_RECIPIENT means the settler's own address receives the fees (modules/settlement/send.ts).
  const feeRecipient = (config.FEE_RECIPIENT ?? privateKeyToAccount(config.SETTLER_PRIVATE_KEY as Hex).address).toLowerCase();
  // Gas Tank wallets pay out to TREASURY_ADDRESS ?? FEE_RECIPIENT (modules/gas-tank/addresses.ts); neither: no Gas Tank.
  const treasury = (config.TREASURY_ADDRESS ?? config.FEE_RECIPIENT ?? wallet).toLowerCase();
  if (wallet === feeRecipient && wallet === treasury) return null;
  const missing = [wallet !== feeRecipient && "token fees (FEE_RECIPIENT)", wallet !== treasury && "Gas Tank fees (TREASURY_ADDRESS)"]
    .filter(Boolean)
    .join(" and ");
  return `agent withdrawals are paid from ${getAddress(wallet)}, which does not receive the ${missing}: keep it funded with the tokens agents withdraw and with gas, or withdrawals wait (GET /api/health says so)`;
}
