import { describe, expect, it } from "vitest";
import { decodeFunctionData, encodeFunctionData, getAbiItem, keccak256, toFunctionSelector, type Hex } from "viem";
import {
  bytesToEvmAddress,
  deBridgeGateAbi,
  DLN_ORDER_COMPONENTS,
  dlnDestinationAbi,
  dlnOrderId,
  evmAddressToBytes,
  solanaKeyToBytes,
  type DlnOrder,
} from "./dln-order.js";

const PAYER = "0x1111111111111111111111111111111111111111";
const TOKEN = "0x2222222222222222222222222222222222222222";
const RECEIVER = "0x3333333333333333333333333333333333333333";
const AUTHORITY = "0x4444444444444444444444444444444444444444";
const SOLANA_KEY = `0x${"ab".repeat(32)}` as Hex;

const order: DlnOrder = {
  makerOrderNonce: 1_718_000_000_123n,
  makerSrc: PAYER,
  giveChainId: 137n,
  giveTokenAddress: TOKEN,
  giveAmount: 10_130_000n,
  takeChainId: 777177n,
  takeTokenAddress: "0x",
  takeAmount: 10n ** 18n,
  receiverDst: RECEIVER,
  givePatchAuthoritySrc: PAYER,
  orderAuthorityAddressDst: AUTHORITY,
  allowedTakerDst: "0x",
  allowedCancelBeneficiarySrc: SOLANA_KEY,
  externalCall: "0x",
};

/** Big-endian hex of `n` in `bytes` bytes, without 0x: the test's own packing, independent of viem's encodePacked. */
const be = (n: bigint | number, bytes: number) =>
  BigInt(n)
    .toString(16)
    .padStart(bytes * 2, "0");
/** A field as DlnOrderLib packs it: one length byte, then the bytes. */
const field = (h: Hex) => be((h.length - 2) / 2, 1) + h.slice(2);

function packedByHand(o: DlnOrder, hasCall: boolean): Hex {
  return `0x${[
    be(o.makerOrderNonce, 8),
    field(o.makerSrc),
    be(o.giveChainId, 32),
    field(o.giveTokenAddress),
    be(o.giveAmount, 32),
    be(o.takeChainId, 32),
    field(o.takeTokenAddress),
    be(o.takeAmount, 32),
    field(o.receiverDst),
    field(o.givePatchAuthoritySrc),
    field(o.orderAuthorityAddressDst),
    field(o.allowedTakerDst),
    field(o.allowedCancelBeneficiarySrc),
    hasCall ? "01" : "00",
    hasCall ? keccak256(o.externalCall).slice(2) : "",
  ].join("")}`;
}

describe("dlnOrderId (DlnOrderLib.getOrderId)", () => {
  it("is keccak256 of the packed layout: u64 nonce, length-prefixed bytes fields, u256 chain ids and amounts, a bool", () => {
    const packed = packedByHand(order, false);
    // 8 + (1+20) + 32 + (1+20) + 32 + 32 + (1+0) + 32 + (1+20) + (1+20) + (1+20) + (1+0) + (1+32) + 1
    expect((packed.length - 2) / 2).toBe(277);
    expect(dlnOrderId(order)).toBe(keccak256(packed));
  });

  it("an external call adds the hash of its data after the bool", () => {
    const withCall = { ...order, externalCall: "0xdeadbeef" as Hex };
    expect(dlnOrderId(withCall)).toBe(keccak256(packedByHand(withCall, true)));
    expect(dlnOrderId(withCall)).not.toBe(dlnOrderId(order));
  });

  it("every field counts; the case of hex digits does not", () => {
    const ids = new Set([
      dlnOrderId(order),
      dlnOrderId({ ...order, makerOrderNonce: order.makerOrderNonce + 1n }),
      dlnOrderId({ ...order, giveAmount: order.giveAmount + 1n }),
      dlnOrderId({ ...order, allowedCancelBeneficiarySrc: "0x" }),
      dlnOrderId({ ...order, takeTokenAddress: evmAddressToBytes("0x0000000000000000000000000000000000000000") }),
    ]);
    expect(ids.size).toBe(5);
    expect(dlnOrderId({ ...order, receiverDst: RECEIVER.toUpperCase().replace("0X", "0x") as Hex })).toBe(dlnOrderId(order));
  });

  it("refuses a field longer than 255 bytes or not hex, as the contract reverts WrongAddressLength", () => {
    expect(() => dlnOrderId({ ...order, receiverDst: `0x${"00".repeat(256)}` })).toThrow("receiverDst is 256 bytes (at most 255)");
    expect(() => dlnOrderId({ ...order, makerSrc: "0x12z4" as Hex })).toThrow("makerSrc is not hex bytes");
  });
});

describe("ABI fragments", () => {
  it("have DLN's selectors", () => {
    const sel = (abi: readonly unknown[], name: string): string =>
      toFunctionSelector(getAbiItem({ abi: abi as never, name: name as never }) as never);
    expect(sel(dlnDestinationAbi, "sendEvmOrderCancel")).toBe("0xd38d9626");
    expect(sel(dlnDestinationAbi, "sendSolanaOrderCancel")).toBe("0x9327145d");
    expect(sel(dlnDestinationAbi, "deBridgeGate")).toBe("0xca777fbf");
    expect(sel(deBridgeGateAbi, "globalFixedNativeFee")).toBe("0x35087f0a");
    expect(sel(deBridgeGateAbi, "globalTransferFeeBps")).toBe("0x5c837198");
    expect(sel(deBridgeGateAbi, "getChainToConfig")).toBe("0x7796656c");
    expect(sel(deBridgeGateAbi, "feeDiscount")).toBe("0xb242e7cf");
    expect(DLN_ORDER_COMPONENTS.map((c) => c.type).join(",")).toBe(
      "uint64,bytes,uint256,bytes,uint256,uint256,bytes,uint256,bytes,bytes,bytes,bytes,bytes,bytes",
    );
  });

  it("a cancel's calldata round-trips with the order as DlnOrder", () => {
    const data = encodeFunctionData({ abi: dlnDestinationAbi, functionName: "sendEvmOrderCancel", args: [order, PAYER, 7n] });
    const { functionName, args } = decodeFunctionData({ abi: dlnDestinationAbi, data });
    expect(functionName).toBe("sendEvmOrderCancel");
    expect(args).toEqual([order, PAYER, 7n]);
  });
});

describe("address helpers", () => {
  it("an EVM address is its 20 bytes, and back (checksummed)", () => {
    const dead = "0x000000000000000000000000000000000000dEaD";
    expect(evmAddressToBytes(dead)).toBe("0x000000000000000000000000000000000000dead");
    expect(bytesToEvmAddress("0x000000000000000000000000000000000000dead")).toBe(dead);
    expect(() => bytesToEvmAddress(SOLANA_KEY)).toThrow("not a 20-byte EVM address");
    expect(() => bytesToEvmAddress("0x")).toThrow("not a 20-byte EVM address");
  });

  it("a 32-byte key as bytes, from raw bytes or hex", () => {
    expect(solanaKeyToBytes(new Uint8Array(32).fill(0xab))).toBe(SOLANA_KEY);
    expect(solanaKeyToBytes(SOLANA_KEY.toUpperCase().replace("0X", "0x") as Hex)).toBe(SOLANA_KEY);
    expect(() => solanaKeyToBytes(new Uint8Array(31))).toThrow("not a 32-byte key: 31 bytes");
    expect(() => solanaKeyToBytes(PAYER)).toThrow("not a 32-byte key");
  });
});
