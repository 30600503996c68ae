// The local DLN stand-in's contracts (contracts/BridgeSource.sol, BridgeDestination.sol, DeBridgeGateStandIn.sol,
// BridgeRouterStandIn.sol, DLN's Order from contracts/DlnOrderLib.sol) on two real Anvils: chain A is the source,
// chain B the destination. Orders in an ERC-20, a USDT-like token (no bool) and the native coin; exact balances.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BaseError,
  ContractFunctionRevertedError,
  getAddress,
  keccak256,
  parseEther,
  parseEventLogs,
  stringToHex,
  toFunctionSelector,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { bridgeDestinationAbi, bridgeDestinationBytecode } from "../../abis/BridgeDestination.js";
import { bridgeRouterStandInAbi, bridgeRouterStandInBytecode } from "../../abis/BridgeRouterStandIn.js";
import { bridgeSourceAbi, bridgeSourceBytecode } from "../../abis/BridgeSource.js";
import { deBridgeGateStandInAbi, deBridgeGateStandInBytecode } from "../../abis/DeBridgeGateStandIn.js";
import { erc20Abi } from "../../abis/erc20.js";
import { priceOracleAbi, priceOracleBytecode } from "../../abis/PriceOracle.js";
import { testTokenAbi, testTokenBytecode } from "../../abis/TestToken.js";
import { tetherTokenAbi, tetherTokenBytecode } from "../../abis/TetherToken.js";
import { ANVIL_KEYS } from "../../local/accounts.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { dlnOrderId, evmAddressToBytes, type DlnOrder } from "../../local/bridge/abi.js";
import { clients, NATIVE } from "./fixture.js";

const SRC_ID = 31401;
const DST_ID = 31402;
const SOLANA = 7565164n;
/** The destination gate's fixed messaging fee (DLN's on Polygon) and the source gate's. */
const DST_FEE = parseEther("0.5");
const SRC_FEE = parseEther("0.001");

const role = (i: number) => privateKeyToAccount(ANVIL_KEYS[i]!);
const owner = role(0);
const maker = role(3);
const stranger = role(4);
const solver = role(5);
const messenger = role(6);
const authority = role(7);
const b = evmAddressToBytes;

type Side = ReturnType<typeof clients> & {
  gate: Address;
  source: Address;
  destination: Address;
  tokens: { erc20: Address; usdt: Address };
};
let anvils: Anvil[] = [];
let src: Side;
let dst: Side;

async function deploySide(rpcUrl: string, chainId: number, fee: bigint): Promise<Side> {
  const c = clients(rpcUrl, chainId);
  const w = c.walletOf(owner);
  const deployed = async (hash: Promise<Hex>) => getAddress((await c.wait(hash)).contractAddress!);
  const gate = await deployed(
    w.deployContract({ abi: deBridgeGateStandInAbi, bytecode: deBridgeGateStandInBytecode, args: [owner.address, fee, 0] }),
  );
  const routes = [BigInt(SRC_ID), BigInt(DST_ID), SOLANA];
  await c.wait(
    w.writeContract({
      address: gate,
      abi: deBridgeGateStandInAbi,
      functionName: "updateChainSupport",
      args: [routes, routes.map(() => ({ fixedNativeFee: 0n, isSupported: true, transferFeeBps: 0 }))],
    }),
  );
  const source = await deployed(w.deployContract({ abi: bridgeSourceAbi, bytecode: bridgeSourceBytecode, args: [] }));
  const destination = await deployed(w.deployContract({ abi: bridgeDestinationAbi, bytecode: bridgeDestinationBytecode, args: [gate] }));
  const erc20 = await deployed(w.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["USD Coin", "USDC", 6] }));
  const usdt = await deployed(w.deployContract({ abi: tetherTokenAbi, bytecode: tetherTokenBytecode, args: ["Tether USD", "USDT", 6] }));
  await c.wait(w.writeContract({ address: source, abi: bridgeSourceAbi, functionName: "setMessenger", args: [messenger.address] }));
  return { ...c, gate, source, destination, tokens: { erc20, usdt } };
}

beforeAll(async () => {
  anvils = await Promise.all([startAnvil({ chainId: SRC_ID, blockTime: 0 }), startAnvil({ chainId: DST_ID, blockTime: 0 })]);
  [src, dst] = await Promise.all([deploySide(anvils[0]!.rpcUrl, SRC_ID, SRC_FEE), deploySide(anvils[1]!.rpcUrl, DST_ID, DST_FEE)]);
}, 30_000);
afterAll(async () => {
  await Promise.all(anvils.map((a) => a.stop()));
});

/** The custom error a call reverts with, and its arguments. */
async function revertOf(p: Promise<unknown>): Promise<{ name?: string; args?: readonly unknown[] }> {
  try {
    await p;
  } catch (e) {
    const err = e instanceof BaseError ? e.walk((x) => x instanceof ContractFunctionRevertedError) : null;
    if (err instanceof ContractFunctionRevertedError) return { name: err.data?.errorName, args: err.data?.args };
    throw e;
  }
  throw new Error("expected a revert");
}

