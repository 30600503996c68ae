import { ponder } from "ponder:registry";
import { sweep, transfer, walletDeployment } from "ponder:schema";
import { watchAddresses, type WatchedAddresses } from "./watched-addresses";

// Rows are keyed by log position so a re-index after a restart or reorg rewrites the same ids.

// Our addresses (the app's registry). One listener per process, kept across `ponder dev` reloads. Without
// DATABASE_URL (Ponder on PGlite) there is no registry: every Transfer is kept.
const g = globalThis as { __watchedAddresses?: WatchedAddresses };
const watched = process.env.DATABASE_URL ? (g.__watchedAddresses ??= watchAddresses({ databaseUrl: process.env.DATABASE_URL })) : undefined;

// Every ERC-20 Transfer of the chain arrives here (a wildcard filter); only those touching our addresses are stored.
ponder.on("Token:Transfer", async ({ event, context }) => {
  // The whole row is read before the check: Ponder narrows the columns it fetches to those a handler reads.
  const row = {
    id: `${context.chain.id}:${event.transaction.hash}:${event.log.logIndex}`,
    chainId: context.chain.id,
    token: event.log.address.toLowerCase() as `0x${string}`,
    from: event.args.from.toLowerCase() as `0x${string}`,
    to: event.args.to.toLowerCase() as `0x${string}`,
    amount: event.args.value,
    blockNumber: event.block.number,
    blockHash: event.block.hash,
    transactionHash: event.transaction.hash,
    logIndex: event.log.logIndex,
    timestamp: event.block.timestamp,
  };
  if (watched && !(await watched.concerns(row.chainId, row.blockHash, row.from, row.to))) return;
  await context.db.insert(transfer).values(row).onConflictDoNothing();
});

ponder.on("WalletFactory:WalletDeployed", async ({ event, context }) => {
  await context.db
    .insert(walletDeployment)
    .values({
      id: `${context.chain.id}:${event.args.wallet.toLowerCase()}`,
      chainId: context.chain.id,
      wallet: event.args.wallet.toLowerCase() as `0x${string}`,
      payout: event.args.payout.toLowerCase() as `0x${string}`,
      salt: event.args.salt,
      blockNumber: event.block.number,
      transactionHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    })
    .onConflictDoNothing();
});

ponder.on("WalletFactory:Swept", async ({ event, context }) => {
  await context.db
    .insert(sweep)
    .values({
      id: `${context.chain.id}:${event.transaction.hash}:${event.log.logIndex}`,
      chainId: context.chain.id,
      wallet: event.args.wallet.toLowerCase() as `0x${string}`,
      token: event.args.token.toLowerCase() as `0x${string}`,
      payout: event.args.payout.toLowerCase() as `0x${string}`,
      amount: event.args.amount,
      fee: event.args.fee,
      feeRecipient: event.args.feeRecipient.toLowerCase() as `0x${string}`,
      blockNumber: event.block.number,
      transactionHash: event.transaction.hash,
      logIndex: event.log.logIndex,
      timestamp: event.block.timestamp,
    })
    .onConflictDoNothing();
});
