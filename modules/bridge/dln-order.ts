import { bytesToHex, encodePacked, getAddress, isHex, keccak256, size, type Address, type Hex } from "viem";

// deBridge DLN's order, in TypeScript: the `Order` struct of DLN's MIT `DlnOrderLib`
// (github.com/debridge-finance/dln-contracts, contracts/libraries/DlnOrderLib.sol; copied in contracts/DlnOrderLib.sol),
// its id (`getOrderId`: keccak256 of a packed encoding), and the ABI fragments of DlnDestination and DeBridgeGate the
// bridge reads and decodes. The same on real DLN and on the local stand-in (local/bridge/), whose contracts take DLN's
// struct and signatures. Imports viem only.

/** DLN's chain id of Solana (its own id, not an EVM one). */
export const DLN_SOLANA_CHAIN_ID = 7565164;

/**
 * DLN's `Order`. Addresses are `bytes` so that one struct carries EVM (20-byte) and Solana (32-byte) parties: an EVM
 * address is its 20 bytes (`evmAddressToBytes`), the native coin is the zero address's 20 bytes, an empty field is
 * `"0x"`. Amounts are in the token's smallest units.
 */
export type DlnOrder = {
  /** The maker's salt (DLN's API uses a millisecond timestamp). */
  makerOrderNonce: bigint;
  /** Who created the order on the source (the transaction's origin on EVM). */
  makerSrc: Hex;
  giveChainId: bigint;
  giveTokenAddress: Hex;
  /** What the source escrows. */
  giveAmount: bigint;
  takeChainId: bigint;
  takeTokenAddress: Hex;
  /** Exactly what `receiverDst` gets on the destination. */
  takeAmount: bigint;
  receiverDst: Hex;
  /** May add to the give side on the source. */
  givePatchAuthoritySrc: Hex;
  /** May cancel the order on the destination (and name who gets the refund on the source). */
  orderAuthorityAddressDst: Hex;
  /** Only this taker may fulfil ("0x": anyone). */
  allowedTakerDst: Hex;
  /** Only this address may receive a cancel's refund ("0x": whomever the authority names). */
  allowedCancelBeneficiarySrc: Hex;
  /** An external call on the destination ("0x": none). */
  externalCall: Hex;
};

/**
 * The `Order` tuple's components, for viem ABI items (field order is the struct's, which the ABI encoding follows).
 * @example
 * encodeAbiParameters([{ type: "tuple", components: DLN_ORDER_COMPONENTS }], [order])
 */
export const DLN_ORDER_COMPONENTS = [
  { name: "makerOrderNonce", type: "uint64" },
  { name: "makerSrc", type: "bytes" },
  { name: "giveChainId", type: "uint256" },
  { name: "giveTokenAddress", type: "bytes" },
  { name: "giveAmount", type: "uint256" },
  { name: "takeChainId", type: "uint256" },
  { name: "takeTokenAddress", type: "bytes" },
  { name: "takeAmount", type: "uint256" },
  { name: "receiverDst", type: "bytes" },
  { name: "givePatchAuthoritySrc", type: "bytes" },
  { name: "orderAuthorityAddressDst", type: "bytes" },
  { name: "allowedTakerDst", type: "bytes" },
  { name: "allowedCancelBeneficiarySrc", type: "bytes" },
  { name: "externalCall", type: "bytes" },
] as const;

const ORDER_PARAM = { name: "_order", type: "tuple", internalType: "struct DlnOrderLib.Order", components: DLN_ORDER_COMPONENTS } as const;

/**
 * DlnDestination's functions a cancel and its checks use (DLN v1.4.0; the local BridgeDestination has the same):
 * `sendEvmOrderCancel` (selector 0xd38d9626), `sendSolanaOrderCancel` (0x9327145d), `deBridgeGate()` (0xca777fbf),
 * `takeOrders(orderId)` (the destination's state of an order: status 0 NotSet, 1 Fulfilled, 2 SentUnlock,
 * 3 SentCancel) and `getOrderId(order)`.
 * @example
 * decodeFunctionData({ abi: dlnDestinationAbi, data: cancelTx.data }) // { functionName: "sendEvmOrderCancel", args: [order, beneficiary, executionFee] }
 */
