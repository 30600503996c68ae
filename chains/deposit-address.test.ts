import { describe, expect, it } from "vitest";
import { getAddress, isAddress, isHex, type Address } from "viem";
import {
  computeWalletAddress,
  gasTankSalt,
  implementationAddress,
  paymentSalt,
  vaultSalt,
  walletCreate2Salt,
  walletInitCode,
} from "./deposit-address.js";

const factory = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as Address;
const payout = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as Address;
const other = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" as Address;

describe("salts", () => {
  it("are deterministic 32-byte hashes", () => {
    for (const s of [paymentSalt("pay_1"), vaultSalt("user-1", payout), gasTankSalt("m_1")]) {
      expect(isHex(s)).toBe(true);
      expect(s).toHaveLength(66);
    }
    expect(paymentSalt("pay_1")).toBe(paymentSalt("pay_1"));
    expect(vaultSalt("user-1", payout)).toBe(vaultSalt("user-1", payout));
    expect(gasTankSalt("m_1")).toBe(gasTankSalt("m_1"));
  });

  it("are distinct across ids and domains", () => {
    const all = [
      paymentSalt("a"),
      paymentSalt("b"),
      gasTankSalt("a"),
      gasTankSalt("b"),
      vaultSalt("a", payout),
      vaultSalt("b", payout),
      vaultSalt("a", other),
    ];
    expect(new Set(all).size).toBe(all.length);
  });

  it("vault salt ignores the wallet's checksum case", () => {
    expect(vaultSalt("u", payout.toLowerCase() as Address)).toBe(vaultSalt("u", getAddress(payout)));
  });
});

describe("computeWalletAddress", () => {
  const impl = implementationAddress(factory);

  it("is deterministic and checksummed", () => {
    const a = computeWalletAddress({ factory, implementation: impl, salt: paymentSalt("p"), payout });
    expect(isAddress(a, { strict: true })).toBe(true);
    expect(a).toBe(getAddress(a));
    expect(computeWalletAddress({ factory, implementation: impl, salt: paymentSalt("p"), payout })).toBe(a);
    // The implementation defaults to the factory's first CREATE; lowercase inputs give the same address.
    expect(computeWalletAddress({ factory, salt: paymentSalt("p"), payout })).toBe(a);
    expect(
      computeWalletAddress({ factory: factory.toLowerCase() as Address, salt: paymentSalt("p"), payout: payout.toLowerCase() as Address }),
    ).toBe(a);
  });

  it("changes with salt, payout, factory and implementation", () => {
    const base = { factory, implementation: impl, salt: paymentSalt("p"), payout };
    const all = [
      computeWalletAddress(base),
      computeWalletAddress({ ...base, salt: paymentSalt("q") }),
      computeWalletAddress({ ...base, payout: other }),
      computeWalletAddress({ ...base, factory: other }),
      computeWalletAddress({ ...base, implementation: other }),
    ];
    expect(new Set(all).size).toBe(all.length);
  });

  it("builds the 55-byte OpenZeppelin EIP-1167 clone init code and commits the payout through the salt", () => {
    const code = walletInitCode(impl);
    expect((code.length - 2) / 2).toBe(10 + 45);
    expect(code.toLowerCase()).toContain(impl.slice(2).toLowerCase());
    expect(walletCreate2Salt(paymentSalt("p"), payout)).not.toBe(walletCreate2Salt(paymentSalt("p"), other));
  });
});
