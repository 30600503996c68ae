import { fileURLToPath } from "node:url";
import {
  createKeyPairFromBytes,
  createSolanaRpc,
  getAddressEncoder,
  getAddressFromPublicKey,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  signTransaction,
  type Address,
} from "@solana/kit";
import { build } from "esbuild";
import type { BrowserContext, Page } from "playwright-core";

/**
 * A Solana browser wallet for Chromium tests, as Phantom or Solflare are to the payer page: a Wallet Standard wallet
 * (registered with `registerWallet` of `@wallet-standard/wallet` before the page's scripts run) whose
 * `solana:signAndSendTransaction` is served in Node: the transaction is decoded with @solana/kit, signed with the
 * key and sent to `rpcUrl` (the local Solana's JSON-RPC front). The key never enters the page. It approves at once
 * (no prompts) unless `refuse` says the user rejects.
 *
 *   const wallet = await injectSolanaWallet(page, { secretKey: LOCAL_SOLANA.payer.secretKey, rpcUrl: stack.solana.rpcUrl });
 *   await page.goto(url); // getWallets().get() holds "Test Solana Wallet" on solana:localnet
 *   wallet.sent // [signature (base58), …]
 */

export const TEST_SOLANA_WALLET_ICON = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#7c3aed"/><path d="M9 20.5h11.5l2.5-2.5H11.5zM9 14h11.5l2.5 2.5H11.5zM9 11.5h11.5L23 9H11.5z" fill="#fff"/></svg>',
).toString("base64")}`;

export type SolanaWalletFeatures = {
  /** `standard:connect` (default true). */
  connect?: boolean;
  /** `standard:events` (default true). */
  events?: boolean;
  /** `solana:signAndSendTransaction` (default true): without it the payer page must not offer the wallet. */
  signAndSend?: boolean;
};

type KeyPair = Awaited<ReturnType<typeof createKeyPairFromBytes>>;

export type SolanaWalletOptions = (
  | { /** Solana's 64-byte secret key (seed ‖ public key), as LocalSolanaKey.secretKey. */ secretKey: Uint8Array; keyPair?: never }
  | { /** An ed25519 CryptoKeyPair, e.g. a KeyPairSigner's `keyPair`. */ keyPair: KeyPair; secretKey?: never }
) & {
  /** The Solana JSON-RPC the wallet sends to (the stack's SOLANA_RPC_URL). */
  rpcUrl: string;
  /** The one chain the wallet and its account are on; default "solana:localnet". */
  chain?: string;
  /** Default "Test Solana Wallet". */
  name?: string;
  features?: SolanaWalletFeatures;
  /** The user rejects these requests: the page's call fails with "User rejected the request." (code 4001). */
  refuse?: (method: "connect" | "signAndSend") => boolean;
};

export type SolanaWalletRequest =
  | { method: "connect"; silent: boolean; error?: string }
  | {
      method: "signAndSend";
      chain: string;
      account: string;
      /** The transaction as the page handed it, base64. */
      transaction: string;
      options?: Record<string, unknown>;
      /** base58, when it was sent. */
      signature?: string;
      error?: string;
    };

export type InjectedSolanaWallet = {
  /** The account's base58 address. */
  address: Address;
  name: string;
  chain: string;
  /** Every request the page made, in order. */
  requests: SolanaWalletRequest[];
  /** Signatures (base58) of the transactions the wallet signed and sent. */
  sent: string[];
};

type Answer = { result?: string; error?: { code: number; message: string } };

/** Everything the page needs, put into the bundle with `define` (no secret among it). */
type PageConfig = {
  binding: string;
  name: string;
  icon: string;
  chain: string;
  address: string;
  publicKey: number[];
  features: Required<SolanaWalletFeatures>;
};

// The in-page wallet (bundled with esbuild; ES2019 once lowered). It holds the address and public key only: connect
// and signAndSendTransaction call the Node binding, bytes crossing as base64.
const PAGE_SOURCE = `
import { registerWallet } from "@wallet-standard/wallet";

const config = __SOLANA_TEST_WALLET__;
const call = (method, params) => window[config.binding](method, params);
const toBase64 = (bytes) => {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
};
const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const answer = async (method, params) => {
  const out = await call(method, params);
  if (out.error) throw Object.assign(new Error(out.error.message), { code: out.error.code });
  return out.result;
};

const accountFeatures = config.features.signAndSend ? ["solana:signAndSendTransaction"] : [];
const account = Object.freeze({
  address: config.address,
  publicKey: new Uint8Array(config.publicKey),
  chains: Object.freeze([config.chain]),
  features: Object.freeze(accountFeatures),
});
const listeners = {};
const features = {};
if (config.features.connect)
  features["standard:connect"] = {
    version: "1.0.0",
    async connect(input) {
      await answer("connect", { silent: !!(input && input.silent) });
      return { accounts: [account] };
    },
  };
