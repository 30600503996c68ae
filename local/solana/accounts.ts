import { createHash, createPrivateKey, createPublicKey } from "node:crypto";
import { createKeyPairSignerFromPrivateKeyBytes, getBase58Decoder, type Address, type KeyPairSigner } from "@solana/kit";

// Keys of the local Solana (local/solana/svm.ts), as ANVIL_KEYS are the local EVM chains': fixed, public, for the local
// stack and tests only. Each is the ed25519 key whose 32-byte seed is sha256("chainpay/local-solana/<label>").

export type LocalSolanaKey = {
  label: string;
  address: Address;
  /** The 32-byte ed25519 seed (private key). */
  seed: Uint8Array;
  /** Solana's 64-byte secret key (seed ‖ public key), as `solana-keygen` files and web3.js `Keypair.fromSecretKey` hold it. */
  secretKey: Uint8Array;
  /** A @solana/kit signer of this key (WebCrypto; made on first call). */
  signer(): Promise<KeyPairSigner>;
};

// PKCS#8 wrapping of a raw ed25519 seed (RFC 8410).
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The deterministic key of a label: the same address on every machine and run.
 *
 *   localSolanaKey("payer-2").address; // the same base58 address every time
 */
export function localSolanaKey(label: string): LocalSolanaKey {
  const seed = new Uint8Array(createHash("sha256").update(`chainpay/local-solana/${label}`).digest());
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
  const spki = createPublicKey(priv).export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  let signer: Promise<KeyPairSigner> | undefined;
  return {
    label,
    address: getBase58Decoder().decode(publicKey) as Address,
    seed,
    secretKey,
    signer: () => (signer ??= createKeyPairSignerFromPrivateKeyBytes(seed)),
  };
}

/**
 * The local Solana's roles: the mint authority of the USDC placed at Circle's mint address, the DLN stand-in's escrow
 * (holds what Solana-source orders give), the solver, and a payer for tests and the demo.
 */
export const LOCAL_SOLANA = {
  usdcAuthority: localSolanaKey("usdc-authority"),
  escrow: localSolanaKey("dln-escrow"),
  solver: localSolanaKey("dln-solver"),
  payer: localSolanaKey("payer"),
};
