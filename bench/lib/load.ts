import { encodeFunctionData, getContractAddress, parseGwei, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { logSpammerAbi, logSpammerBytecode } from "../../abis/LogSpammer.js";
import { ANVIL_KEYS } from "../../local/accounts.js";

// Chain-side load of the benchmarks: a head watcher, LogSpammer contracts and a generator of foreign
// Transfer logs (every block, `perBlock` logs from `contracts` contracts to pseudo-random addresses).

/** Anvil's last dev account: nobody else sends from it (the deployer, settler, treasury and payers come first). */
export const LOADER = privateKeyToAccount(ANVIL_KEYS[9]);

let rpcId = 0;
export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Watches the chain head every `everyMs`: the first moment each block number was seen, and listeners for new heads. */
export function watchHead(rpcUrl: string, everyMs = 20) {
  const firstSeen = new Map<number, number>();
  const listeners = new Set<(block: number) => void>();
  let head = -1;
  let stopped = false;
  void (async () => {
    while (!stopped) {
      try {
        const n = Number(await rpc<Hex>(rpcUrl, "eth_blockNumber"));
        const at = Date.now();
        if (n > head) {
          for (let b = head + 1; b <= n; b++) if (head >= 0 && !firstSeen.has(b)) firstSeen.set(b, at);
          head = n;
          for (const l of listeners) l(n);
        }
      } catch {}
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    head: () => head,
    /** When this block was first seen by the watcher (undefined: before the watcher started). */
    seenAt: (block: number) => firstSeen.get(block),
    onBlock(l: (block: number) => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    stop() {
      stopped = true;
    },
  };
}

/** Signs and sends transactions of LOADER with its own nonce count (no estimation round trips). */
export async function loaderSender(rpcUrl: string, chainId: number) {
  let nonce = Number(await rpc<Hex>(rpcUrl, "eth_getTransactionCount", [LOADER.address, "pending"]));
  return {
    async send(tx: { to?: Address; data: Hex; gas: bigint }): Promise<Hex> {
      const raw = await LOADER.signTransaction({
        chainId,
        type: "eip1559",
        to: tx.to,
        data: tx.data,
        gas: tx.gas,
        nonce: nonce++,
        maxFeePerGas: parseGwei("100"),
        maxPriorityFeePerGas: parseGwei("1"),
      });
      return rpc<Hex>(rpcUrl, "eth_sendRawTransaction", [raw]);
    },
    async resync() {
      nonce = Number(await rpc<Hex>(rpcUrl, "eth_getTransactionCount", [LOADER.address, "pending"]));
    },
    nextAddress: () => getContractAddress({ from: LOADER.address, nonce: BigInt(nonce) }),
  };
}

export async function waitReceipts(rpcUrl: string, hashes: Hex[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const h of hashes) {
    for (;;) {
      const r = await rpc<{ status: Hex } | null>(rpcUrl, "eth_getTransactionReceipt", [h]);
      if (r) {
        if (r.status !== "0x1") throw new Error(`transaction ${h} reverted`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`no receipt for ${h}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}

/** Deploys `n` LogSpammer contracts (each one a "token" to the indexer). */
export async function deploySpammers(rpcUrl: string, chainId: number, n: number): Promise<Address[]> {
  const sender = await loaderSender(rpcUrl, chainId);
  const addresses: Address[] = [];
  const hashes: Hex[] = [];
  for (let i = 0; i < n; i++) {
    addresses.push(sender.nextAddress());
    hashes.push(await sender.send({ data: logSpammerBytecode, gas: 1_000_000n }));
  }
  await waitReceipts(rpcUrl, hashes);
  return addresses;
}

/**
 * On every new block, one `spam` transaction per contract so the next block carries `perBlock` foreign
 * Transfer logs (rounded up to a multiple of the contract count).
 */
export async function startLogLoad(opts: {
  rpcUrl: string;
  chainId: number;
  spammers: Address[];
  perBlock: number;
  head: ReturnType<typeof watchHead>;
}) {
  const sender = await loaderSender(opts.rpcUrl, opts.chainId);
  const each = Math.ceil(opts.perBlock / opts.spammers.length);
  let seed = BigInt(Date.now()) << 32n;
  let sent = 0;
  let failed = 0;
  let busy = false;
  const off = opts.head.onBlock(() => {
    if (busy) return; // the previous block's batch is still being sent: skip rather than pile up
    busy = true;
    void Promise.all(
      opts.spammers.map((to) =>
        sender.send({
          to,
          data: encodeFunctionData({ abi: logSpammerAbi, functionName: "spam", args: [BigInt(each), seed++] }),
          gas: 40_000n + BigInt(each) * 3_000n,
        }),
      ),
    )
      .then(() => void (sent += opts.spammers.length))
      .catch(async () => {
        failed++;
        await sender.resync().catch(() => {});
      })
      .finally(() => (busy = false));
  });
  return {
    logsPerTx: each,
    stats: () => ({ sent, failedBatches: failed }),
    stop: () => off(),
  };
}
