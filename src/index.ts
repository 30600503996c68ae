import { ponder } from "ponder:registry";
import { sweep, transfer, walletDeployment } from "ponder:schema";

// Rows are keyed by log position so a re-index after a restart or reorg rewrites the same ids.

ponder.on("Token:Transfer", async ({ event, context }) => {
  await context.db
    .insert(transfer)
    .values({
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
    })
    .onConflictDoNothing();
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