/** A fresh address with no balance. */
const fresh = (): Address => getAddress(`0x${keccak256(toHex(`bridge-${Math.random()}`)).slice(26)}`);
let nonce = 1n;

type Kind = "erc20" | "usdt" | "native";
const KINDS: Kind[] = ["erc20", "usdt", "native"];
const tokenOf = (side: Side, kind: Kind) => (kind === "native" ? NATIVE : side.tokens[kind]);
const tokenAbi = (kind: Kind) => (kind === "usdt" ? tetherTokenAbi : testTokenAbi);

/** DLN's order as DlnSource would build it for `maker` (20-byte EVM fields, no allowed taker, no external call). */
function newOrder(kind: Kind, over: Partial<DlnOrder> = {}): DlnOrder {
  const native = kind === "native";
  return {
    makerOrderNonce: nonce++,
    makerSrc: b(maker.address),
    giveChainId: BigInt(SRC_ID),
    giveTokenAddress: b(tokenOf(src, kind)),
    giveAmount: native ? 10n ** 18n + 3n : 100_300_000n,
    takeChainId: BigInt(DST_ID),
    takeTokenAddress: b(tokenOf(dst, kind)),
    takeAmount: native ? 10n ** 18n : 100_000_000n,
    receiverDst: b(fresh()),
    givePatchAuthoritySrc: b(maker.address),
    orderAuthorityAddressDst: b(authority.address),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: "0x",
    externalCall: "0x",
    ...over,
  };
}
const addr = (h: Hex) => getAddress(h);

const balanceOf = (side: Side, token: Address, who: Address): Promise<bigint> =>
  token === NATIVE ? side.pub.getBalance({ address: who }) : side.pub.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [who] });
const gasCost = (r: TransactionReceipt) => r.gasUsed * r.effectiveGasPrice;

/** Mints `amount` of the kind's token to `who` and approves `spender` for it (nothing for the native coin). */
async function fund(side: Side, kind: Kind, who: PrivateKeyAccount, spender: Address, amount: bigint) {
  if (kind === "native") return;
  const w = side.walletOf(who);
  const token = side.tokens[kind];
  await side.wait(w.writeContract({ address: token, abi: tokenAbi(kind), functionName: "mint", args: [who.address, amount] } as any));
  await side.wait(w.writeContract({ address: token, abi: tokenAbi(kind), functionName: "approve", args: [spender, amount] } as any));
}

const createArgs = (o: DlnOrder, kind: Kind, fixFee = 0n) =>
  ({
    address: src.source,
    abi: bridgeSourceAbi,
    functionName: "createOrder",
    args: [o],
    value: (kind === "native" ? o.giveAmount : 0n) + fixFee,
  }) as const;
async function create(o: DlnOrder, kind: Kind, fixFee = 0n) {
  await fund(src, kind, maker, src.source, o.giveAmount);
  return src.wait(src.walletOf(maker).writeContract(createArgs(o, kind, fixFee)));
}

const fulfilArgs = (o: DlnOrder, kind: Kind, id = dlnOrderId(o), unlockAuthority: Address = solver.address) =>
  ({
    address: dst.destination,
    abi: bridgeDestinationAbi,
    functionName: "fulfillOrder",
    args: [o, o.takeAmount, id, "0x", unlockAuthority],
    value: kind === "native" ? o.takeAmount : 0n,
  }) as const;
async function fulfil(o: DlnOrder, kind: Kind) {
  await fund(dst, kind, solver, dst.destination, o.takeAmount);
  return dst.wait(dst.walletOf(solver).writeContract(fulfilArgs(o, kind)));
}

const giveStatus = async (id: Hex) => (await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "giveOrders", args: [id] }))[0];
const takeStatus = async (id: Hex) => (await dst.pub.readContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "takeOrders", args: [id] }))[0];
const simSource = (account: PrivateKeyAccount, functionName: "claimUnlock" | "claimCancel", args: readonly unknown[]) =>
  src.pub.simulateContract({ account, address: src.source, abi: bridgeSourceAbi, functionName, args } as any);
const unlockArgs = (id: Hex, beneficiary: Address, value = DST_FEE) =>
  ({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "sendEvmUnlock", args: [id, beneficiary, 0n], value }) as const;
const cancelArgs = (o: DlnOrder, beneficiary: Address, value = DST_FEE, executionFee = 0n) =>
  ({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "sendEvmOrderCancel", args: [o, beneficiary, executionFee], value }) as const;

