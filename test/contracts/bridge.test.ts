// The local DLN-like bridge (contracts/BridgeSource.sol, contracts/BridgeDestination.sol) on two real Anvils: chain A
// is the source, chain B the destination. Orders in an ERC-20, a USDT-like token (no bool) and the native coin.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeAbiParameters,
  getAddress,
  keccak256,
  parseEventLogs,
  toFunctionSelector,
  toHex,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { bridgeDestinationAbi, bridgeDestinationBytecode } from "../../abis/BridgeDestination.js";
import { bridgeSourceAbi, bridgeSourceBytecode } from "../../abis/BridgeSource.js";
import { erc20Abi } from "../../abis/erc20.js";
import { testTokenAbi, testTokenBytecode } from "../../abis/TestToken.js";
import { tetherTokenAbi, tetherTokenBytecode } from "../../abis/TetherToken.js";
import { ANVIL_KEYS } from "../../local/accounts.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { clients, NATIVE } from "./fixture.js";

const SRC_ID = 31401;
const DST_ID = 31402;

type Order = {
  nonce: bigint;
  maker: Address;
  giveChainId: bigint;
  giveToken: Address;
  giveAmount: bigint;
  takeChainId: bigint;
  takeToken: Address;
  takeAmount: bigint;
  receiver: Address;
  orderAuthorityDst: Address;
  refundTo: Address;
};

// Written out rather than taken from the ABI: the test pins the layout the off-chain code hashes.
const ORDER_TUPLE = {
  type: "tuple",
  components: [
    { name: "nonce", type: "uint64" },
    { name: "maker", type: "address" },
    { name: "giveChainId", type: "uint256" },
    { name: "giveToken", type: "address" },
    { name: "giveAmount", type: "uint256" },
    { name: "takeChainId", type: "uint256" },
    { name: "takeToken", type: "address" },
    { name: "takeAmount", type: "uint256" },
    { name: "receiver", type: "address" },
    { name: "orderAuthorityDst", type: "address" },
    { name: "refundTo", type: "address" },
  ],
} as const;
const orderIdOf = (o: Order): Hex => keccak256(encodeAbiParameters([ORDER_TUPLE], [o]));

const role = (i: number) => privateKeyToAccount(ANVIL_KEYS[i]!);
const owner = role(0);
const maker = role(3);
const stranger = role(4);
const solver = role(5);
const messenger = role(6);
const authority = role(7);

type Side = ReturnType<typeof clients> & {
  source: Address;
  destination: Address;
  tokens: { erc20: Address; usdt: Address };
};
let anvils: Anvil[] = [];
let src: Side;
let dst: Side;

async function deploySide(rpcUrl: string, chainId: number): Promise<Side> {
  const c = clients(rpcUrl, chainId);
  const w = c.walletOf(owner);
  const deployed = async (hash: Promise<Hex>) => getAddress((await c.wait(hash)).contractAddress!);
  const source = await deployed(w.deployContract({ abi: bridgeSourceAbi, bytecode: bridgeSourceBytecode, args: [] }));
  const destination = await deployed(w.deployContract({ abi: bridgeDestinationAbi, bytecode: bridgeDestinationBytecode, args: [] }));
  const erc20 = await deployed(w.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["USD Coin", "USDC", 6] }));
  const usdt = await deployed(w.deployContract({ abi: tetherTokenAbi, bytecode: tetherTokenBytecode, args: ["Tether USD", "USDT", 6] }));
  await c.wait(w.writeContract({ address: source, abi: bridgeSourceAbi, functionName: "setMessenger", args: [messenger.address] }));
  return { ...c, source, destination, tokens: { erc20, usdt } };
}

