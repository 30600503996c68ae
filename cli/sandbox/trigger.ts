import { randomUUID } from "node:crypto";
import { createPublicClient, createWalletClient, formatUnits, http, parseEther, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTokenAbi } from "../../abis/TestToken.js";
import { viemChain } from "../../chains/clients.js";
import type { ActiveChain, ActiveToken } from "../../chains/runtime.js";
import { ApiError, callApi, SandboxUsageError, type Target } from "./env.js";
import { devChainIds, isLocalUrl } from "./local-only.js";
import { SCENARIOS } from "./scenarios.js";

// `trigger <scenario>`: creates a payment over the API with the merchant's key (as the integrator's shop would, with an
// Idempotency-Key, so a retried request creates it once) and pays it on the LOCAL chain from a throwaway payer that
// Anvil funds (`anvil_setBalance`) and that mints the ERC-20 test token it pays with. Local only (./local-only.ts):
// the API and the RPC on this machine or a private network, a development chain id, and an RPC that answers
// `web3_clientVersion` with `anvil/…` and `eth_chainId` with that id; otherwise nothing is created and the command
// fails. It returns once the payment's transaction is mined; the events follow (watch them with `listen`).

export type TriggerOptions = {
  chains: ActiveChain[];
  chainId?: string;
  /** Token symbol of the payment (default USDT, else the chain's first token). */
  token?: string;
  amount?: string;
  payout?: string;
  /** How long paid-late waits for the expiry (ms). */
  timeoutMs: number;
  log: (line: Record<string, unknown>) => void;
  /** Where LOCAL_CHAINS is read (default process.env). */
  env?: NodeJS.ProcessEnv;
};

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
const REFUSAL = "(trigger only spends the local chains' dev funds)";

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message ?? "RPC error"}`);
  return body.result;
}

/** Refuses an API that is not on this machine or a private network: trigger creates test payments only. */
export async function requireLocalApi(t: Target): Promise<void> {
  if (!(await isLocalUrl(t.apiUrl)))
    throw new Error(`refusing to trigger against ${t.apiUrl}: not an API on this machine or a private network ${REFUSAL}`);
}

/**
 * Refuses any chain that is not a local development Anvil: an RPC on this machine or a private network, a development
 * chain id, `web3_clientVersion` `anvil/…`, and `eth_chainId` the chain's own id. The sandbox spends dev funds only.
 */
export async function requireLocalAnvil(chain: ActiveChain, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const refuse = (why: string) => new Error(`refusing to pay on chain ${chain.chainId}: ${why} ${REFUSAL}`);
  if (!(await isLocalUrl(chain.rpcUrl))) throw refuse(`its RPC ${chain.rpcUrl} is not on this machine or a private network`);
  const dev = devChainIds(env);
  if (!dev.has(chain.chainId)) throw refuse(`it is not a development chain (${[...dev].sort((a, b) => a - b).join(", ")})`);
  const version = await rpc(chain.rpcUrl, "web3_clientVersion", []).catch((e: Error) => {
    throw new Error(`chain ${chain.chainId}: its RPC ${chain.rpcUrl} does not answer (${e.message})`);
  });
  if (typeof version !== "string" || !/^anvil\//i.test(version))
    throw refuse(`its RPC ${chain.rpcUrl} is ${JSON.stringify(version)}, not a local Anvil`);
  const id = await rpc(chain.rpcUrl, "eth_chainId", []);
  if (typeof id !== "string" || !/^0x[0-9a-f]+$/i.test(id) || BigInt(id) !== BigInt(chain.chainId))
    throw refuse(`its RPC ${chain.rpcUrl} answers chain id ${JSON.stringify(id)}`);
}

function pickChain(chains: ActiveChain[], chainId: string | undefined): ActiveChain {
  const wanted = chainId ? chains.find((c) => String(c.chainId) === chainId) : (chains.find((c) => c.chainId === 777177) ?? chains[0]);
  if (!wanted)
    throw new SandboxUsageError(
      chainId
        ? `No RPC for chain ${chainId} (RPC_URL_${chainId}, or the local stack)`
        : "No chain: set RPC_URL_<chainId> or run `npm start`",
    );
  return wanted;
}

/** The chain's ERC-20 tokens: the payer mints what it pays (the test token's `mint`), which a native coin has not. */
const erc20Tokens = (chain: ActiveChain) => chain.tokens.filter((t) => t.kind !== "native" && t.address.toLowerCase() !== ZERO_ADDRESS);

function pickToken(chain: ActiveChain, symbol: string | undefined): ActiveToken {
  const tokens = erc20Tokens(chain);
  const names = tokens.map((t) => t.symbol).join(", ");
  if (symbol && chain.native && symbol.toLowerCase() === chain.native.symbol.toLowerCase())
    throw new SandboxUsageError(`--token ${symbol} is chain ${chain.chainId}'s native coin: trigger pays ERC-20 tokens only (${names})`);
  const token = symbol
    ? tokens.find((t) => t.symbol.toLowerCase() === symbol.toLowerCase())
    : (tokens.find((t) => t.symbol === "USDT") ?? tokens[0]);
  if (!token) throw new SandboxUsageError(`No ERC-20 token ${symbol ?? ""} on chain ${chain.chainId}; its tokens: ${names}`);
  return token;
}