if (config.features.events)
  features["standard:events"] = {
    version: "1.0.0",
    on(event, listener) {
      (listeners[event] = listeners[event] || []).push(listener);
      return () => {
        listeners[event] = (listeners[event] || []).filter((l) => l !== listener);
      };
    },
  };
if (config.features.signAndSend)
  features["solana:signAndSendTransaction"] = {
    version: "1.0.0",
    supportedTransactionVersions: ["legacy", 0],
    async signAndSendTransaction(...inputs) {
      const outputs = [];
      for (const input of inputs) {
        const signature = await answer("signAndSend", {
          account: input.account && input.account.address,
          chain: input.chain,
          transaction: toBase64(input.transaction),
          options: input.options,
        });
        outputs.push({ signature: fromBase64(signature) });
      }
      return outputs;
    },
  };

registerWallet({
  version: "1.0.0",
  name: config.name,
  icon: config.icon,
  chains: [config.chain],
  features,
  get accounts() {
    return [account];
  },
});
`;

const REPO = fileURLToPath(new URL("../..", import.meta.url));
let bindings = 0;

/** The in-page wallet's script for `config`, one IIFE. */
async function pageScript(config: PageConfig): Promise<string> {
  const out = await build({
    stdin: { contents: PAGE_SOURCE, resolveDir: REPO, loader: "js", sourcefile: "solana-test-wallet.js" },
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2019",
    define: { __SOLANA_TEST_WALLET__: JSON.stringify(config) },
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!;

/**
 * Installs the wallet in `page` (or every page of a context), before its first navigation. Several wallets may be
 * installed in one page (each has its own binding).
 */
export async function injectSolanaWallet(target: Page | BrowserContext, opts: SolanaWalletOptions): Promise<InjectedSolanaWallet> {
  const chain = opts.chain ?? "solana:localnet";
  const name = opts.name ?? "Test Solana Wallet";
  const features: Required<SolanaWalletFeatures> = { connect: true, events: true, signAndSend: true, ...opts.features };
  const keyPair = opts.keyPair ?? (await createKeyPairFromBytes(opts.secretKey!));
  const address = await getAddressFromPublicKey(keyPair.publicKey);
  const rpc = createSolanaRpc(opts.rpcUrl);
  const wallet: InjectedSolanaWallet = { address, name, chain, requests: [], sent: [] };

  const signAndSend = async (
    p: { account?: string; chain?: string; transaction: string; options?: Record<string, unknown> },
    request: SolanaWalletRequest & { method: "signAndSend" },
  ): Promise<string> => {
    if (p.account !== address) throw Object.assign(new Error(`unknown account ${p.account}`), { code: 4100 });
    if (p.chain !== chain) throw Object.assign(new Error(`unsupported chain ${p.chain}`), { code: 4901 });
    const tx = getTransactionDecoder().decode(Buffer.from(p.transaction, "base64"));
    const signed = await signTransaction([keyPair], tx);
    const signature = await rpc
      .sendTransaction(getBase64EncodedWireTransaction(signed), {
        encoding: "base64",
        preflightCommitment: "confirmed",
        ...(p.options?.skipPreflight === true ? { skipPreflight: true } : {}),
      })
      .send();
    if (signature !== getSignatureFromTransaction(signed)) throw new Error(`the RPC answered signature ${signature}`);
    request.signature = signature;
    wallet.sent.push(signature);
    return Buffer.from(getBase58Encoder().encode(signature)).toString("base64");
  };

  const binding = `__chainpaySolanaWallet${++bindings}`;
  await target.exposeFunction(binding, async (method: string, params: Record<string, unknown>): Promise<Answer> => {
    const request: SolanaWalletRequest =
      method === "connect"
        ? { method: "connect", silent: params.silent === true }
        : {
            method: "signAndSend",
            chain: String(params.chain),
            account: String(params.account),
            transaction: String(params.transaction),
            ...(params.options ? { options: params.options as Record<string, unknown> } : {}),
          };
    wallet.requests.push(request);
    try {
      if (method !== "connect" && method !== "signAndSend") throw new Error(`the Test Solana Wallet does not support ${method}`);
      if (opts.refuse?.(method)) throw Object.assign(new Error("User rejected the request."), { code: 4001 });
      if (request.method === "connect") return { result: address };
      return { result: await signAndSend(params as Parameters<typeof signAndSend>[0], request) };
    } catch (e) {
      // A refused key, a preflight failure, … reach the page as a wallet's error (first line only, as wallets show).
      request.error = firstLine(e);
      const code = typeof (e as { code?: unknown }).code === "number" ? (e as { code: number }).code : -32603;
      return { error: { code, message: request.error } };
    }
  });

  const content = await pageScript({
    binding,
    name,
    icon: TEST_SOLANA_WALLET_ICON,
    chain,
    address,
    publicKey: [...getAddressEncoder().encode(address)],
    features,
  });
  await target.addInitScript({ content });
  return wallet;
}
