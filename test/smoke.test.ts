import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { keccak256, parseUnits, toBytes, type Hex } from "viem";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { walletFactoryAbi } from "../abis/WalletFactory.js";
import { LOCAL_ROLES } from "../local/accounts.js";
import { computeWalletAddress } from "../chains/deposit-address.js";
import { registerAddress } from "../modules/addresses/index.js";
import { chainHelpers, waitFor } from "./helpers/chain.js";
import { createTestDeps, type TestDeps } from "./helpers/deps.js";

// The chain end to end: Ponder indexes a Transfer to a counterfactual wallet, the factory deploys
// and sweeps it, the payout receives the tokens, and the sweep is indexed.
let deps: TestDeps;
beforeAll(async () => {
  deps = await createTestDeps();
});
afterAll(() => deps?.cleanup());

const cases = [
  { chainId: 777177, symbol: "USDT", note: "USDT-like token whose transfer returns nothing" },
  { chainId: 137, symbol: "USDC", note: "standard 6-decimal token" },
];

describe.each(cases)("chain $chainId $symbol ($note)", ({ chainId, symbol }) => {
  it("indexes the deposit, deploys and sweeps the wallet, indexes the sweep", { timeout: 300_000 }, async () => {
    const chain = deps.chains.find((c) => c.chainId === chainId)!;
    const h = chainHelpers(chain);
    const token = h.token(symbol);
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const salt = keccak256(toBytes(`smoke:${Math.random()}`));
    const wallet = computeWalletAddress({ factory: chain.factory!, implementation: chain.implementation, salt, payout });
    const onChain = await h.pub.readContract({
      address: chain.factory!,
      abi: walletFactoryAbi,
      functionName: "computeAddress",
      args: [salt, payout],
    });
    expect(onChain).toBe(wallet);

    // The indexer keeps only registered addresses' transfers: registered before it is paid, as the service does.
    await registerAddress(deps.db.pool, { chainId, address: wallet, kind: "payment", ownerId: `smoke:${salt}`, merchantId: null });

    const amount = parseUnits("12.345678", token.decimals);
    const fee = parseUnits("0.1", token.decimals);
    const paid = await h.pay(symbol, wallet, amount);

    const { transfer, sweep, walletDeployment } = deps.db.views;
    const at = wallet.toLowerCase() as Hex;
    const row = await waitFor(
      async () =>
        (
          await deps.db.orm
            .select()
            .from(transfer)
            .where(and(eq(transfer.chainId, chainId), eq(transfer.to, at)))
        )[0],
      { what: "indexed transfer", timeout: 120_000 },
    );
    expect(BigInt(row.amount)).toBe(amount);
    expect(row.token).toBe(token.address.toLowerCase());
    expect(row.transactionHash).toBe(paid.transactionHash);

    const settler = h.walletOf(LOCAL_ROLES.settler);
    const hash = await settler.writeContract({
      address: chain.factory!,
      abi: walletFactoryAbi,
      functionName: "deployAndSweep",
      args: [salt, payout, token.address, fee, LOCAL_ROLES.treasury.address],
    });
    const receipt = await h.wait(hash);
    expect(await h.balanceOf(symbol, payout)).toBe(amount - fee);
    expect(await h.balanceOf(symbol, wallet)).toBe(0n);

    const swept = await waitFor(
      async () =>
        (
          await deps.db.orm
            .select()
            .from(sweep)
            .where(and(eq(sweep.chainId, chainId), eq(sweep.wallet, at)))
        )[0],
      { what: "indexed sweep", timeout: 120_000 },
    );
    expect(BigInt(swept.amount)).toBe(amount - fee);
    expect(BigInt(swept.fee)).toBe(fee);
    expect(swept.payout).toBe(payout.toLowerCase());
    expect(swept.transactionHash).toBe(receipt.transactionHash);
    const [deployed] = await deps.db.orm
      .select()
      .from(walletDeployment)
      .where(and(eq(walletDeployment.chainId, chainId), eq(walletDeployment.wallet, at)));
    expect(deployed?.payout).toBe(payout.toLowerCase());
    expect(deployed?.salt).toBe(salt);
  });
});
