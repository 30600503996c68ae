import {
  getAddress,
  isAddressEqual,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
  type TransactionSerializable,
} from "viem";
import { toAccount } from "viem/accounts";

/**
 * An account whose key the service never holds: transactions are signed by a remote signer over JSON-RPC
 * `eth_signTransaction` (Web3Signer answers the signed bytes; geth and Clef answer `{ raw, tx }`). What comes back is
 * checked before it is used: signed by `address`, for the chain, type, nonce, recipient, data, value, gas and fees asked
 * (type 2 and both fees, or on a legacy chain type 0 and its gas price).
 * Only transactions: the service signs nothing else.
 *
 * @example
 * const settler = remoteSigner({ url: "https://signer.internal:9000", address: "0xSettler…" });
 * txSender({ db, chain, client, account: settler });
 */
export function remoteSigner(opts: { url: string; address: Address; timeoutMs?: number; headers?: Record<string, string> }): LocalAccount {
  const address = getAddress(opts.address);
  let id = 0;
  async function signTransaction(tx: TransactionSerializable): Promise<Hex> {
    const t = tx as TransactionSerializable & { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gasPrice?: bigint };
    // A legacy chain's transaction (chains/fees.ts): type 0 and its gas price; else type 2 and both fees.
    const legacy = t.type === "legacy";
    const hex = (v: bigint | number | undefined) => (v === undefined ? undefined : toHex(v));
    const params = {
      from: address,
      to: t.to ?? undefined,
      data: t.data ?? "0x",
      value: hex(t.value ?? 0n),
      gas: hex(t.gas),
      nonce: hex(t.nonce),
      chainId: hex(t.chainId),
      ...(legacy
        ? { type: "0x0", gasPrice: hex(t.gasPrice) }
        : { type: "0x2", maxFeePerGas: hex(t.maxFeePerGas), maxPriorityFeePerGas: hex(t.maxPriorityFeePerGas) }),
    };
    const res = await fetch(opts.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...opts.headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "eth_signTransaction", params: [params] }),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    if (!res.ok) throw new Error(`remote signer answered HTTP ${res.status}`);
    const body = (await res.json()) as { result?: Hex | { raw?: Hex }; error?: { message?: string } };
    if (body.error) throw new Error(`remote signer refused: ${body.error.message ?? "error"}`);
    const raw = typeof body.result === "string" ? body.result : body.result?.raw;
    if (!raw || !/^0x[0-9a-fA-F]+$/.test(raw)) throw new Error("remote signer answered no signed transaction");
    const signed = parseTransaction(raw) as TransactionSerializable & {
      maxFeePerGas?: bigint;
      maxPriorityFeePerGas?: bigint;
      gasPrice?: bigint;
    };
    const same =
      signed.type === (legacy ? "legacy" : "eip1559") &&
      signed.chainId === t.chainId &&
      signed.nonce === t.nonce &&
      (signed.to ?? "").toLowerCase() === (t.to ?? "").toLowerCase() &&
      (signed.data ?? "0x") === (t.data ?? "0x") &&
      (signed.value ?? 0n) === (t.value ?? 0n) &&
      signed.gas === t.gas &&
      signed.maxFeePerGas === t.maxFeePerGas &&
      signed.maxPriorityFeePerGas === t.maxPriorityFeePerGas &&
      signed.gasPrice === t.gasPrice;
    if (!same) throw new Error("remote signer signed another transaction than the one asked");
    const by = await recoverTransactionAddress({
      serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]["serializedTransaction"],
    });
    if (!isAddressEqual(by, address)) throw new Error(`remote signer signed with ${by}, not ${address}`);
    return raw;
  }
  return toAccount({
    address,
    signTransaction,
    signMessage: async () => {
      throw new Error("the remote signer signs transactions only");
    },
    signTypedData: async () => {
      throw new Error("the remote signer signs transactions only");
    },
  });
}

/** The remote signer SIGNER_URL and SIGNER_ADDRESS name, or null when they are not both set. */
export function remoteSignerOf(config: { SIGNER_URL?: string; SIGNER_ADDRESS?: string }): LocalAccount | null {
  return config.SIGNER_URL && config.SIGNER_ADDRESS
    ? remoteSigner({ url: config.SIGNER_URL, address: config.SIGNER_ADDRESS as Address })
    : null;
}