describe.each(KINDS)("bridge order in %s", (kind) => {
  it("createOrder escrows giveAmount from msg.sender, makerSrc = tx.origin, DLN's CreatedOrder and giveOrders; the id is DLN's", async () => {
    const o = newOrder(kind);
    const id = dlnOrderId(o);
    const token = tokenOf(src, kind);
    await fund(src, kind, maker, src.source, o.giveAmount);
    const sim = await src.pub.simulateContract({ account: maker, ...createArgs(o, kind) });
    expect(sim.result).toBe(id);
    // Someone else sending the maker's order: makerSrc is not the transaction's origin.
    expect(await revertOf(src.pub.simulateContract({ account: stranger, ...createArgs(o, kind) }))).toEqual({
      name: "NotMaker",
      args: [stranger.address],
    });

    const [makerBefore, escrowBefore] = await Promise.all([balanceOf(src, token, maker.address), balanceOf(src, token, src.source)]);
    const r = await src.wait(src.walletOf(maker).writeContract(createArgs(o, kind)));
    const [makerAfter, escrowAfter] = await Promise.all([balanceOf(src, token, maker.address), balanceOf(src, token, src.source)]);
    expect(escrowAfter - escrowBefore).toBe(o.giveAmount);
    expect(makerBefore - makerAfter).toBe(o.giveAmount + (kind === "native" ? gasCost(r) : 0n));

    const created = parseEventLogs({ abi: bridgeSourceAbi, logs: r.logs, eventName: "CreatedOrder" });
    expect(created.map((l) => l.args)).toEqual([
      { order: o, orderId: id, affiliateFee: "0x", nativeFixFee: 0n, percentFee: 0n, referralCode: 0, metadata: "0x" },
    ]);
    if (kind !== "native") {
      const transfers = parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: "Transfer" }).map((l) => l.args);
      expect(transfers).toEqual([{ from: maker.address, to: src.source, value: o.giveAmount }]);
    }
    expect(await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "giveOrders", args: [id] })).toEqual([
      1,
      BigInt(token),
      0n,
      DST_ID,
      0n,
      o.giveAmount,
      zeroAddress,
      0n,
    ]);
    expect(await takeStatus(id)).toBe(0);

    // The same order twice (same nonce) is refused.
    await fund(src, kind, maker, src.source, o.giveAmount);
    expect(await revertOf(src.pub.simulateContract({ account: maker, ...createArgs(o, kind) }))).toEqual({
      name: "WrongGiveStatus",
      args: [id, 1],
    });
  });

  it("fulfillOrder pays the receiver exactly takeAmount straight from the solver, once, and only for the genuine order", async () => {
    const o = newOrder(kind);
    const id = dlnOrderId(o);
    await create(o, kind);
    const token = tokenOf(dst, kind);

    await fund(dst, kind, solver, dst.destination, o.takeAmount);
    // A tampered order (the receiver or the amount changed) does not hash to the id.
    for (const bad of [{ ...o, receiverDst: b(fresh()) }, { ...o, takeAmount: o.takeAmount - 1n }])
      expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(bad, kind, id) }))).toEqual({
        name: "MismatchedOrderId",
        args: undefined,
      });
    // The order is for chain B: chain A's destination refuses it.
    expect(await revertOf(src.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind), address: src.destination }))).toEqual({
      name: "WrongChain",
      args: undefined,
    });
    const short = fulfilArgs(o, kind);
    expect(
      await revertOf(dst.pub.simulateContract({ account: solver, ...short, args: [o, o.takeAmount - 1n, id, "0x", solver.address] })),
    ).toEqual({ name: "MismatchTakerAmount", args: undefined });
    if (kind === "native")
      expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind), value: o.takeAmount - 1n }))).toEqual({
        name: "MismatchNativeTakerAmount",
        args: undefined,
      });

    const [solverBefore, receiverBefore] = await Promise.all([balanceOf(dst, token, solver.address), balanceOf(dst, token, addr(o.receiverDst))]);
    const r = await dst.wait(dst.walletOf(solver).writeContract(fulfilArgs(o, kind)));
    const [solverAfter, receiverAfter, held] = await Promise.all([
      balanceOf(dst, token, solver.address),
      balanceOf(dst, token, addr(o.receiverDst)),
      balanceOf(dst, token, dst.destination),
    ]);
    expect(receiverAfter - receiverBefore).toBe(o.takeAmount);
    expect(held).toBe(0n);
    expect(solverBefore - solverAfter).toBe(o.takeAmount + (kind === "native" ? gasCost(r) : 0n));
    if (kind !== "native") {
      const transfers = parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: "Transfer" }).map((l) => l.args);
      expect(transfers).toEqual([{ from: solver.address, to: addr(o.receiverDst), value: o.takeAmount }]);
    }
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "FulfilledOrder" }).map((l) => l.args)).toEqual([
      { order: o, orderId: id, sender: solver.address, unlockAuthority: solver.address },
    ]);
    expect(await dst.pub.readContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "takeOrders", args: [id] })).toEqual([
      1,
      solver.address,
      SRC_ID,
      0n,
    ]);

    // Twice: refused, by the same solver or another account; a fulfilled order cannot be cancelled.
    await fund(dst, kind, stranger, dst.destination, o.takeAmount);
    for (const who of [solver, stranger])
      expect(await revertOf(dst.pub.simulateContract({ account: who, ...fulfilArgs(o, kind) }))).toEqual({
        name: "IncorrectOrderStatus",
        args: undefined,
      });
    expect(await revertOf(dst.pub.simulateContract({ account: authority, ...cancelArgs(o, maker.address) }))).toEqual({
      name: "IncorrectOrderStatus",
      args: undefined,
    });
  });

  it("unlock: only the taker sends it, paying the gate's fee; only the messenger claims it (once), and the solver gets the escrow", async () => {
    const o = newOrder(kind);
    const id = dlnOrderId(o);
    await create(o, kind);
    expect(await revertOf(dst.pub.simulateContract({ account: solver, ...unlockArgs(id, solver.address) }))).toEqual({
      name: "IncorrectOrderStatus",
      args: undefined,
    });
    await fulfil(o, kind);

    for (const who of [stranger, authority, maker])
      expect(await revertOf(dst.pub.simulateContract({ account: who, ...unlockArgs(id, who.address) }))).toEqual({
        name: "Unauthorized",
        args: undefined,
      });
    expect(await revertOf(dst.pub.simulateContract({ account: solver, ...unlockArgs(id, solver.address, DST_FEE - 1n) }))).toEqual({
      name: "TransferAmountNotCoverFees",
      args: undefined,
    });
    const gateBefore = await dst.pub.getBalance({ address: dst.gate });
    const r = await dst.wait(dst.walletOf(solver).writeContract(unlockArgs(id, solver.address)));
    expect((await dst.pub.getBalance({ address: dst.gate })) - gateBefore).toBe(DST_FEE);
    const [sent] = parseEventLogs({ abi: deBridgeGateStandInAbi, logs: r.logs, eventName: "Sent" });
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "SentOrderUnlock" }).map((l) => l.args)).toEqual([
      { orderId: id, beneficiary: b(solver.address), submissionId: sent!.args.submissionId },
    ]);
    expect(await takeStatus(id)).toBe(2);
    expect(await revertOf(dst.pub.simulateContract({ account: solver, ...unlockArgs(id, solver.address) }))).toEqual({
      name: "IncorrectOrderStatus",
      args: undefined,
    });

    for (const who of [solver, stranger, owner])
      expect(await revertOf(simSource(who, "claimUnlock", [id, who.address]))).toEqual({ name: "NotMessenger", args: [who.address] });
    const token = tokenOf(src, kind);
    const [solverBefore, escrowBefore] = await Promise.all([balanceOf(src, token, solver.address), balanceOf(src, token, src.source)]);
    const c = await src.wait(
      src.walletOf(messenger).writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "claimUnlock", args: [id, solver.address] }),
    );
    const [solverAfter, escrowAfter] = await Promise.all([balanceOf(src, token, solver.address), balanceOf(src, token, src.source)]);
    expect(solverAfter - solverBefore).toBe(o.giveAmount);
    expect(escrowBefore - escrowAfter).toBe(o.giveAmount);
    expect(parseEventLogs({ abi: bridgeSourceAbi, logs: c.logs, eventName: "ClaimedUnlock" }).map((l) => l.args)).toEqual([
      { orderId: id, beneficiary: solver.address, giveAmount: o.giveAmount, giveTokenAddress: token },
    ]);
    expect(await giveStatus(id)).toBe(2);
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 2] });
    expect(await revertOf(simSource(messenger, "claimCancel", [id, maker.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 2] });
  });

  it("cancel: only the authority while NotSet; a cancel below the gate's fee reverts, at the fee it succeeds and the gate keeps the fee; the claim refunds the cancel beneficiary exactly", async () => {
    const o = newOrder(kind);
    const id = dlnOrderId(o);
    await create(o, kind);
    const beneficiary = fresh();

    for (const who of [stranger, maker, solver])
      expect(await revertOf(dst.pub.simulateContract({ account: who, ...cancelArgs(o, beneficiary) }))).toEqual({
        name: "Unauthorized",
        args: undefined,
      });
    expect(await revertOf(src.pub.simulateContract({ account: authority, ...cancelArgs(o, beneficiary, SRC_FEE), address: src.destination }))).toEqual({
      name: "WrongChain",
      args: undefined,
    });
    // The messaging fee: DeBridgeGate's TransferAmountNotCoverFees below it, on the chain the cancel is sent from.
    for (const value of [0n, DST_FEE - 1n])
      expect(await revertOf(dst.pub.simulateContract({ account: authority, ...cancelArgs(o, beneficiary, value) }))).toEqual({
        name: "TransferAmountNotCoverFees",
        args: undefined,
      });

    const [gateBefore, authorityBefore] = await Promise.all([
      dst.pub.getBalance({ address: dst.gate }),
      dst.pub.getBalance({ address: authority.address }),
    ]);
    const r = await dst.wait(dst.walletOf(authority).writeContract(cancelArgs(o, beneficiary)));
    const [gateAfter, authorityAfter] = await Promise.all([
      dst.pub.getBalance({ address: dst.gate }),
      dst.pub.getBalance({ address: authority.address }),
    ]);
    expect(gateAfter - gateBefore).toBe(DST_FEE);
    expect(authorityBefore - authorityAfter).toBe(DST_FEE + gasCost(r));
    expect(await dst.pub.getBalance({ address: dst.destination })).toBe(0n);
    const [sent] = parseEventLogs({ abi: deBridgeGateStandInAbi, logs: r.logs, eventName: "Sent" });
    expect(sent!.args).toMatchObject({
      chainIdTo: BigInt(SRC_ID),
      nativeSender: dst.destination,
      receiver: b(beneficiary),
      amount: DST_FEE,
      fees: { fixFee: DST_FEE, transferFee: 0n, executionFee: 0n },
    });
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "SentOrderCancel" }).map((l) => l.args)).toEqual([
      { order: o, orderId: id, cancelBeneficiary: b(beneficiary), submissionId: sent!.args.submissionId },
    ]);
    expect(await takeStatus(id)).toBe(3);
    expect(await revertOf(dst.pub.simulateContract({ account: authority, ...cancelArgs(o, beneficiary) }))).toEqual({
      name: "IncorrectOrderStatus",
      args: undefined,
    });
    // A cancelled order cannot be fulfilled or unlocked.
    await fund(dst, kind, solver, dst.destination, o.takeAmount);
    expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind) }))).toEqual({
      name: "IncorrectOrderStatus",
      args: undefined,
    });

    for (const who of [authority, stranger, owner])
      expect(await revertOf(simSource(who, "claimCancel", [id, beneficiary]))).toEqual({ name: "NotMessenger", args: [who.address] });
    const token = tokenOf(src, kind);
    const [escrowBefore, makerBefore] = await Promise.all([balanceOf(src, token, src.source), balanceOf(src, token, maker.address)]);
    const c = await src.wait(
      src.walletOf(messenger).writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "claimCancel", args: [id, beneficiary] }),
    );
    // The beneficiary the authority named gets it all; the maker (and the order's refund address) nothing.
    expect(await balanceOf(src, token, beneficiary)).toBe(o.giveAmount);
    expect(await balanceOf(src, token, maker.address)).toBe(makerBefore);
    expect(escrowBefore - (await balanceOf(src, token, src.source))).toBe(o.giveAmount);
    expect(parseEventLogs({ abi: bridgeSourceAbi, logs: c.logs, eventName: "ClaimedOrderCancel" }).map((l) => l.args)).toEqual([
      { orderId: id, beneficiary, paidAmount: o.giveAmount, giveTokenAddress: token },
    ]);
    expect(await giveStatus(id)).toBe(3);
    expect(await revertOf(simSource(messenger, "claimCancel", [id, beneficiary]))).toEqual({ name: "WrongGiveStatus", args: [id, 3] });
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 3] });
  });
});

