import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { getTransferCheckedInstruction } from "@solana-program/token";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createSolanaRpc,
  createTransactionMessage,
  getAddressEncoder,
  getBase58Decoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
} from "@solana/kit";
import { build } from "esbuild";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SOLANA } from "../../../chains/solana.js";
import { LOCAL_SOLANA, localSolanaKey } from "../../../local/solana/accounts.js";
import { startSolanaRpc, type SolanaRpc } from "../../../local/solana/rpc-server.js";
import { createLocalSolana, type LocalSolana } from "../../../local/solana/svm.js";
import { launchBrowser, newPage } from "../../helpers/browser.js";
import { injectSolanaWallet, TEST_SOLANA_WALLET_ICON, type InjectedSolanaWallet } from "../../helpers/solana-wallet.js";

// test/helpers/solana-wallet.ts in Chromium: a page that bundles @wallet-standard/app (and the payer page's own
// web/pay/solana-wallets.ts) finds the injected Wallet Standard wallets, connects, and has a v0 USDC TransferChecked
// signed in Node and sent to a local Solana of this file's own. No service, no EVM chain.

const USDC = SOLANA.usdc.mint as Address;
const CHAIN = "solana:localnet";
const NO_SIGN = "No Sign Wallet";
const MAINNET = "Mainnet Wallet";

// The page's script: the raw Wallet Standard registry, and the payer page's filter (watchSolanaWallets).
const PAGE_SOURCE = `
import { getWallets } from "@wallet-standard/app";
import { watchSolanaWallets } from "./web/pay/solana-wallets.ts";

const registry = getWallets();
const byName = (name) => registry.get().filter((w) => w.name === name)[0];
let usable = [];
watchSolanaWallets(${JSON.stringify(CHAIN)}, (ws) => (usable = ws));
const hexBytes = (hex) => Uint8Array.from(hex.match(/../g), (b) => parseInt(b, 16));

window.__wallets = () =>
  registry.get().map((w) => ({ name: w.name, icon: w.icon, version: w.version, chains: w.chains.slice(), features: Object.keys(w.features) }));
window.__usable = () => usable.map((w) => w.name);
window.__connect = async (name) => {
  const { accounts } = await byName(name).features["standard:connect"].connect();
  return accounts.map((a) => ({ address: a.address, publicKey: Array.from(a.publicKey), chains: a.chains.slice(), features: a.features.slice() }));
};
window.__signAndSend = async (name, hex) => {
  const w = byName(name);
  const { accounts } = await w.features["standard:connect"].connect();
  try {
    const out = await w.features["solana:signAndSendTransaction"].signAndSendTransaction({
      account: accounts[0],
      transaction: hexBytes(hex),
      chain: ${JSON.stringify(CHAIN)},
    });
    return { signatures: out.map((o) => Array.from(o.signature)) };
  } catch (e) {
    return { error: e.message, code: e.code };
  }
};
window.__pageSignAndSend = async (name, hex) => {
  const w = usable.filter((u) => u.name === name)[0];
  await w.connect();
  return w.signAndSend("0x" + hex);
};
`;

type PageWindow = Record<string, (...args: unknown[]) => Promise<unknown> | unknown>;

let sol: LocalSolana;
let front: SolanaRpc;
let server: http.Server;
let pageUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let wallet: InjectedSolanaWallet;
let noSign: InjectedSolanaWallet;
let payerUsdc: Address;
let escrowUsdc: Address;

const payer = localSolanaKey("solana-wallet-helper-test");
const usdcOf = (account: Address) => sol.tokenAccount(account)!.amount;

/** An unsigned v0 TransferChecked of the payer's USDC to the escrow, with the local Solana's latest blockhash, as hex. */
function unsignedTransfer(amount: bigint, feePayer: Address = payer.address): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash({ blockhash: sol.latestBlockhash().blockhash as Blockhash, lastValidBlockHeight: 0n }, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getTransferCheckedInstruction({
            source: payerUsdc,
            mint: USDC,
            destination: escrowUsdc,
            authority: payer.address,
            amount,
            decimals: 6,
          }),
        ],
        m,
      ),
  );
  return Buffer.from(getTransactionEncoder().encode(compileTransaction(message))).toString("hex");
}

const inPage = <T>(fn: string, ...args: unknown[]) =>
  page.evaluate(([f, a]) => (globalThis as unknown as PageWindow)[f as string]!(...(a as unknown[])), [fn, args] as const) as Promise<T>;

