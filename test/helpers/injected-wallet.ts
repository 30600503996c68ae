import type { Page } from "playwright-core";
import { createPublicClient, createWalletClient, http, type Address, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { viemChain } from "../../chains/clients.js";
import type { ActiveChain } from "../../chains/runtime.js";

/**
 * A browser wallet for Chromium tests: an EIP-1193 provider announced with EIP-6963 (as wallet extensions do) whose
 * requests are served in Node by viem with a local private key against the run's Anvil chains. It approves every
 * request at once (no prompts), unless `refuse` says the user rejects it (EIP-1193 error 4001).
 *
 *   const wallet = await injectWallet(page, { account: payer, chains: svc.deps.chains, chainId: 777177 });
 *   await page.goto(url); // the page finds "Test Wallet" through eip6963:requestProvider
 *   wallet.sent // [{ chainId: 137, hash, to, data, value }, …]
 */

export const TEST_WALLET_INFO = {
  uuid: "7d4b8f0e-6a1c-4c53-9d3e-2f1a0b9c8e71",
  name: "Test Wallet",
  rdns: "test.chainpay.wallet",
  icon: `data:image/svg+xml;base64,${Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2563eb"/><path d="M8 11h16v11H8z" fill="#fff"/><circle cx="20" cy="16.5" r="2" fill="#2563eb"/></svg>',
  ).toString("base64")}`,
} as const;

export type WalletRequest = { method: string; params: unknown[]; chainId: number };
export type SentTx = { chainId: number; hash: Hex; to: Address; data: Hex; value: bigint };

export type InjectedWallet = {
  /** Every request the page made, in order, with the chain the wallet was on. */
  requests: WalletRequest[];
  /** Transactions the wallet signed and sent. */
  sent: SentTx[];
  chainId(): number;
};

type Answer = { result?: unknown; error?: { code: number; message: string }; chainChanged?: string };

/** Methods answered by the chain's node as they are (reads). */
const READS = new Set([
  "eth_call",
  "eth_getBalance",
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_blockNumber",
  "eth_estimateGas",
  "eth_gasPrice",
  "eth_getCode",
  "eth_getTransactionCount",
  "eth_getBlockByNumber",
]);

const BINDING = "__chainpayTestWallet";
const hexId = (id: number) => `0x${id.toString(16)}`;

/**
 * Installs the wallet in `page` (before its first navigation): the page's script sees it announced under
 * TEST_WALLET_INFO. `chainId`: the network the wallet starts on (default: the first chain).
 */
export async function injectWallet(
  page: Page,
  opts: { account: PrivateKeyAccount; chains: ActiveChain[]; chainId?: number; refuse?: (method: string) => boolean },
): Promise<InjectedWallet> {
  const { account, chains } = opts;
  let current = opts.chainId ?? chains[0]!.chainId;
  const clients = new Map(
    chains.map((c) => {
      const transport = http(c.rpcUrl);
      const chain = viemChain(c);
      return [c.chainId, { pub: createPublicClient({ chain, transport }), wallet: createWalletClient({ chain, transport, account }) }];
    }),
  );
  const wallet: InjectedWallet = { requests: [], sent: [], chainId: () => current };

  const serve = async (method: string, params: unknown[]): Promise<Answer> => {
    wallet.requests.push({ method, params, chainId: current });
    if (opts.refuse?.(method)) return { error: { code: 4001, message: "User rejected the request." } };
    const c = clients.get(current)!;
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return { result: [account.address] };
      case "eth_chainId":
        return { result: hexId(current) };
      case "net_version":
        return { result: String(current) };
      case "wallet_switchEthereumChain": {
        const id = Number((params[0] as { chainId?: string } | undefined)?.chainId);
        if (!clients.has(id)) return { error: { code: 4902, message: `Unrecognized chain ID "${hexId(id)}".` } };
        const changed = id !== current;
        current = id;
        return { result: null, chainChanged: changed ? hexId(id) : undefined };
      }
      case "eth_sendTransaction": {
        const tx = (params[0] ?? {}) as { from?: string; to?: Address; data?: Hex; value?: Hex; gas?: Hex };
        if (tx.from && tx.from.toLowerCase() !== account.address.toLowerCase())
          return { error: { code: 4100, message: "The requested account has not been authorized by the user." } };
        const value = tx.value ? BigInt(tx.value) : 0n;
        const hash = await c.wallet.sendTransaction({
          account,
          chain: c.wallet.chain,
          to: tx.to,
          data: tx.data,
          value,
          gas: tx.gas ? BigInt(tx.gas) : undefined,
        });
        wallet.sent.push({ chainId: current, hash, to: tx.to!, data: tx.data ?? "0x", value });
        return { result: hash };
      }
      default:
        if (READS.has(method)) return { result: await c.pub.request({ method, params } as never) };
        return { error: { code: 4200, message: `The Test Wallet does not support ${method}` } };
    }
  };

  await page.exposeFunction(BINDING, async (method: string, params: unknown[]): Promise<Answer> => {
    try {
      return await serve(method, params ?? []);
    } catch (e) {
      // A node error (e.g. a reverting estimate) reaches the page as an EIP-1193 internal error, as wallets do.
      return { error: { code: -32603, message: e instanceof Error ? e.message.split("\n")[0]! : String(e) } };
    }
  });

  await page.addInitScript(
    ({ binding, info }) => {
      type Listener = (arg: unknown) => void;
      // The page's window (this function runs in the browser; the test project has no DOM types).
      const win = globalThis as unknown as EventTarget & Record<string, (m: string, p: unknown[]) => Promise<Answer>>;
      const listeners: Record<string, Listener[]> = {};
      const emit = (event: string, arg: unknown) => (listeners[event] ?? []).slice().forEach((fn) => fn(arg));
      const call = (method: string, params: unknown[]) => win[binding]!(method, params);
      const provider = {
        isTestWallet: true,
        async request(args: { method: string; params?: unknown[] }) {
          const answer = await call(args.method, args.params ?? []);
          if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
          if (answer.chainChanged) emit("chainChanged", answer.chainChanged);
          return answer.result;
        },
        on(event: string, fn: Listener) {
          (listeners[event] ??= []).push(fn);
          return provider;
        },
        removeListener(event: string, fn: Listener) {
          listeners[event] = (listeners[event] ?? []).filter((f) => f !== fn);
          return provider;
        },
      };
      const detail = Object.freeze({ info: Object.freeze({ ...info }), provider });
      const announce = () => win.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
      win.addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    { binding: BINDING, info: TEST_WALLET_INFO },
  );
  return wallet;
}
