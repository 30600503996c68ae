/**
 * The most gas each operation the service pays for may cost (`gasCap` of the transaction sender). A limit comes
 * from what the operation should cost, never from the estimate alone: a token's `transfer` runs the token's code,
 * and a hostile token can make it burn the block's gas at the settler's expense (20 M gas per sweep, seen). Above
 * its cap a call is not signed (GasCapError): the payment, deposit or recovery fails with that reason and the
 * settler has spent nothing; below it, the limit signed never exceeds the cap, so the worst a token can take is
 * the cap itself.
 *
 * Measured on Anvil with the compiled contracts (`npx tsx bench/sweep-gas.ts`, table in docs/operations.md): a wallet's first `deployAndSweep` of a standard ERC-20 with
 * a fee ~110 k gas (clone deployment ~45 k, two transfers), of the USDT-like token ~115 k, of the native coin ~75 k;
 * each further wallet in `deployAndSweepBatch` about as much again. The caps leave room for real tokens whose
 * transfers do more (fee-on-transfer, hooks, proxies: up to ~150 k a transfer pair) and for gas repricing forks.
 */

/** One wallet's share of a sweep (deploy if needed, pay the payout and the fee recipient). `SWEEP_GAS_CAP_PER_WALLET`. */
export const SWEEP_GAS_PER_WALLET = 300_000n;
/** The transaction's own overhead and the batch loop, once per sweep. */
const SWEEP_GAS_BASE = 60_000n;

/** Cap of a `deployAndSweep` / `deployAndSweepBatch` (settlement, withdrawal, recovery, Vault) of `wallets` wallets. */
export const sweepGasCap = (wallets: number, perWallet: bigint = SWEEP_GAS_PER_WALLET): bigint =>
  SWEEP_GAS_BASE + BigInt(wallets) * perWallet;

/** A plain transfer from the signer (an agent's payout in a token or the native coin): ~35-65 k. */
export const TRANSFER_GAS_CAP = 150_000n;

/** A `returnFunds` of held funds (deploys the wallet if needed, one exact transfer): as one wallet's sweep. */
export const returnGasCap = (perWallet: bigint = SWEEP_GAS_PER_WALLET): bigint => sweepGasCap(1, perWallet);

/** A bridge order cancel on DlnDestination (`sendEvmOrderCancel`: checks, state write, a message to the gate). */
export const BRIDGE_CANCEL_GAS_CAP = 600_000n;