beforeAll(async () => {
  anvils = await Promise.all([startAnvil({ chainId: SRC_ID, blockTime: 0 }), startAnvil({ chainId: DST_ID, blockTime: 0 })]);
  [src, dst] = await Promise.all([deploySide(anvils[0]!.rpcUrl, SRC_ID), deploySide(anvils[1]!.rpcUrl, DST_ID)]);
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

function newOrder(kind: Kind, over: Partial<Order> = {}): Order {
  const native = kind === "native";
  return {
    nonce: nonce++,
    maker: maker.address,
    giveChainId: BigInt(SRC_ID),
    giveToken: tokenOf(src, kind),
    giveAmount: native ? 10n ** 18n + 3n : 100_300_000n,
    takeChainId: BigInt(DST_ID),
    takeToken: tokenOf(dst, kind),
    takeAmount: native ? 10n ** 18n : 100_000_000n,
    receiver: fresh(),
    orderAuthorityDst: authority.address,
    refundTo: fresh(),
    ...over,
  };
}

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

async function create(o: Order, kind: Kind) {
  await fund(src, kind, maker, src.source, o.giveAmount);
  return src.wait(
    src.walletOf(maker).writeContract({
      address: src.source,
      abi: bridgeSourceAbi,
      functionName: "createOrder",
      args: [o],
      value: kind === "native" ? o.giveAmount : 0n,
    }),
  );
}

const fulfilArgs = (o: Order, kind: Kind, id = orderIdOf(o)) =>
  ({
    address: dst.destination,
    abi: bridgeDestinationAbi,
    functionName: "fulfillOrder",
    args: [o, id],
    value: kind === "native" ? o.takeAmount : 0n,
  }) as const;
async function fulfil(o: Order, kind: Kind) {
  await fund(dst, kind, solver, dst.destination, o.takeAmount);
  return dst.wait(dst.walletOf(solver).writeContract(fulfilArgs(o, kind)));
}

const giveStatus = (id: Hex) => src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "giveStatus", args: [id] });
const takeStatus = (id: Hex) => dst.pub.readContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "takeStatus", args: [id] });
const simSource = (account: PrivateKeyAccount, functionName: "claimUnlock" | "claimCancel", args: readonly unknown[]) =>
  src.pub.simulateContract({ account, address: src.source, abi: bridgeSourceAbi, functionName, args } as any);
const simDest = (account: PrivateKeyAccount, functionName: "sendEvmUnlock" | "sendEvmOrderCancel", args: readonly unknown[]) =>
  dst.pub.simulateContract({ account, address: dst.destination, abi: bridgeDestinationAbi, functionName, args } as any);

