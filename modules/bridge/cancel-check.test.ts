import { encodeFunctionData, type Address, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { checkCancelTx, CANCEL_SELECTORS } from "./cancel-check.js";
import { cancelValueRefusal, transferFeeOf, type MessagingFee } from "./cancel-fee.js";
import { DLN_SOLANA_CHAIN_ID, dlnDestinationAbi, dlnOrderId, evmAddressToBytes, type DlnOrder } from "./dln-order.js";

// The cancel check decodes DLN's calldata (the same ABI on real DLN and on the local stand-in) and signs only this
// order's cancel, refunding the payer; the value bound is deBridge's messaging fee plus a bounded execution fee.

const AUTHORITY = "0x1111111111111111111111111111111111111111" as Address;
const PAYER = "0x2222222222222222222222222222222222222222" as Address;
const DESTINATION = "0xE7351Fd770A37282b91D153Ee690B63579D6dd7f" as Address;
const SOLANA_PAYER = `0x${"ab".repeat(32)}` as Hex;

const order = (over: Partial<DlnOrder> = {}): DlnOrder => ({
  makerOrderNonce: 1_764_000_000_000n,
  makerSrc: evmAddressToBytes(PAYER),
  giveChainId: 8453n,
  giveTokenAddress: evmAddressToBytes("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
  giveAmount: 10_050_000n,
  takeChainId: 137n,
  takeTokenAddress: evmAddressToBytes("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
  takeAmount: 10_000_000n,
  receiverDst: evmAddressToBytes("0x3333333333333333333333333333333333333333"),
  givePatchAuthoritySrc: evmAddressToBytes(PAYER),
  orderAuthorityAddressDst: evmAddressToBytes(AUTHORITY),
  allowedTakerDst: "0x",
  allowedCancelBeneficiarySrc: "0x",
  externalCall: "0x",
  ...over,
});

const evmCancel = (o: DlnOrder, beneficiary: Address = PAYER) => ({
  to: DESTINATION.toLowerCase(),
  from: AUTHORITY,
  chainId: 137,
  data: encodeFunctionData({ abi: dlnDestinationAbi, functionName: "sendEvmOrderCancel", args: [o, beneficiary, 10n ** 17n] }),
});
const want = (o: DlnOrder, over: Record<string, unknown> = {}) => ({
  chainId: 137,
  authority: AUTHORITY,
  destination: DESTINATION,
  orderId: dlnOrderId(o),
  srcChainId: Number(o.giveChainId),
  payer: PAYER as string,
  ...over,
});

describe("checkCancelTx", () => {
  it("accepts DLN's sendEvmOrderCancel of this order, refunding the payer; selectors are DLN's", () => {
    expect(CANCEL_SELECTORS).toEqual(["0xd38d9626", "0x9327145d"]);
    const o = order();
    const c = checkCancelTx(evmCancel(o), want(o));
    expect(c).toEqual({ order: o, beneficiary: PAYER, executionFee: 10n ** 17n, solanaRewardsWei: 0n });
  });

  it("refuses another chain, sender, destination, function, order, route, authority or beneficiary", () => {
    const o = order();
    const tx = evmCancel(o);
    expect(checkCancelTx({ ...tx, chainId: 1 }, want(o))).toMatch(/not ours to send$/);
    expect(checkCancelTx({ ...tx, from: PAYER }, want(o))).toMatch(/not ours to send$/);
    expect(checkCancelTx(tx, want(o, { destination: undefined }))).toBe(
      "no bridge destination contract configured for chain 137: cannot cancel",
    );
    expect(checkCancelTx({ ...tx, to: PAYER }, want(o))).toBe(`cancel-tx to ${PAYER}, not the bridge destination ${DESTINATION}: refused`);
    expect(checkCancelTx({ ...tx, data: `0xa9059cbb${"00".repeat(64)}` }, want(o))).toBe(
      "cancel-tx calls 0xa9059cbb, not a DLN order cancel: refused",
    );
    expect(checkCancelTx({ ...tx, data: "0xd38d9626" }, want(o))).toBe("cancel-tx calldata does not decode as DLN's cancel: refused");
    // Another order (one wei more to the receiver) than the one we track.
    const other = order({ takeAmount: 10_000_001n });
    expect(checkCancelTx(evmCancel(other), want(o))).toBe(`cancel-tx order does not hash to ${dlnOrderId(o)}: refused`);
    // An order of the right id but another route cannot exist; an order claiming another destination chain is refused.
    const elsewhere = order({ takeChainId: 56n });
    expect(checkCancelTx(evmCancel(elsewhere), want(elsewhere))).toBe("cancel-tx order goes from 8453 to 56, not 8453 to 137: refused");
    const theirs = order({ orderAuthorityAddressDst: evmAddressToBytes(PAYER) });
    expect(checkCancelTx(evmCancel(theirs), want(theirs))).toBe(`cancel-tx order's authority ${PAYER} is not ours: refused`);
    const thief = "0x4444444444444444444444444444444444444444" as Address;
    expect(checkCancelTx(evmCancel(o, thief), want(o))).toBe(`cancel-tx refunds ${thief}, not the payer ${PAYER}: refused`);
    // An EVM-source order must use sendEvmOrderCancel; a Solana one sendSolanaOrderCancel.
    const sol = order({ giveChainId: BigInt(DLN_SOLANA_CHAIN_ID), makerSrc: SOLANA_PAYER });
    const solData = encodeFunctionData({
      abi: dlnDestinationAbi,
      functionName: "sendSolanaOrderCancel",
      args: [sol, SOLANA_PAYER, 10n ** 17n, 2_000n, 3_000n],
    });
    expect(checkCancelTx({ ...tx, data: solData }, want(o))).toBe(
      "cancel-tx calls sendSolanaOrderCancel for an order from chain 8453: refused",
    );
    expect(checkCancelTx({ ...tx, data: solData }, want(sol, { payer: SOLANA_PAYER }))).toEqual({
      order: sol,
      beneficiary: SOLANA_PAYER,
      executionFee: 10n ** 17n,
      solanaRewardsWei: 5_000n * 10n ** 10n,
    });
    expect(checkCancelTx({ ...tx, data: solData }, want(sol, { payer: `0x${"cd".repeat(32)}` }))).toMatch(
      /^cancel-tx refunds 0xabab.*: refused$/,
    );
  });
});

describe("the cancel's value: deBridge's messaging fee plus a bounded execution fee", () => {
  const polygon: MessagingFee = { gate: DESTINATION, fixFee: 5n * 10n ** 17n, transferFeeBps: 0, discountTransferBps: 0 };

  it("0.5 MATIC on Polygon plus the keepers' share is accepted; below the fee would revert; above the bound is refused", () => {
    const maxExtra = 2n * 10n ** 17n; // e.g. 5 USD at 25 USD a MATIC
    expect(cancelValueRefusal(6n * 10n ** 17n, polygon, maxExtra)).toBeNull();
    expect(cancelValueRefusal(7n * 10n ** 17n, polygon, maxExtra)).toBeNull();
    expect(cancelValueRefusal(5n * 10n ** 17n - 1n, polygon, maxExtra)).toBe(
      "cancel-tx value 499999999999999999 wei below the bridge's messaging fee 500000000000000000: would revert",
    );
    expect(cancelValueRefusal(7n * 10n ** 17n + 1n, polygon, maxExtra)).toBe(
      "cancel-tx value 700000000000000001 wei: 200000000000000001 above the messaging fee 500000000000000000, more than the 200000000000000000 allowed (BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD): refused",
    );
    expect(cancelValueRefusal(6n * 10n ** 17n, polygon, maxExtra, { wei: 55n * 10n ** 16n, chainId: 137 })).toBe(
      "cancel-tx value 600000000000000000 wei above BRIDGE_CANCEL_MAX_VALUE_WEI_137 550000000000000000: refused",
    );
  });

  it("a transfer fee in bps of what is above the fixed fee, less the sender's discount, is not counted as extra", () => {
    const fee: MessagingFee = { gate: DESTINATION, fixFee: 10n ** 15n, transferFeeBps: 10, discountTransferBps: 5_000 };
    // (2e15 - 1e15) * 10 / 10000 = 1e12, half of it discounted.
    expect(transferFeeOf(fee, 2n * 10n ** 15n)).toBe(5n * 10n ** 11n);
    expect(transferFeeOf(fee, 10n ** 15n)).toBe(0n);
    const value = 2n * 10n ** 15n;
    expect(cancelValueRefusal(value, fee, value - 10n ** 15n - 5n * 10n ** 11n)).toBeNull();
    expect(cancelValueRefusal(value, fee, value - 10n ** 15n - 5n * 10n ** 11n - 1n)).toMatch(/more than the .* allowed/);
  });
});