beforeAll(async () => {
  const [script, b] = await Promise.all([
    build({
      stdin: { contents: PAGE_SOURCE, resolveDir: fileURLToPath(new URL("../../..", import.meta.url)), loader: "js" },
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      target: "es2019",
      logLevel: "silent",
    }).then((out) => out.outputFiles[0]!.text),
    launchBrowser(),
  ]);
  browser = b;
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>wallets</title></head><body><script>${script.replace(/<\/script/gi, "<\\/script")}</script></body></html>`;
  server = http.createServer((req, res) => {
    if (req.url !== "/") return void res.writeHead(req.url === "/favicon.ico" ? 204 : 404).end();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  sol = createLocalSolana();
  front = await startSolanaRpc({ svm: sol });
  sol.airdrop(payer.address, 1_000_000_000n);
  payerUsdc = await sol.mintTo(USDC, payer.address, 50_000_000n);
  escrowUsdc = await sol.mintTo(USDC, LOCAL_SOLANA.escrow.address, 0n);

  ({ context, page, errors } = await newPage(browser));
  wallet = await injectSolanaWallet(page, { secretKey: payer.secretKey, rpcUrl: front.url });
  noSign = await injectSolanaWallet(page, {
    secretKey: payer.secretKey,
    rpcUrl: front.url,
    name: NO_SIGN,
    features: { signAndSend: false },
  });
  await injectSolanaWallet(page, { secretKey: payer.secretKey, rpcUrl: front.url, name: MAINNET, chain: "solana:mainnet" });
  await page.goto(pageUrl);
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await front?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

describe("test/helpers/solana-wallet.ts: a Wallet Standard wallet served in Node", () => {
  it("registers before the page's script: listed by getWallets() with its name, icon, chain and features; the payer page's filter keeps only the one that signs and sends on solana:localnet", async () => {
    expect(wallet.address).toBe(payer.address);
    const wallets = await inPage<{ name: string; icon: string; version: string; chains: string[]; features: string[] }[]>("__wallets");
    expect(wallets).toEqual([
      {
        name: "Test Solana Wallet",
        icon: TEST_SOLANA_WALLET_ICON,
        version: "1.0.0",
        chains: [CHAIN],
        features: ["standard:connect", "standard:events", "solana:signAndSendTransaction"],
      },
      {
        name: NO_SIGN,
        icon: TEST_SOLANA_WALLET_ICON,
        version: "1.0.0",
        chains: [CHAIN],
        features: ["standard:connect", "standard:events"],
      },
      {
        name: MAINNET,
        icon: TEST_SOLANA_WALLET_ICON,
        version: "1.0.0",
        chains: ["solana:mainnet"],
        features: ["standard:connect", "standard:events", "solana:signAndSendTransaction"],
      },
    ]);
    expect(TEST_SOLANA_WALLET_ICON).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await inPage<string[]>("__usable")).toEqual(["Test Solana Wallet"]);
  });

  it("connect answers the account (base58 address, 32-byte public key, chain) and is recorded", async () => {
    const before = wallet.requests.length;
    const accounts = await inPage<{ address: string; publicKey: number[]; chains: string[]; features: string[] }[]>(
      "__connect",
      "Test Solana Wallet",
    );
    expect(accounts).toEqual([
      {
        address: payer.address,
        publicKey: [...getAddressEncoder().encode(payer.address)],
        chains: [CHAIN],
        features: ["solana:signAndSendTransaction"],
      },
    ]);
    expect(wallet.requests.slice(before)).toEqual([{ method: "connect", silent: false }]);
    // The wallet without signAndSend connects too, but its account offers nothing to sign with.
    expect((await inPage<{ features: string[] }[]>("__connect", NO_SIGN))[0]!.features).toEqual([]);
    expect(noSign.requests).toEqual([{ method: "connect", silent: false }]);
  });

  it("signAndSendTransaction signs in Node and sends: the transfer lands and balances move exactly", async () => {
    const [usdcBefore, escrowBefore, lamportsBefore] = [usdcOf(payerUsdc), usdcOf(escrowUsdc), sol.balance(payer.address)];
    const hex = unsignedTransfer(1_250_000n);
    const out = await inPage<{ signatures?: number[][]; error?: string }>("__signAndSend", "Test Solana Wallet", hex);
    expect(out.error).toBeUndefined();
    expect(out.signatures).toHaveLength(1);
    expect(out.signatures![0]).toHaveLength(64);
    const signature = getBase58Decoder().decode(new Uint8Array(out.signatures![0]!));
    expect(wallet.sent).toEqual([signature]);
    expect(wallet.requests.at(-1)).toEqual({
      method: "signAndSend",
      chain: CHAIN,
      account: payer.address,
      transaction: Buffer.from(hex, "hex").toString("base64"),
      signature,
    });

    expect(sol.signatureStatus(signature)).toMatchObject({ err: null });
    const { value } = await createSolanaRpc(front.url)
      .getSignatureStatuses([signature as never])
      .send();
    expect(value[0]).toMatchObject({ err: null, confirmationStatus: "finalized" });
    expect(usdcOf(payerUsdc)).toBe(usdcBefore - 1_250_000n);
    expect(usdcOf(escrowUsdc)).toBe(escrowBefore + 1_250_000n);
    expect(sol.balance(payer.address)).toBe(lamportsBefore - 5000n);
  });

  it("through the payer page's own wrapper (web/pay/solana-wallets.ts): hex in, base58 signature out", async () => {
    const escrowBefore = usdcOf(escrowUsdc);
    const signature = await inPage<string>("__pageSignAndSend", "Test Solana Wallet", unsignedTransfer(750_000n));
    expect(wallet.sent.at(-1)).toBe(signature);
    expect(sol.transaction(signature)).toMatchObject({ err: null, version: 0 });
    expect(usdcOf(escrowUsdc)).toBe(escrowBefore + 750_000n);
  });

  it("a transaction the key cannot sign is refused in Node: the page's call fails, nothing is sent", async () => {
    const sent = wallet.sent.length;
    const escrowBefore = usdcOf(escrowUsdc);
    const out = await inPage<{ error?: string; code?: number }>(
      "__signAndSend",
      "Test Solana Wallet",
      unsignedTransfer(1n, LOCAL_SOLANA.solver.address),
    );
    expect(out.error).toMatch(/not a signer/);
    expect(out.code).toBe(-32603);
    expect(wallet.requests.at(-1)).toMatchObject({ method: "signAndSend", error: out.error });
    expect(wallet.sent).toHaveLength(sent);
    expect(usdcOf(escrowUsdc)).toBe(escrowBefore);
    expect(errors).toEqual([]);
  });
});