export const dlnDestinationAbi = [
  {
    type: "function",
    name: "sendEvmOrderCancel",
    stateMutability: "payable",
    inputs: [ORDER_PARAM, { name: "_cancelBeneficiary", type: "address" }, { name: "_executionFee", type: "uint256" }],
    outputs: [],
  },
  {
    type: "function",
    name: "sendSolanaOrderCancel",
    stateMutability: "payable",
    inputs: [
      ORDER_PARAM,
      { name: "_cancelBeneficiary", type: "bytes32" },
      { name: "_executionFee", type: "uint256" },
      { name: "_initWalletIfNeededInstructionReward", type: "uint64" },
      { name: "_claimCancelInstructionReward", type: "uint64" },
    ],
    outputs: [],
  },
  { type: "function", name: "deBridgeGate", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "address" }] },
  {
    type: "function",
    name: "takeOrders",
    stateMutability: "view",
    inputs: [{ name: "", type: "bytes32" }],
    outputs: [
      { name: "status", type: "uint8" },
      { name: "takerAddress", type: "address" },
      { name: "giveChainId", type: "uint32" },
      { name: "bigGiveChainId", type: "uint256" },
    ],
  },
  { type: "function", name: "getOrderId", stateMutability: "pure", inputs: [ORDER_PARAM], outputs: [{ name: "", type: "bytes32" }] },
] as const;

/**
 * DeBridgeGate's fee getters (debridge-contracts-v1 `IDeBridgeGate`; the local DeBridgeGateStandIn has the same). A
 * native message to `chainIdTo` pays `fixedNativeFee` of the route (or `globalFixedNativeFee` when that is 0) less the
 * sender's `discountFixBps`, plus `transferFeeBps` (or the global bps) of the rest.
 * @example
 * await client.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "globalFixedNativeFee" }) // 500000000000000000n on Polygon
 */
export const deBridgeGateAbi = [
  { type: "function", name: "globalFixedNativeFee", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "uint256" }] },
  { type: "function", name: "globalTransferFeeBps", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "uint16" }] },
  {
    type: "function",
    name: "getChainToConfig",
    stateMutability: "view",
    inputs: [{ name: "", type: "uint256" }],
    outputs: [
      { name: "fixedNativeFee", type: "uint256" },
      { name: "isSupported", type: "bool" },
      { name: "transferFeeBps", type: "uint16" },
    ],
  },
  {
    type: "function",
    name: "feeDiscount",
    stateMutability: "view",
    inputs: [{ name: "", type: "address" }],
    outputs: [
      { name: "discountFixBps", type: "uint16" },
      { name: "discountTransferBps", type: "uint16" },
    ],
  },
] as const;

/** DlnOrderLib.MAX_ADDRESS_LENGTH: an address field's length is one byte in the id's encoding. */
const MAX_ADDRESS_LENGTH = 255;

const fieldOf = (name: keyof DlnOrder, value: Hex): [number, Hex] => {
  if (!isHex(value, { strict: true })) throw new TypeError(`DLN order ${name} is not hex bytes: ${value}`);
  const n = size(value);
  if (n > MAX_ADDRESS_LENGTH) throw new RangeError(`DLN order ${name} is ${n} bytes (at most ${MAX_ADDRESS_LENGTH})`);
  return [n, value];
};

/**
 * DLN's order id: `DlnOrderLib.getOrderId`, keccak256 of the packed encoding (nonce u64, then each address field as a
 * one-byte length and its bytes, amounts and chain ids as u256, a bool "has external call" and, if so, the call's
 * keccak256). Throws on a field that is not hex or longer than 255 bytes (the contract reverts WrongAddressLength).
 * @example
 * dlnOrderId({ makerOrderNonce: 1718000000000n, makerSrc: evmAddressToBytes(payer), giveChainId: 137n, … }) // "0x9ee6…5a01"
 */
