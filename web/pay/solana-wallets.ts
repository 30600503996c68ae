import { getBase58Decoder } from "@solana/kit";
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount } from "@wallet-standard/base";

/**
 * Solana wallets for the payer page through the Wallet Standard (`@wallet-standard/app`): the wallets that registered
 * themselves (Phantom, Solflare, Backpack, …) and can connect and sign-and-send on the page's Solana chain
 * (`solana:mainnet`, or `solana:localnet` on the local stack). The page never reads Solana itself: balances come from
 * the service (…/bridge/holdings), and the wallet sends the transaction to its own RPC.
 */

export type SolanaWallet = {
  name: string;
  /** A data: URI (the Wallet Standard requires one). */
  icon: string;
  /** Asks the wallet for an account: its base58 address. */
  connect(): Promise<string>;
  /** Signs DLN's transaction (0x-hex of a VersionedTransaction) and sends it: the signature, base58. */
  signAndSend(txHex: string): Promise<string>;
};

type ConnectFeature = { connect(input?: { silent?: boolean }): Promise<{ accounts: readonly WalletAccount[] }> };
type SignAndSendFeature = {
  signAndSendTransaction(
    ...inputs: { account: WalletAccount; transaction: Uint8Array; chain: string }[]
  ): Promise<readonly { signature: Uint8Array }[]>;
};

const CONNECT = "standard:connect";
const SIGN_AND_SEND = "solana:signAndSendTransaction";

/** Whether a wallet can pay here: it connects, signs and sends, on this chain. */
function usable(w: Wallet, chain: string): boolean {
  return CONNECT in w.features && SIGN_AND_SEND in w.features && w.chains.indexOf(chain as `${string}:${string}`) >= 0;
}

function hexBytes(hex: string): Uint8Array {
  const h = hex.slice(0, 2) === "0x" ? hex.slice(2) : hex;
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
  return out;
}

function wrap(w: Wallet, chain: string): SolanaWallet {
  let account: WalletAccount | null = null;
  return {
    name: w.name,
    icon: w.icon,
    async connect() {
      const { accounts } = await (w.features[CONNECT] as ConnectFeature).connect();
      account = accounts.filter((a) => a.chains.indexOf(chain as `${string}:${string}`) >= 0)[0] || accounts[0] || null;
      if (!account) throw new Error(`${w.name} shared no account`);
      return account.address;
    },
    async signAndSend(txHex) {
      if (!account) throw new Error(`${w.name} is not connected`);
      const [out] = await (w.features[SIGN_AND_SEND] as SignAndSendFeature).signAndSendTransaction({
        account,
        transaction: hexBytes(txHex),
        chain,
      });
      if (!out) throw new Error(`${w.name} sent no transaction`);
      return getBase58Decoder().decode(out.signature);
    },
  };
}

/**
 * Calls `onChange` with the usable wallets now and whenever one registers or leaves (wallets may load after the page).
 * @example watchSolanaWallets("solana:mainnet", (ws) => render(ws));
 */
export function watchSolanaWallets(chain: string, onChange: (wallets: SolanaWallet[]) => void): void {
  const registry = getWallets();
  const emit = () =>
    onChange(
      registry
        .get()
        .filter((w) => usable(w, chain))
        .map((w) => wrap(w, chain)),
    );
  registry.on("register", emit);
  registry.on("unregister", emit);
  emit();
}
