import { getBase58Decoder } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { LOCAL_SOLANA, localSolanaKey } from "./accounts.js";

describe("the local Solana's keys", () => {
  it("are fixed: the same addresses on every machine and run", () => {
    // Changing how keys are derived changes every local address (docs/solana.md): do it on purpose only.
    expect(LOCAL_SOLANA.usdcAuthority.address).toBe("FzyEZ5DKvL7bUa7YiBgENS7X66shUAuZy9kZ7bt1KaQN");
    expect(localSolanaKey("usdc-authority").address).toBe(LOCAL_SOLANA.usdcAuthority.address);
    const addresses = Object.values(LOCAL_SOLANA).map((k) => k.address);
    expect(new Set(addresses).size).toBe(addresses.length);
  });

  it("sign as their address, and hold Solana's 64-byte secret key (seed ‖ public key)", async () => {
    for (const key of Object.values(LOCAL_SOLANA)) {
      const signer = await key.signer();
      expect(signer.address).toBe(key.address);
      expect(key.secretKey.subarray(0, 32)).toEqual(key.seed);
      expect(getBase58Decoder().decode(key.secretKey.subarray(32))).toBe(key.address);
    }
    expect(await LOCAL_SOLANA.payer.signer()).toBe(await LOCAL_SOLANA.payer.signer());
  });
});