export function dlnOrderId(order: DlnOrder): Hex {
  const [makerLen, maker] = fieldOf("makerSrc", order.makerSrc);
  const [giveTokenLen, giveToken] = fieldOf("giveTokenAddress", order.giveTokenAddress);
  const [takeTokenLen, takeToken] = fieldOf("takeTokenAddress", order.takeTokenAddress);
  const [receiverLen, receiver] = fieldOf("receiverDst", order.receiverDst);
  const [patchLen, patch] = fieldOf("givePatchAuthoritySrc", order.givePatchAuthoritySrc);
  const [authorityLen, authority] = fieldOf("orderAuthorityAddressDst", order.orderAuthorityAddressDst);
  const [takerLen, taker] = fieldOf("allowedTakerDst", order.allowedTakerDst);
  const [cancelLen, cancel] = fieldOf("allowedCancelBeneficiarySrc", order.allowedCancelBeneficiarySrc);
  if (!isHex(order.externalCall, { strict: true })) throw new TypeError(`DLN order externalCall is not hex bytes: ${order.externalCall}`);
  const hasCall = size(order.externalCall) > 0;
  const packed = encodePacked(
    [
      "uint64",
      "uint8",
      "bytes",
      "uint256",
      "uint8",
      "bytes",
      "uint256",
      "uint256",
      "uint8",
      "bytes",
      "uint256",
      "uint8",
      "bytes",
      "uint8",
      "bytes",
      "uint8",
      "bytes",
      "uint8",
      "bytes",
      "uint8",
      "bytes",
      "bool",
    ],
    [
      order.makerOrderNonce,
      makerLen,
      maker,
      order.giveChainId,
      giveTokenLen,
      giveToken,
      order.giveAmount,
      order.takeChainId,
      takeTokenLen,
      takeToken,
      order.takeAmount,
      receiverLen,
      receiver,
      patchLen,
      patch,
      authorityLen,
      authority,
      takerLen,
      taker,
      cancelLen,
      cancel,
      hasCall,
    ],
  );
  return keccak256(hasCall ? encodePacked(["bytes", "bytes32"], [packed, keccak256(order.externalCall)]) : packed);
}

/**
 * An EVM address as a DLN order field: its 20 bytes, lower-case.
 * @example
 * evmAddressToBytes("0x000000000000000000000000000000000000dEaD") // "0x000000000000000000000000000000000000dead"
 */
export function evmAddressToBytes(address: Address): Hex {
  return getAddress(address).toLowerCase() as Hex;
}

/**
 * A 20-byte DLN order field as a checksummed EVM address; throws when the field is not exactly 20 bytes (a Solana key,
 * or empty).
 * @example
 * bytesToEvmAddress("0x000000000000000000000000000000000000dead") // "0x000000000000000000000000000000000000dEaD"
 */
export function bytesToEvmAddress(bytes: Hex): Address {
  if (!isHex(bytes, { strict: true }) || size(bytes) !== 20) throw new RangeError(`not a 20-byte EVM address: ${bytes}`);
  return getAddress(bytes);
}

/**
 * A 32-byte key (a Solana account: its raw bytes, or already as hex) as a DLN order field or a `bytes32` argument;
 * throws on another length. Base58 text is decoded by the caller (this module imports viem only).
 * @example
 * solanaKeyToBytes(new Uint8Array(32).fill(1)) // "0x0101…01" (32 bytes)
 */
export function solanaKeyToBytes(key: Uint8Array | Hex): Hex {
  const hex = typeof key === "string" ? key.toLowerCase() : bytesToHex(key);
  if (!isHex(hex, { strict: true }) || size(hex as Hex) !== 32)
    throw new RangeError(`not a 32-byte key: ${typeof key === "string" ? key : `${key.length} bytes`}`);
  return hex as Hex;
}