describe("order ids are DLN's packed-encoding ids, the same in TS and Solidity", () => {
  it("getOrderId of both contracts equals dlnOrderId for EVM, Solana-sized and optional fields, and an external call", async () => {
    const key = `0x${"5a".repeat(32)}` as Hex;
    const orders: DlnOrder[] = [
      newOrder("erc20"),
      newOrder("native", { makerOrderNonce: 2n ** 64n - 1n, giveAmount: 2n ** 256n - 1n }),
      newOrder("erc20", { giveChainId: SOLANA, makerSrc: key, giveTokenAddress: key, givePatchAuthoritySrc: key, allowedCancelBeneficiarySrc: key }),
      newOrder("usdt", { allowedTakerDst: b(solver.address), allowedCancelBeneficiarySrc: b(maker.address) }),
      newOrder("erc20", { externalCall: "0x1234567890" }),
      newOrder("erc20", { receiverDst: `0x${"01".repeat(255)}` }),
    ];
    for (const o of orders) {
      const ts = dlnOrderId(o);
      for (const [side, address, abi] of [
        [src, src.source, bridgeSourceAbi],
        [dst, dst.destination, bridgeDestinationAbi],
      ] as const)
        expect(await side.pub.readContract({ address, abi, functionName: "getOrderId", args: [o] } as any)).toBe(ts);
    }
    // And the id the source computes when the order is created, and the destination when it is fulfilled.
    const o = newOrder("erc20");
    const [created] = parseEventLogs({ abi: bridgeSourceAbi, logs: (await create(o, "erc20")).logs, eventName: "CreatedOrder" });
    const [filled] = parseEventLogs({ abi: bridgeDestinationAbi, logs: (await fulfil(o, "erc20")).logs, eventName: "FulfilledOrder" });
    expect([created!.args.orderId, filled!.args.orderId]).toEqual([dlnOrderId(o), dlnOrderId(o)]);
  });
});

