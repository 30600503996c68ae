import fs from "node:fs";
import { createPublicClient, createWalletClient, http, parseEther, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../abis/TestToken.js";

// What the container test (scripts/test-container.sh) asks of the service in its containers, as an integrator would,
// over HTTP with an API key: create a payment (POST /api/payments), find it in the list (GET /api/v1/payments), open
// its payer page, pay it on the host's Anvil, and see it completed: the API, the indexer and the processors at work.
//
//   CHAINPAY_API_URL=http://127.0.0.1:3000/api CHAINPAY_API_KEY=… node --import tsx containers/check.ts <env file>

const envFile = process.argv[2];
const apiUrl = process.env.CHAINPAY_API_URL?.replace(/\/+$/, "");
const apiKey = process.env.CHAINPAY_API_KEY;
if (!envFile || !apiUrl || !apiKey) {
  console.error("usage: CHAINPAY_API_URL=… CHAINPAY_API_KEY=… node --import tsx containers/check.ts <env file>");
  process.exit(2);
}
const timeoutMs = Number(process.env.CHECK_TIMEOUT_MS ?? 180_000);

/** The env file that containers/chain.ts wrote: the chain's RPC and the token to pay with. */
const config = Object.fromEntries(
  fs
    .readFileSync(envFile, "utf8")
    .split("\n")
    .filter((l) => l.includes("="))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
) as Record<string, string>;
const chainId = Number(config.LOCAL_CHAINS);
const rpcUrl = config[`RPC_URL_${chainId}`]!;
const token = config[`TOKEN_ADDRESS_${chainId}_USDC`] as Address;
if (!rpcUrl || !token) throw new Error(`${envFile} names no RPC URL or USDC address of chain ${chainId}`);

const step = (what: string, detail: unknown = "") => console.log(`check: ${what}${detail === "" ? "" : ` ${JSON.stringify(detail)}`}`);

async function api<T>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
  const res = await fetch(apiUrl + pathAndQuery, {
    method,
    headers: { "x-api-key": apiKey!, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathAndQuery}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

type Listed = { paymentId: string; orderId: string; status: string; amount: string; recipientAddress: Address };
async function listed(orderId: string): Promise<Listed> {
  const page = await api<{ data: Listed[] }>("GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`);
  const p = page.data.find((x) => x.orderId === orderId);
  if (!p) throw new Error(`payment of order ${orderId} is not listed: ${JSON.stringify(page)}`);
  return p;
}

// 1. Create.
const orderId = `container-test-${Date.now()}`;
const amount = "12.5";
const created = await api<{ url: string }>("POST", "/payments", {
  merchant: privateKeyToAccount(generatePrivateKey()).address,
  chainId: String(chainId),
  token,
  amount,
  orderId,
  description: "container test",
  gasless: true,
});
step("created", created);

// 2. Listed.
const payment = await listed(orderId);
if (payment.amount !== amount && Number(payment.amount) !== Number(amount))
  throw new Error(`listed amount ${payment.amount}, not ${amount}`);
step("listed", payment);

// 3. The payer page (its script is bundled by esbuild in the container on first use).
const page = await fetch(created.url, { signal: AbortSignal.timeout(30_000) });
const html = await page.text();
if (!page.ok || !html.includes("<html")) throw new Error(`payer page ${created.url}: HTTP ${page.status}`);
step("payer page", { status: page.status, bytes: html.length });

// 4. Paid on the chain by a fresh payer: its gas from anvil_setBalance, its USDC minted (a test token).
const chain = {
  id: chainId,
  name: `local ${chainId}`,
  nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [rpcUrl] } },
};
const pub = createPublicClient({ chain, transport: http(rpcUrl) });
const payer = privateKeyToAccount(generatePrivateKey());
await pub.request({ method: "anvil_setBalance" as never, params: [payer.address, toHex(parseEther("1"))] as never });
const wallet = createWalletClient({ chain, transport: http(rpcUrl), account: payer });
const units = parseUnits(amount, 6);
const mined = async (hash: Hex) => {
  const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: 60_000 });
  if (r.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return hash;
};
await mined(await wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [payer.address, units] }));
const tx = await mined(
  await wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "transfer", args: [payment.recipientAddress, units] }),
);
step("paid", { to: payment.recipientAddress, tx });

// 5. Detected by the indexer, settled by the processors.
const deadline = Date.now() + timeoutMs;
let last = payment.status;
for (;;) {
  const p = await listed(orderId);
  if (p.status !== last) step(`status ${p.status}`);
  last = p.status;
  if (p.status === "completed") break;
  if (Date.now() > deadline) throw new Error(`payment ${p.paymentId} is still ${p.status} after ${timeoutMs / 1000} s`);
  await new Promise((r) => setTimeout(r, 1_000));
}
step("completed", { paymentId: payment.paymentId });
