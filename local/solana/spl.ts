import { getAddressDecoder, getAddressEncoder, getProgramDerivedAddress, type Address } from "@solana/kit";

// SPL Token account layouts (spl-token's `state.rs`), read and written by the local Solana without a program client:
// placing a mint at a fixed address and crediting tokens are direct account writes, as `anvil_setCode` and
// `anvil_setStorageAt` are on the EVM side.

export const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111" as Address;
/**
 * The memo programs litesvm 1.5 ships: `MemoSq4…` (`@solana-program/memo`'s LEGACY_MEMO_PROGRAM_ADDRESS_V3, the one
 * wallets and DLN use) and `Memo1Uh…` (its LEGACY_MEMO_PROGRAM_ADDRESS_V1). The package's default `Memo4c2p…` is not
 * there: pass LEGACY_MEMO_PROGRAM_ADDRESS_V3.
 */
export const LEGACY_MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address;
export const MEMO_PROGRAM = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo" as Address;

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;

export const isTokenProgram = (program: string): boolean => program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;

export type Mint = {
  mintAuthority: Address | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: Address | null;
};

export type TokenAccount = {
  mint: Address;
  owner: Address;
  amount: bigint;
  delegate: Address | null;
  /** 0 uninitialized, 1 initialized, 2 frozen. */
  state: number;
  /** Rent-exempt reserve of a wrapped-SOL account, null for other mints. */
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Address | null;
};

const addrEnc = getAddressEncoder();
const addrDec = getAddressDecoder();

function readOptionAddress(data: Uint8Array, at: number): Address | null {
  const tag = new DataView(data.buffer, data.byteOffset + at, 4).getUint32(0, true);
  return tag === 1 ? addrDec.decode(data.subarray(at + 4, at + 36)) : null;
}

function writeOptionAddress(data: Uint8Array, at: number, value: Address | null) {
  new DataView(data.buffer, data.byteOffset + at, 4).setUint32(0, value ? 1 : 0, true);
  if (value) data.set(addrEnc.encode(value), at + 4);
}

const u64 = (data: Uint8Array, at: number) => new DataView(data.buffer, data.byteOffset + at, 8).getBigUint64(0, true);
const setU64 = (data: Uint8Array, at: number, v: bigint) => new DataView(data.buffer, data.byteOffset + at, 8).setBigUint64(0, v, true);

/** Token-2022 pads extended mints and token accounts to 165 bytes and marks the kind at byte 165 (1 mint, 2 account). */
const isKind = (data: Uint8Array, base: number, kind: number) =>
  data.length === base || (data.length > TOKEN_ACCOUNT_SIZE && data[165] === kind);

export function decodeMint(data: Uint8Array): Mint | undefined {
  if (!isKind(data, MINT_SIZE, 1)) return undefined;
  const mint = {
    mintAuthority: readOptionAddress(data, 0),
    supply: u64(data, 36),
    decimals: data[44]!,
    isInitialized: data[45] === 1,
    freezeAuthority: readOptionAddress(data, 46),
  };
  return mint.isInitialized ? mint : undefined;
}

export function encodeMint(m: Mint): Uint8Array {
  const data = new Uint8Array(MINT_SIZE);
  writeOptionAddress(data, 0, m.mintAuthority);
  setU64(data, 36, m.supply);
  data[44] = m.decimals;
  data[45] = m.isInitialized ? 1 : 0;
  writeOptionAddress(data, 46, m.freezeAuthority);
  return data;
}

export function decodeTokenAccount(data: Uint8Array): TokenAccount | undefined {
  if (!isKind(data, TOKEN_ACCOUNT_SIZE, 2)) return undefined;
  const state = data[108]!;
  if (state === 0) return undefined;
  const nativeTag = new DataView(data.buffer, data.byteOffset + 109, 4).getUint32(0, true);
  return {
    mint: addrDec.decode(data.subarray(0, 32)),
    owner: addrDec.decode(data.subarray(32, 64)),
    amount: u64(data, 64),
    delegate: readOptionAddress(data, 72),
    state,
    isNative: nativeTag === 1 ? u64(data, 113) : null,
    delegatedAmount: u64(data, 121),
    closeAuthority: readOptionAddress(data, 129),
  };
}

export function encodeTokenAccount(t: TokenAccount): Uint8Array {
  const data = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  data.set(addrEnc.encode(t.mint), 0);
  data.set(addrEnc.encode(t.owner), 32);
  setU64(data, 64, t.amount);
  writeOptionAddress(data, 72, t.delegate);
  data[108] = t.state;
  new DataView(data.buffer, 109, 4).setUint32(0, t.isNative === null ? 0 : 1, true);
  if (t.isNative !== null) setU64(data, 113, t.isNative);
  setU64(data, 121, t.delegatedAmount);
  writeOptionAddress(data, 129, t.closeAuthority);
  return data;
}

/** The associated token account of an owner for a mint (the ATA program's PDA). */
export async function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address = TOKEN_PROGRAM): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [addrEnc.encode(owner), addrEnc.encode(tokenProgram), addrEnc.encode(mint)],
  });
  return pda;
}

export type UiTokenAmount = { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string };

/** A token amount as Solana's RPC shows it: `{amount: "1500000", decimals: 6, uiAmount: 1.5, uiAmountString: "1.5"}`. */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const s = amount.toString().padStart(decimals + 1, "0");
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  const uiAmountString = frac ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}