describe("bridge guards", () => {
  const createSim = (o: DlnOrder, value: bigint, account: PrivateKeyAccount = maker) =>
    src.pub.simulateContract({ account, address: src.source, abi: bridgeSourceAbi, functionName: "createOrder", args: [o], value });

  it("createOrder refuses another chain, zero amounts, malformed address fields, an external call and a wrong msg.value", async () => {
    const o = newOrder("native");
    expect(await revertOf(createSim({ ...o, giveChainId: BigInt(DST_ID) }, o.giveAmount))).toEqual({ name: "WrongChain", args: undefined });
    expect(await revertOf(createSim({ ...o, takeChainId: BigInt(SRC_ID) }, o.giveAmount))).toEqual({ name: "WrongChain", args: undefined });
    expect(await revertOf(createSim({ ...o, giveAmount: 0n }, 0n))).toEqual({ name: "ZeroAmount", args: undefined });
    expect(await revertOf(createSim({ ...o, takeAmount: 0n }, o.giveAmount))).toEqual({ name: "ZeroAmount", args: undefined });
    for (const bad of [{ receiverDst: "0x" }, { orderAuthorityAddressDst: "0x" }, { givePatchAuthoritySrc: "0x1234" }, { allowedCancelBeneficiarySrc: "0x12" }] as const)
      expect(await revertOf(createSim({ ...o, ...bad }, o.giveAmount))).toEqual({ name: "WrongAddressLength", args: undefined });
    expect(await revertOf(createSim({ ...o, externalCall: "0x01" }, o.giveAmount))).toEqual({ name: "ExternalCallNotSupported", args: undefined });
    expect(await revertOf(createSim(o, o.giveAmount - 1n))).toEqual({ name: "MismatchNativeGiveAmount", args: undefined });
    const t = newOrder("erc20");
    await fund(src, "erc20", maker, src.source, t.giveAmount);
    expect(await revertOf(createSim(t, 1n))).toEqual({ name: "WrongFixedFee", args: [1n, 0n] });
    // Without an allowance the token pull fails and nothing is created.
    const u = newOrder("usdt", { giveAmount: 10n ** 30n });
    const err = await createSim(u, 0n).catch((e: BaseError) => e.walk((x) => x instanceof ContractFunctionRevertedError));
    expect((err as ContractFunctionRevertedError).signature).toBe(toFunctionSelector("InsufficientAllowance()"));
    expect(await giveStatus(dlnOrderId(u))).toBe(0);
  });

  it("DLN's creation fixFee: paid on top of the order, refunded with the escrow to the cancel beneficiary", async () => {
    const fix = parseEther("0.01");
    const w = src.walletOf(owner);
    await src.wait(w.writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "setGlobalFixedNativeFee", args: [fix] }));
    try {
      const o = newOrder("erc20");
      const id = dlnOrderId(o);
      await fund(src, "erc20", maker, src.source, o.giveAmount);
      expect(await revertOf(createSim(o, 0n))).toEqual({ name: "WrongFixedFee", args: [0n, fix] });
      const n = newOrder("native");
      expect(await revertOf(createSim(n, n.giveAmount))).toEqual({ name: "MismatchNativeGiveAmount", args: undefined });
      const r = await src.wait(src.walletOf(maker).writeContract(createArgs(o, "erc20", fix)));
      expect(parseEventLogs({ abi: bridgeSourceAbi, logs: r.logs, eventName: "CreatedOrder" })[0]!.args.nativeFixFee).toBe(fix);
      await dst.wait(dst.walletOf(authority).writeContract(cancelArgs(o, maker.address)));
      const beneficiary = fresh();
      await src.wait(
        src.walletOf(messenger).writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "claimCancel", args: [id, beneficiary] }),
      );
      expect([await balanceOf(src, src.tokens.erc20, beneficiary), await src.pub.getBalance({ address: beneficiary })]).toEqual([o.giveAmount, fix]);
    } finally {
      await src.wait(w.writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "setGlobalFixedNativeFee", args: [0n] }));
    }
  });

  it("allowedCancelBeneficiarySrc binds the refund: a cancel naming another beneficiary reverts", async () => {
    const bound = fresh();
    const o = newOrder("erc20", { allowedCancelBeneficiarySrc: b(bound) });
    await create(o, "erc20");
    expect(await revertOf(dst.pub.simulateContract({ account: authority, ...cancelArgs(o, maker.address) }))).toEqual({
      name: "AllowOnlyForBeneficiary",
      args: [b(bound)],
    });
    await dst.wait(dst.walletOf(authority).writeContract(cancelArgs(o, bound)));
    expect(await takeStatus(dlnOrderId(o))).toBe(3);
  });

  it("sendSolanaOrderCancel: only for an order from Solana (7565164), value checked with DLN's 1e10 divider, 32-byte beneficiary", async () => {
    const key = `0x${"5a".repeat(32)}` as Hex;
    const beneficiary = `0x${"7b".repeat(32)}` as Hex;
    const o = newOrder("erc20", { giveChainId: SOLANA, makerSrc: key, giveTokenAddress: key, givePatchAuthoritySrc: key });
    const id = dlnOrderId(o);
    const sol = (value: bigint, executionFee: bigint, r1: bigint, r2: bigint, order = o, account = authority) =>
      dst.pub.simulateContract({
        account,
        address: dst.destination,
        abi: bridgeDestinationAbi,
        functionName: "sendSolanaOrderCancel",
        args: [order, beneficiary, executionFee, r1, r2],
        value,
      });
    // An EVM cancel of a Solana order, and a Solana cancel of an EVM order: WrongChain.
    expect(await revertOf(dst.pub.simulateContract({ account: authority, ...cancelArgs(o, maker.address) }))).toEqual({ name: "WrongChain", args: undefined });
    expect(await revertOf(sol(DST_FEE, 0n, 0n, 0n, newOrder("erc20")))).toEqual({ name: "WrongChain", args: undefined });
    expect(await revertOf(sol(DST_FEE, 0n, 0n, 0n, o, stranger))).toEqual({ name: "Unauthorized", args: undefined });
    // value / 1e10 >= (fix + executionFee) / 1e10 + rewards: 0.5 + 0.05 as 5_000_000 reward units needs 0.55.
    const reward = parseEther("0.05") / 10n ** 10n;
    expect(await revertOf(sol(DST_FEE + parseEther("0.05") - 10n ** 10n, 0n, 0n, reward))).toEqual({ name: "TransferAmountNotCoverFees", args: undefined });
    expect(await revertOf(sol(DST_FEE + parseEther("0.05"), 10n ** 10n, 0n, reward))).toEqual({ name: "TransferAmountNotCoverFees", args: undefined });
    const r = await dst.wait(
      dst.walletOf(authority).writeContract({
        address: dst.destination,
        abi: bridgeDestinationAbi,
        functionName: "sendSolanaOrderCancel",
        args: [o, beneficiary, 0n, 0n, reward],
        value: DST_FEE + parseEther("0.05"),
      }),
    );
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "SentOrderCancel" })[0]!.args).toMatchObject({
      orderId: id,
      cancelBeneficiary: beneficiary,
    });
    expect(parseEventLogs({ abi: deBridgeGateStandInAbi, logs: r.logs, eventName: "Sent" })[0]!.args.chainIdTo).toBe(SOLANA);
    expect(await takeStatus(id)).toBe(3);
  });

  it("the gate: a route's own fee over the global one, the sender's discount, the transfer fee in bps, the execution fee capped", async () => {
    const w = dst.walletOf(owner);
    const g = { address: dst.gate, abi: deBridgeGateStandInAbi } as const;
    const fees = (value: bigint, to = BigInt(SRC_ID), sender = dst.destination) =>
      dst.pub.readContract({ ...g, functionName: "feesOf", args: [sender, to, value] });
    expect(await fees(DST_FEE)).toEqual([DST_FEE, 0n]);
    expect(await revertOf(fees(DST_FEE, 999n))).toEqual({ name: "WrongChainTo", args: undefined });
    await dst.wait(
      w.writeContract({
        ...g,
        functionName: "updateChainSupport",
        args: [[999n], [{ fixedNativeFee: parseEther("0.2"), isSupported: true, transferFeeBps: 100 }]],
      }),
    );
    await dst.wait(w.writeContract({ ...g, functionName: "updateFeeDiscount", args: [stranger.address, 5_000, 1_000] }));
    // 0.2 route fee; 1 % of the rest.
    expect(await fees(parseEther("1.2"), 999n, solver.address)).toEqual([parseEther("0.2"), parseEther("0.01")]);
    // Half off the fixed fee, 10 % off the transfer fee: 0.1 and 0.9 % of 1.1.
    expect(await fees(parseEther("1.2"), 999n, stranger.address)).toEqual([parseEther("0.1"), parseEther("0.0099")]);
    expect(await revertOf(fees(parseEther("0.09"), 999n, stranger.address))).toEqual({ name: "TransferAmountNotCoverFees", args: undefined });
    // The execution fee is capped at what the fees leave: 1.2 - 0.2 - 0.01 = 0.99.
    const r = await dst.wait(
      dst.walletOf(solver).writeContract({ ...g, functionName: "send", args: [999n, "0x01", parseEther("5"), "0x"], value: parseEther("1.2") }),
    );
    expect(parseEventLogs({ abi: deBridgeGateStandInAbi, logs: r.logs, eventName: "Sent" })[0]!.args.fees).toEqual({
      fixFee: parseEther("0.2"),
      transferFee: parseEther("0.01"),
      executionFee: parseEther("0.99"),
    });
    expect(await revertOf(dst.pub.simulateContract({ account: stranger, ...g, functionName: "updateGlobalFee", args: [0n, 0] }))).toEqual({
      name: "OwnableUnauthorizedAccount",
      args: [stranger.address],
    });
  });

  it("the pre-swap router: the input at the oracle's price into USDC from its stock, the order created with the payer as maker, the surplus to refundTo", async () => {
    const w = src.walletOf(owner);
    const deployed = async (hash: Promise<Hex>) => getAddress((await src.wait(hash)).contractAddress!);
    const oracle = await deployed(w.deployContract({ abi: priceOracleAbi, bytecode: priceOracleBytecode, args: [owner.address] }));
    await src.wait(
      w.writeContract({ address: oracle, abi: priceOracleAbi, functionName: "setPrices", args: [["MATIC", "USDC", "USDT"], [5n * 10n ** 17n, 10n ** 18n, 10n ** 18n]] }),
    );
    const usdc = src.tokens.erc20;
    const router = await deployed(
      w.deployContract({
        abi: bridgeRouterStandInAbi,
        bytecode: bridgeRouterStandInBytecode,
        args: [src.source, usdc, oracle, stringToHex("MATIC", { size: 32 })],
      }),
    );
    await src.wait(w.writeContract({ address: usdc, abi: testTokenAbi, functionName: "mint", args: [router, 1_000_000_000n] }));
    const r = { address: router, abi: bridgeRouterStandInAbi } as const;
    // 2.02 MATIC at 0.50 = 1.01 USDC; the order escrows 1.00, 0.01 is the surplus.
    const amountIn = parseEther("2.02");
    expect(await src.pub.readContract({ ...r, functionName: "quoteSwap", args: [NATIVE, amountIn] })).toBe(1_010_000n);
    const o = newOrder("erc20", { giveTokenAddress: b(usdc), giveAmount: 1_000_000n });
    const refundTo = fresh();
    const swapArgs = (order: DlnOrder, tokenIn: Address, amount: bigint, value: bigint) =>
      ({ ...r, functionName: "swapAndCreateOrder", args: [tokenIn, amount, order, refundTo], value }) as const;
    expect(await revertOf(src.pub.simulateContract({ account: maker, ...swapArgs({ ...o, giveAmount: 1_010_001n }, NATIVE, amountIn, amountIn) }))).toEqual({
      name: "InsufficientOutput",
      args: [1_010_000n, 1_010_001n],
    });
    expect(await revertOf(src.pub.simulateContract({ account: maker, ...swapArgs(newOrder("usdt"), NATIVE, amountIn, amountIn) }))).toEqual({
      name: "WrongGiveToken",
      args: undefined,
    });
    const [sourceBefore, makerBefore] = await Promise.all([balanceOf(src, usdc, src.source), src.pub.getBalance({ address: maker.address })]);
    const tx = await src.wait(src.walletOf(maker).writeContract(swapArgs(o, NATIVE, amountIn, amountIn)));
    const [created] = parseEventLogs({ abi: bridgeSourceAbi, logs: tx.logs, eventName: "CreatedOrder" });
    expect(created!.args.orderId).toBe(dlnOrderId(o));
    expect(created!.args.order.makerSrc).toBe(b(maker.address));
    expect((await balanceOf(src, usdc, src.source)) - sourceBefore).toBe(1_000_000n);
    expect(await balanceOf(src, usdc, refundTo)).toBe(10_000n);
    expect(makerBefore - (await src.pub.getBalance({ address: maker.address }))).toBe(amountIn + gasCost(tx));
    expect(await src.pub.getBalance({ address: router })).toBe(amountIn);
    expect(await balanceOf(src, usdc, router)).toBe(1_000_000_000n - 1_010_000n);

    // A USDT-like token (no bool) in: pulled from the payer (approved to the router), 1:1 at the oracle.
    const u = newOrder("erc20", { giveTokenAddress: b(usdc), giveAmount: 5_000_000n });
    await fund(src, "usdt", maker, router, 5_000_000n);
    await src.wait(src.walletOf(maker).writeContract(swapArgs(u, src.tokens.usdt, 5_000_000n, 0n)));
    expect(await balanceOf(src, src.tokens.usdt, router)).toBe(5_000_000n);
    expect(await giveStatus(dlnOrderId(u))).toBe(1);
    // Polygon's USDT0 is priced as USDT (the service's oracle key, modules/pricing normalizeOracleSymbol).
    const usdt0 = await deployed(w.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["USDT0", "USDT0", 6] }));
    expect(await src.pub.readContract({ ...r, functionName: "quoteSwap", args: [usdt0, 7_000_000n] })).toBe(7_000_000n);
    // USDC itself is not swapped.
    expect(await revertOf(src.pub.readContract({ ...r, functionName: "quoteSwap", args: [usdc, 1n] }))).toEqual({
      name: "UnsupportedToken",
      args: [usdc],
    });
  });

  it("claims of an unknown order are refused; only the owner (the deployer) sets the messenger", async () => {
    const id = keccak256(toHex("no such order"));
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 0] });
    expect(await revertOf(simSource(messenger, "claimCancel", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 0] });
    expect(await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "owner" })).toBe(owner.address);
    expect(await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "messenger" })).toBe(messenger.address);
    expect(await dst.pub.readContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "deBridgeGate" })).toBe(dst.gate);
    expect(
      await revertOf(
        src.pub.simulateContract({ account: messenger, address: src.source, abi: bridgeSourceAbi, functionName: "setMessenger", args: [stranger.address] }),
      ),
    ).toEqual({ name: "OwnableUnauthorizedAccount", args: [messenger.address] });
    expect(
      await revertOf(src.pub.simulateContract({ account: owner, address: src.source, abi: bridgeSourceAbi, functionName: "setMessenger", args: [NATIVE] })),
    ).toEqual({ name: "ZeroAddress", args: undefined });
  });
});