/** POST with an Idempotency-Key, retried with the same key when no final answer came (network, 409 in progress, 5xx). */
async function createOnce<T>(t: Target, path: string, body: unknown, idempotencyKey: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await callApi<T>(t, "POST", path, body, { "Idempotency-Key": idempotencyKey });
    } catch (e) {
      const transient = !(e instanceof ApiError) || e.status === 409 || e.status >= 500;
      if (!transient || attempt === 3) throw e;
      await new Promise((r) => setTimeout(r, 1_000 * attempt));
    }
  }
}

type ListedPayment = { paymentId: string; status: string; recipientAddress: Address; orderId: string };

async function paymentOf(t: Target, orderId: string): Promise<ListedPayment> {
  const page = await callApi<{ data: ListedPayment[] }>(t, "GET", `/v1/payments?orderId=${encodeURIComponent(orderId)}`);
  const p = page.data.find((x) => x.orderId === orderId);
  if (!p) throw new Error(`payment of order ${orderId} not listed`);
  return p;
}

async function waitForStatus(t: Target, orderId: string, status: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await paymentOf(t, orderId);
    if (p.status === status) return;
    if (Date.now() > deadline)
      throw new Error(`payment ${p.paymentId} is still ${p.status} after ${timeoutMs / 1000} s (waiting for ${status})`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** A fresh payer funded by Anvil mints `units` of the test token and transfers them to `to`. */
async function pay(chain: ActiveChain, token: ActiveToken, to: Address, units: bigint): Promise<Hex> {
  const transport = http(chain.rpcUrl);
  const vchain = viemChain(chain);
  const pub = createPublicClient({ chain: vchain, transport });
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc(chain.rpcUrl, "anvil_setBalance", [account.address, toHex(parseEther("10"))]);
  const wallet = createWalletClient({ chain: vchain, transport, account });
  const mined = async (hash: Hex) => {
    const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: 60_000 });
    if (r.status !== "success") throw new Error(`transaction ${hash} reverted`);
    return hash;
  };
  await mined(
    await wallet.writeContract({ address: token.address, abi: testTokenAbi, functionName: "mint", args: [account.address, units] }),
  );
  return mined(await wallet.writeContract({ address: token.address, abi: testTokenAbi, functionName: "transfer", args: [to, units] }));
}

export async function trigger(t: Target, name: string, o: TriggerOptions) {
  const s = SCENARIOS[name];
  if (!s) throw new SandboxUsageError(`Unknown scenario ${JSON.stringify(name)}; one of: ${Object.keys(SCENARIOS).join(", ")}`);
  const chain = pickChain(o.chains, o.chainId);
  const token = pickToken(chain, o.token);
  const amount = o.amount ?? "10";
  if (!/^\d+(\.\d+)?$/.test(amount) || /^[0.]+$/.test(amount))
    throw new SandboxUsageError(`--amount must be a positive decimal amount of ${token.symbol}`);
  const units = parseUnits(amount, token.decimals);
  const payToken = s.otherToken ? erc20Tokens(chain).find((x) => x.address.toLowerCase() !== token.address.toLowerCase()) : token;
  if (!payToken) throw new SandboxUsageError(`wrong-token needs a second ERC-20 token on chain ${chain.chainId}`);
  await requireLocalApi(t);
  await requireLocalAnvil(chain, o.env);

  const orderId = `sandbox-${name}-${randomUUID().slice(0, 8)}`;
  const idempotencyKey = `sandbox-trigger:${orderId}`;
  const body = {
    merchant: o.payout ?? privateKeyToAccount(generatePrivateKey()).address,
    chainId: String(chain.chainId),
    token: token.address,
    amount,
    orderId,
    description: `sandbox scenario ${name}`,
    gasless: s.gasless,
    ...(s.expiresInMs ? { expiresAt: Date.now() + s.expiresInMs } : {}),
  };
  const created = await createOnce<{ url: string }>(t, "/payments", body, idempotencyKey);
  const payment = await paymentOf(t, orderId);
  o.log({ created: { scenario: name, paymentId: payment.paymentId, orderId, payUrl: created.url } });
  if (s.afterExpiry) await waitForStatus(t, orderId, "expired", o.timeoutMs);

  const sendUnits = s.send === "half" ? units / 2n : s.send === "over" ? units + units / 2n : s.send === "exact" ? units : 0n;
  const txHash = sendUnits > 0n ? await pay(chain, payToken, payment.recipientAddress, sendUnits) : null;
  return {
    scenario: name,
    paymentId: payment.paymentId,
    orderId,
    idempotencyKey,
    payUrl: created.url,
    chainId: chain.chainId,
    token: token.symbol,
    amount,
    recipientAddress: payment.recipientAddress,
    sent: txHash ? { token: payToken.symbol, amount: formatUnits(sendUnits, payToken.decimals), txHash } : null,
    expect: s.expect,
    note: s.note,
  };
}