describe.each(KINDS)("bridge order in %s", (kind) => {
  it("createOrder escrows giveAmount from the maker and emits CreatedOrder; orderId = keccak256(abi.encode(order))", async () => {
    const o = newOrder(kind);
    const id = orderIdOf(o);
    const token = tokenOf(src, kind);
    await fund(src, kind, maker, src.source, o.giveAmount);
    const sim = await src.pub.simulateContract({
      account: maker,
      address: src.source,
      abi: bridgeSourceAbi,
      functionName: "createOrder",
      args: [o],
      value: kind === "native" ? o.giveAmount : 0n,
    });
    expect(sim.result).toBe(id);

    const [makerBefore, escrowBefore] = await Promise.all([balanceOf(src, token, maker.address), balanceOf(src, token, src.source)]);
    const r = await src.wait(
      src.walletOf(maker).writeContract({
        address: src.source,
        abi: bridgeSourceAbi,
        functionName: "createOrder",
        args: [o],
        value: kind === "native" ? o.giveAmount : 0n,
      }),
    );
    const [makerAfter, escrowAfter] = await Promise.all([balanceOf(src, token, maker.address), balanceOf(src, token, src.source)]);
    expect(escrowAfter - escrowBefore).toBe(o.giveAmount);
    expect(makerBefore - makerAfter).toBe(o.giveAmount + (kind === "native" ? gasCost(r) : 0n));

    const created = parseEventLogs({ abi: bridgeSourceAbi, logs: r.logs, eventName: "CreatedOrder" });
    expect(created).toHaveLength(1);
    expect(created[0]!.args).toEqual({ orderId: id, order: o });
    if (kind !== "native") {
      const transfers = parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: "Transfer" }).map((l) => l.args);
      expect(transfers).toEqual([{ from: maker.address, to: src.source, value: o.giveAmount }]);
    }
    expect(await giveStatus(id)).toBe(1);
    expect(await takeStatus(id)).toBe(0);

    // The same order twice (same nonce) is refused.
    await fund(src, kind, maker, src.source, o.giveAmount);
    expect(
      await revertOf(
        src.pub.simulateContract({
          account: maker,
          address: src.source,
          abi: bridgeSourceAbi,
          functionName: "createOrder",
          args: [o],
          value: kind === "native" ? o.giveAmount : 0n,
        }),
      ),
    ).toEqual({ name: "WrongGiveStatus", args: [id, 1] });
  });

  it("fulfillOrder pays the receiver exactly takeAmount straight from the solver, once, and only for the genuine order", async () => {
    const o = newOrder(kind);
    const id = orderIdOf(o);
    await create(o, kind);
    const token = tokenOf(dst, kind);

    // A tampered order (the receiver or the amount changed) does not hash to the id.
    await fund(dst, kind, solver, dst.destination, o.takeAmount);
    for (const bad of [{ ...o, receiver: fresh() }, { ...o, takeAmount: o.takeAmount - 1n }]) {
      expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(bad, kind, id) }))).toEqual({
        name: "OrderIdMismatch",
        args: [id, orderIdOf(bad)],
      });
    }
    // The order is for chain B: chain A's destination refuses it.
    expect(
      await revertOf(src.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind), address: src.destination, value: kind === "native" ? o.takeAmount : 0n })),
    ).toEqual({ name: "WrongChain", args: [BigInt(DST_ID)] });
    if (kind === "native")
      expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind), value: o.takeAmount - 1n }))).toEqual({
        name: "WrongValue",
        args: [o.takeAmount, o.takeAmount - 1n],
      });
    else
      expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind), value: 1n }))).toEqual({
        name: "WrongValue",
        args: [0n, 1n],
      });

    // Funded and approved above: the balances around the fulfilment alone.
    const [solverBefore, receiverBefore] = await Promise.all([balanceOf(dst, token, solver.address), balanceOf(dst, token, o.receiver)]);
    const r = await dst.wait(dst.walletOf(solver).writeContract(fulfilArgs(o, kind)));
    const [solverAfter, receiverAfter, held] = await Promise.all([
      balanceOf(dst, token, solver.address),
      balanceOf(dst, token, o.receiver),
      balanceOf(dst, token, dst.destination),
    ]);
    expect(receiverAfter - receiverBefore).toBe(o.takeAmount);
    expect(held).toBe(0n);
    expect(solverBefore - solverAfter).toBe(o.takeAmount + (kind === "native" ? gasCost(r) : 0n));
    if (kind !== "native") {
      const transfers = parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: "Transfer" }).map((l) => l.args);
      expect(transfers).toEqual([{ from: solver.address, to: o.receiver, value: o.takeAmount }]);
    }
    const fulfilled = parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "FulfilledOrder" });
    expect(fulfilled.map((l) => l.args)).toEqual([{ orderId: id, order: o, taker: solver.address }]);
    expect(await takeStatus(id)).toBe(1);
    expect(await dst.pub.readContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "takerOf", args: [id] })).toBe(solver.address);

    // Twice: refused, by the same solver or another account.
    await fund(dst, kind, stranger, dst.destination, o.takeAmount);
    for (const who of [solver, stranger])
      expect(await revertOf(dst.pub.simulateContract({ account: who, ...fulfilArgs(o, kind) }))).toEqual({ name: "WrongTakeStatus", args: [id, 1] });
    // A fulfilled order cannot be cancelled.
    expect(await revertOf(simDest(authority, "sendEvmOrderCancel", [o, id]))).toEqual({ name: "WrongTakeStatus", args: [id, 1] });
  });

  it("unlock: only the taker sends it, only the messenger claims it (once), and the solver gets the escrow", async () => {
    const o = newOrder(kind);
    const id = orderIdOf(o);
    await create(o, kind);
    // Nothing to unlock before a fulfilment.
    expect(await revertOf(simDest(solver, "sendEvmUnlock", [id, solver.address]))).toEqual({ name: "WrongTakeStatus", args: [id, 0] });
    await fulfil(o, kind);

    for (const who of [stranger, authority, maker])
      expect(await revertOf(simDest(who, "sendEvmUnlock", [id, who.address]))).toEqual({ name: "NotTaker", args: [who.address] });
    const r = await dst.wait(
      dst.walletOf(solver).writeContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "sendEvmUnlock", args: [id, solver.address] }),
    );
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "SentOrderUnlock" }).map((l) => l.args)).toEqual([
      { orderId: id, beneficiary: solver.address },
    ]);
    expect(await takeStatus(id)).toBe(2);
    expect(await revertOf(simDest(solver, "sendEvmUnlock", [id, solver.address]))).toEqual({ name: "WrongTakeStatus", args: [id, 2] });
    expect(await revertOf(simDest(authority, "sendEvmOrderCancel", [o, id]))).toEqual({ name: "WrongTakeStatus", args: [id, 2] });

    // The messenger relays it; nobody else may, not even the solver or the source's owner.
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
      { orderId: id, beneficiary: solver.address, amount: o.giveAmount },
    ]);
    if (kind !== "native")
      expect(parseEventLogs({ abi: erc20Abi, logs: c.logs, eventName: "Transfer" }).map((l) => l.args)).toEqual([
        { from: src.source, to: solver.address, value: o.giveAmount },
      ]);
    expect(await giveStatus(id)).toBe(2);
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 2] });
    expect(await revertOf(simSource(messenger, "claimCancel", [id]))).toEqual({ name: "WrongGiveStatus", args: [id, 2] });
  });

  it("cancel: only orderAuthorityDst while NotSet; the messenger's claimCancel refunds refundTo exactly, once", async () => {
    const o = newOrder(kind);
    const id = orderIdOf(o);
    await create(o, kind);

    for (const who of [stranger, maker, solver])
      expect(await revertOf(simDest(who, "sendEvmOrderCancel", [o, id]))).toEqual({ name: "NotOrderAuthority", args: [who.address] });
    const tampered = { ...o, refundTo: fresh() };
    expect(await revertOf(simDest(authority, "sendEvmOrderCancel", [tampered, id]))).toEqual({
      name: "OrderIdMismatch",
      args: [id, orderIdOf(tampered)],
    });
    // The source does not refund before the destination cancelled (the messenger relays only what happened).
    const r = await dst.wait(
      dst.walletOf(authority).writeContract({ address: dst.destination, abi: bridgeDestinationAbi, functionName: "sendEvmOrderCancel", args: [o, id] }),
    );
    expect(parseEventLogs({ abi: bridgeDestinationAbi, logs: r.logs, eventName: "SentOrderCancel" }).map((l) => l.args)).toEqual([
      { orderId: id, refundTo: o.refundTo },
    ]);
    expect(await takeStatus(id)).toBe(3);
    expect(await revertOf(simDest(authority, "sendEvmOrderCancel", [o, id]))).toEqual({ name: "WrongTakeStatus", args: [id, 3] });
    // A cancelled order cannot be fulfilled.
    await fund(dst, kind, solver, dst.destination, o.takeAmount);
    expect(await revertOf(dst.pub.simulateContract({ account: solver, ...fulfilArgs(o, kind) }))).toEqual({ name: "WrongTakeStatus", args: [id, 3] });
    expect(await revertOf(simDest(solver, "sendEvmUnlock", [id, solver.address]))).toEqual({ name: "WrongTakeStatus", args: [id, 3] });

    for (const who of [authority, stranger, owner])
      expect(await revertOf(simSource(who, "claimCancel", [id]))).toEqual({ name: "NotMessenger", args: [who.address] });
    const token = tokenOf(src, kind);
    const escrowBefore = await balanceOf(src, token, src.source);
    const c = await src.wait(src.walletOf(messenger).writeContract({ address: src.source, abi: bridgeSourceAbi, functionName: "claimCancel", args: [id] }));
    expect(await balanceOf(src, token, o.refundTo)).toBe(o.giveAmount);
    expect(escrowBefore - (await balanceOf(src, token, src.source))).toBe(o.giveAmount);
    expect(parseEventLogs({ abi: bridgeSourceAbi, logs: c.logs, eventName: "ClaimedOrderCancel" }).map((l) => l.args)).toEqual([
      { orderId: id, refundTo: o.refundTo, amount: o.giveAmount },
    ]);
    expect(await giveStatus(id)).toBe(3);
    expect(await revertOf(simSource(messenger, "claimCancel", [id]))).toEqual({ name: "WrongGiveStatus", args: [id, 3] });
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 3] });
  });
});

describe("bridge guards", () => {
  const createSim = (o: Order, value: bigint, account: PrivateKeyAccount = maker) =>
    src.pub.simulateContract({ account, address: src.source, abi: bridgeSourceAbi, functionName: "createOrder", args: [o], value });

  it("createOrder refuses another maker, another chain, zero amounts and addresses, and a wrong msg.value", async () => {
    const o = newOrder("native");
    expect(await revertOf(createSim(o, o.giveAmount, stranger))).toEqual({ name: "NotMaker", args: [stranger.address] });
    expect(await revertOf(createSim({ ...o, giveChainId: BigInt(DST_ID) }, o.giveAmount))).toEqual({ name: "WrongChain", args: [BigInt(DST_ID)] });
    expect(await revertOf(createSim({ ...o, giveAmount: 0n }, 0n))).toEqual({ name: "ZeroAmount", args: undefined });
    expect(await revertOf(createSim({ ...o, takeAmount: 0n }, o.giveAmount))).toEqual({ name: "ZeroAmount", args: undefined });
    for (const field of ["receiver", "refundTo", "orderAuthorityDst"] as const)
      expect(await revertOf(createSim({ ...o, [field]: NATIVE }, o.giveAmount))).toEqual({ name: "ZeroAddress", args: undefined });
    expect(await revertOf(createSim(o, o.giveAmount - 1n))).toEqual({ name: "WrongValue", args: [o.giveAmount, o.giveAmount - 1n] });
    const t = newOrder("erc20");
    await fund(src, "erc20", maker, src.source, t.giveAmount);
    expect(await revertOf(createSim(t, 1n))).toEqual({ name: "WrongValue", args: [0n, 1n] });
    // Without an allowance the token pull fails and nothing is created.
    const u = newOrder("usdt", { giveAmount: 10n ** 30n });
    const err = await createSim(u, 0n).catch((e: BaseError) => e.walk((x) => x instanceof ContractFunctionRevertedError));
    expect((err as ContractFunctionRevertedError).signature).toBe(toFunctionSelector("InsufficientAllowance()"));
    expect(await giveStatus(orderIdOf(u))).toBe(0);
  });

  it("claims of an unknown order are refused; only the owner (the deployer) sets the messenger", async () => {
    const id = keccak256(toHex("no such order"));
    expect(await revertOf(simSource(messenger, "claimUnlock", [id, solver.address]))).toEqual({ name: "WrongGiveStatus", args: [id, 0] });
    expect(await revertOf(simSource(messenger, "claimCancel", [id]))).toEqual({ name: "WrongGiveStatus", args: [id, 0] });
    expect(await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "owner" })).toBe(owner.address);
    expect(await src.pub.readContract({ address: src.source, abi: bridgeSourceAbi, functionName: "messenger" })).toBe(messenger.address);
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
