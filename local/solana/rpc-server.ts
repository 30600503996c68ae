import { serve } from "@hono/node-server";
import {
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  isAddress,
  type Address,
  type EncodedAccount,
} from "@solana/kit";
import { Hono } from "hono";
import { firstLine, logger } from "../../core/log.js";
import { decodeMint, decodeTokenAccount, isTokenProgram, TOKEN_2022_PROGRAM, uiTokenAmount, type Mint, type TokenAccount } from "./spl.js";
import { InvalidTransaction, SLOTS_PER_EPOCH, type ExecutedTransaction, type LocalSolana } from "./svm.js";
import { transactionErrorText, type SolanaTransactionError } from "./tx-error.js";

// Solana's JSON-RPC 2.0 over HTTP (https://solana.com/docs/rpc/http), answered from a LocalSolana: what the service,
// @solana/kit's createSolanaRpc and a test wallet ask. Shapes and error codes are Agave's; methods named local_* are
// ours (as anvil_* are Anvil's). No WebSocket subscriptions. SOLANA_RPC_URL = `url`. See docs/solana.md.

export type SolanaRpcOptions = {
  svm: LocalSolana;
  /** Default: a free port on 127.0.0.1. */
  port?: number;
};

export type SolanaRpc = {
  url: string;
  port: number;
  close(): Promise<void>;
};

/** A JSON-RPC error with Solana's codes (-32002 preflight failure, -32003 signature failure, -32602 bad params, …). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const log = logger("local-solana-rpc");
const b58 = getBase58Decoder();
const fromB58 = getBase58Encoder();
const U64_MAX = 18446744073709551615n;
const FEATURE_SET = 0;

type Params = unknown[];
type Config = Record<string, unknown>;
type Method = (params: Params) => unknown;

const invalidParams = (message: string) => new RpcError(-32602, message);

function addressParam(value: unknown): Address {
  if (typeof value !== "string") throw invalidParams("Invalid params: expected a base58 address string");
  if (!isAddress(value)) throw invalidParams(`Invalid param: Invalid`);
  return value;
}

function configParam(value: unknown): Config {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw invalidParams("Invalid params: expected a config object");
  return value as Config;
}

function u64Param(value: unknown, name: string): bigint {
  if ((typeof value === "number" && Number.isSafeInteger(value) && value >= 0) || (typeof value === "string" && /^\d+$/.test(value)))
    return BigInt(value);
  throw invalidParams(`Invalid params: ${name} must be a non-negative integer`);
}

/** Wire bytes of a transaction from its base58 (the default) or base64 text. */
function wireParam(value: unknown, encoding: unknown): Uint8Array {
  if (typeof value !== "string") throw invalidParams("Invalid params: expected an encoded transaction string");
  const enc = encoding ?? "base58";
  if (enc === "base64") return new Uint8Array(Buffer.from(value, "base64"));
  if (enc === "base58") {
    try {
      return new Uint8Array(fromB58.encode(value));
    } catch {
      throw invalidParams("invalid base58 encoding: InvalidCharacter");
    }
  }
  throw invalidParams(`unsupported encoding: ${String(enc)}. Supported encodings: base58, base64`);
}

/** Bigints as JSON numbers (lamports and u64 amounts exceed 2^53). */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `\u0000big${v}\u0000` : v)).replace(/"\\u0000big(\d+)\\u0000"/g, "$1");
}

function parsedMint(m: Mint) {
  return {
    type: "mint",
    info: {
      decimals: m.decimals,
      freezeAuthority: m.freezeAuthority,
      isInitialized: m.isInitialized,
      mintAuthority: m.mintAuthority,
      supply: m.supply.toString(),
    },
  };
}

function parsedTokenAccount(t: TokenAccount, decimals: number) {
  return {
    type: "account",
    info: {
      isNative: t.isNative !== null,
      mint: t.mint,
      owner: t.owner,
      state: t.state === 2 ? "frozen" : "initialized",
      tokenAmount: uiTokenAmount(t.amount, decimals),
      ...(t.delegate ? { delegate: t.delegate, delegatedAmount: uiTokenAmount(t.delegatedAmount, decimals) } : {}),
      ...(t.closeAuthority ? { closeAuthority: t.closeAuthority } : {}),
      ...(t.isNative !== null ? { rentExemptReserve: uiTokenAmount(t.isNative, 9) } : {}),
    },
  };
}

/**
 * The routes (no listener): POST / takes one JSON-RPC request or a batch; GET /health answers "ok".
 *
 *   const app = createSolanaRpcApp(new LocalSolana());
 *   await app.request("/", { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' }); // {"jsonrpc":"2.0","result":1,"id":1}
 */
export function createSolanaRpcApp(sol: LocalSolana): Hono {
  const context = (config: Config = {}) => {
    const slot = sol.slot();
    if (typeof config.minContextSlot === "number" && config.minContextSlot > slot)
      throw new RpcError(-32016, "Minimum context slot has not been reached", { contextSlot: slot });
    return { slot };
  };
  const withContext = <T>(config: Config, value: T) => ({ context: context(config), value });

  const decimalsOf = (mint: Address) => sol.mint(mint)?.decimals ?? 0;

  function encodeAccount(a: EncodedAccount | null, config: Config) {
    if (!a) return null;
    let data: Uint8Array = new Uint8Array(a.data);
    const encoding = config.encoding ?? "binary";
    let rendered: unknown;
    if (encoding === "jsonParsed" && isTokenProgram(a.programAddress)) {
      const program = a.programAddress === TOKEN_2022_PROGRAM ? "spl-token-2022" : "spl-token";
      const mint = decodeMint(data);
      const token = mint ? undefined : decodeTokenAccount(data);
      if (mint) rendered = { program, parsed: parsedMint(mint), space: data.length };
      else if (token) rendered = { program, parsed: parsedTokenAccount(token, decimalsOf(token.mint)), space: data.length };
    }
    if (rendered === undefined) {
      const slice = config.dataSlice as { offset?: number; length?: number } | undefined;
      if (slice) data = data.subarray(slice.offset ?? 0, (slice.offset ?? 0) + (slice.length ?? data.length));
      if (encoding === "base64" || encoding === "jsonParsed") rendered = [Buffer.from(data).toString("base64"), "base64"];
      else if (encoding === "base58" || encoding === "binary") {
        if (data.length > 128)
          throw new RpcError(-32600, "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.");
        rendered = encoding === "binary" ? b58.decode(data) : [b58.decode(data), "base58"];
      } else throw invalidParams(`unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64, jsonParsed`);
    }
    return { data: rendered, executable: a.executable, lamports: a.lamports, owner: a.programAddress, rentEpoch: U64_MAX, space: a.space };
  }

  function statusOf(sig: unknown) {
    if (typeof sig !== "string") throw invalidParams("Invalid params: expected a signature string");
    const s = sol.signatureStatus(sig);
    return s
      ? { slot: s.slot, confirmations: null, err: s.err, status: s.err ? { Err: s.err } : { Ok: null }, confirmationStatus: "finalized" }
      : null;
  }

  function transactionJson(tx: ExecutedTransaction, encoding: unknown) {
    const m = tx.message;
    const meta = {
      err: tx.err,
      status: tx.err ? { Err: tx.err } : { Ok: null },
      fee: tx.fee,
      preBalances: tx.preBalances,
      postBalances: tx.postBalances,
      innerInstructions: [],
      logMessages: tx.logs,
      preTokenBalances: tx.preTokenBalances,
      postTokenBalances: tx.postTokenBalances,
      rewards: [],
      loadedAddresses: tx.loadedAddresses,
      computeUnitsConsumed: tx.computeUnitsConsumed,
    };
    let transaction: unknown;
    if (encoding === "base64") transaction = [Buffer.from(tx.wire).toString("base64"), "base64"];
    else if (encoding === "base58") transaction = [b58.decode(tx.wire), "base58"];
    else if (encoding === undefined || encoding === "json")
      transaction = {
        signatures: Object.values(tx.transaction.signatures).map((s) => b58.decode(s ?? new Uint8Array(64))),
        message: {
          accountKeys: m.staticAccounts,
          header: {
            numRequiredSignatures: m.header.numSignerAccounts,
            numReadonlySignedAccounts: m.header.numReadonlySignerAccounts,
            numReadonlyUnsignedAccounts: m.header.numReadonlyNonSignerAccounts,
          },
          recentBlockhash: m.lifetimeToken,
          instructions: m.instructions.map((ix) => ({
            programIdIndex: ix.programAddressIndex,
            accounts: ix.accountIndices ?? [],
            data: b58.decode(ix.data ?? new Uint8Array()),
            stackHeight: null,
          })),
          ...(m.version === 0
            ? {
                addressTableLookups: (m.addressTableLookups ?? []).map((l) => ({
                  accountKey: l.lookupTableAddress,
                  writableIndexes: l.writableIndexes,
                  readonlyIndexes: l.readonlyIndexes,
                })),
              }
            : {}),
        },
      };
    else throw invalidParams(`unsupported encoding: ${String(encoding)}. The local Solana serves json, base64 and base58`);
    return { slot: tx.slot, blockTime: tx.blockTime, version: tx.version, transaction, meta };
  }

  function preflightError(err: SolanaTransactionError, logs: string[], unitsConsumed: bigint): RpcError {
    if (err === "SignatureFailure") return new RpcError(-32003, "Transaction signature verification failure");
    return new RpcError(-32002, `Transaction simulation failed: ${transactionErrorText(err)}`, {
      accounts: null,
      err,
      innerInstructions: null,
      loadedAccountsDataSize: 0,
      logs,
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed,
    });
  }

  const methods: Record<string, Method> = {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": "litesvm-1.5.0", "feature-set": FEATURE_SET }),
    getSlot: ([config]) => context(configParam(config)).slot,
    getBlockHeight: ([config]) => context(configParam(config)).slot,
    getEpochInfo: ([config]) => {
      const slot = context(configParam(config)).slot;
      return {
        absoluteSlot: slot,
        blockHeight: slot,
        epoch: Math.floor(slot / SLOTS_PER_EPOCH),
        slotIndex: slot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        transactionCount: null,
      };
    },
    getLatestBlockhash: ([config]) => {
      const c = configParam(config);
      const { blockhash, lastValidBlockHeight } = sol.latestBlockhash();
      return withContext(c, { blockhash, lastValidBlockHeight });
    },
    isBlockhashValid: ([hash, config]) => {
      if (typeof hash !== "string") throw invalidParams("Invalid params: expected a blockhash string");
      return withContext(configParam(config), sol.window.isRecent(hash));
    },
    getFeeForMessage: ([message, config]) => {
      if (typeof message !== "string") throw invalidParams("Invalid params: expected a base64 message");
      let m: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
      try {
        m = getCompiledTransactionMessageDecoder().decode(Buffer.from(message, "base64"));
      } catch {
        throw invalidParams("invalid transaction message");
      }
      // 5000 lamports a signature (no priority fee counted).
      const recent = "lifetimeToken" in m && sol.window.isRecent(String(m.lifetimeToken));
      return withContext(configParam(config), recent ? m.header.numSignerAccounts * 5000 : null);
    },
    getBalance: ([addr, config]) => withContext(configParam(config), sol.balance(addressParam(addr))),
    getAccountInfo: ([addr, config]) => {
      const c = configParam(config);
      return withContext(c, encodeAccount(sol.getAccount(addressParam(addr)), c));
    },
    getMultipleAccounts: ([addrs, config]) => {
      if (!Array.isArray(addrs)) throw invalidParams("Invalid params: expected an array of addresses");
      if (addrs.length > 100) throw invalidParams("Too many inputs provided; max 100");
      const c = configParam(config);
      return withContext(
        c,
        addrs.map((a) => encodeAccount(sol.getAccount(addressParam(a)), c)),
      );
    },
    getMinimumBalanceForRentExemption: ([size]) => sol.minimumBalanceForRentExemption(Number(u64Param(size ?? 0, "data length"))),
    getTokenAccountsByOwner: ([owner, filter, config]) => {
      const o = addressParam(owner);
      const f = configParam(filter);
      const c = configParam(config);
      if ((f.mint === undefined) === (f.programId === undefined))
        throw invalidParams("Invalid params: expected a filter with exactly one of mint or programId");
      let query: { mint?: Address; programId?: Address };
      if (f.mint !== undefined) {
        const mint = addressParam(f.mint);
        if (!sol.mint(mint)) throw invalidParams("Invalid param: could not find mint");
        query = { mint };
      } else {
        const programId = addressParam(f.programId);
        if (!isTokenProgram(programId)) throw invalidParams("Invalid param: unrecognized Token program id");
        query = { programId };
      }
      return withContext(
        c,
        sol.tokenAccountsByOwner(o, query).map(({ account }) => ({ pubkey: account.address, account: encodeAccount(account, c) })),
      );
    },
    getTokenAccountBalance: ([addr, config]) => {
      const t = sol.tokenAccount(addressParam(addr));
      if (!t) throw invalidParams("Invalid param: not a Token account");
      return withContext(configParam(config), uiTokenAmount(t.amount, decimalsOf(t.mint)));
    },
    getTokenSupply: ([addr, config]) => {
      const m = sol.mint(addressParam(addr));
      if (!m) throw invalidParams("Invalid param: not a Token mint");
      return withContext(configParam(config), uiTokenAmount(m.supply, m.decimals));
    },
    sendTransaction: ([wire, config]) => {
      const c = configParam(config);
      context(c);
      const r = sol.send(wireParam(wire, c.encoding), { skipPreflight: c.skipPreflight === true });
      // Without preflight the cluster takes the bytes and answers the signature whatever becomes of them.
      if (r.err && !r.landed && c.skipPreflight !== true) throw preflightError(r.err, r.logs, r.unitsConsumed);
      return r.signature;
    },
    simulateTransaction: ([wire, config]) => {
      const c = configParam(config);
      if (c.sigVerify === true && c.replaceRecentBlockhash === true)
        throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
      const r = sol.simulate(wireParam(wire, c.encoding), {
        sigVerify: c.sigVerify === true,
        replaceRecentBlockhash: c.replaceRecentBlockhash === true,
      });
      let accounts: unknown = null;
      const wanted = c.accounts as { addresses?: unknown[]; encoding?: string } | undefined;
      if (wanted?.addresses && !r.err) {
        const after = new Map((r.postAccounts ?? []).map((a) => [a.address, a]));
        accounts = wanted.addresses.map((a) => {
          const address = addressParam(a);
          return encodeAccount(after.get(address) ?? sol.getAccount(address), { encoding: wanted.encoding ?? "base64" });
        });
      }
      return withContext(c, {
        err: r.err,
        logs: r.logs,
        accounts,
        unitsConsumed: r.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        loadedAccountsDataSize: 0,
        ...(r.replacementBlockhash
          ? {
              replacementBlockhash: {
                blockhash: r.replacementBlockhash.blockhash,
                lastValidBlockHeight: r.replacementBlockhash.lastValidBlockHeight,
              },
            }
          : {}),
      });
    },
    getSignatureStatuses: ([sigs, config]) => {
      if (!Array.isArray(sigs)) throw invalidParams("Invalid params: expected an array of signatures");
      if (sigs.length > 256) throw invalidParams("Too many inputs provided; max 256");
      return withContext(configParam(config), sigs.map(statusOf));
    },
    getTransaction: ([sig, config]) => {
      if (typeof sig !== "string") throw invalidParams("Invalid params: expected a signature string");
      const c = configParam(config);
      const tx = sol.transaction(sig);
      if (!tx) return null;
      if (tx.version === 0 && c.maxSupportedTransactionVersion === undefined)
        throw new RpcError(
          -32015,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      return transactionJson(tx, c.encoding);
    },
    getSignaturesForAddress: ([addr, config]) => {
      const c = configParam(config);
      const limit = c.limit === undefined ? 1000 : Number(u64Param(c.limit, "limit"));
      if (limit < 1 || limit > 1000) throw invalidParams("Invalid limit; max 1000");
      return sol
        .signaturesForAddress(addressParam(addr), {
          limit,
          before: typeof c.before === "string" ? c.before : undefined,
          until: typeof c.until === "string" ? c.until : undefined,
        })
        .map((s) => ({
          signature: s.signature,
          slot: s.slot,
          err: s.err,
          memo: s.memo,
          blockTime: s.blockTime,
          confirmationStatus: "finalized",
        }));
    },
    requestAirdrop: ([addr, amount]) => sol.airdrop(addressParam(addr), u64Param(amount, "lamports")),

    // Not Solana's: the local stack's cheat codes.
    /** [mint, owner, units] → {tokenAccount, amount}: credits units to the owner's associated token account. */
    local_mintTo: async ([mint, owner, units]) => {
      const m = addressParam(mint);
      if (!sol.mint(m)) throw invalidParams("Invalid param: could not find mint");
      const tokenAccount = await sol.mintTo(m, addressParam(owner), u64Param(units, "units"));
      return { tokenAccount, amount: sol.tokenAccount(tokenAccount)!.amount.toString() };
    },
    /** [slots] → the new slot: moves time on, so blockhashes older than 150 slots expire. */
    local_advanceSlots: ([slots]) => sol.advanceSlots(Number(u64Param(slots, "slots"))),
  };

  async function handle(request: unknown): Promise<object | undefined> {
    const req = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | null;
    if (!req || typeof req !== "object" || Array.isArray(req) || req.jsonrpc !== "2.0" || typeof req.method !== "string")
      return { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id: null };
    const id = req.id ?? null;
    const method = Object.hasOwn(methods, req.method) ? methods[req.method] : undefined;
    if (!method) return { jsonrpc: "2.0", error: { code: -32601, message: "Method not found" }, id };
    if (req.params !== undefined && !Array.isArray(req.params))
      return { jsonrpc: "2.0", error: { code: -32602, message: "Invalid params: expected an array" }, id };
    try {
      const result = await method((req.params as Params | undefined) ?? []);
      return { jsonrpc: "2.0", result, id };
    } catch (e) {
      if (e instanceof RpcError)
        return { jsonrpc: "2.0", error: { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) }, id };
      if (e instanceof InvalidTransaction) return { jsonrpc: "2.0", error: { code: -32602, message: e.message }, id };
      log.warn({ error: firstLine(e), method: req.method }, "request failed");
      return { jsonrpc: "2.0", error: { code: -32603, message: `Internal error: ${firstLine(e)}` }, id };
    }
  }

  const app = new Hono();
  app.get("/health", (c) => c.text("ok"));
  app.post("/", async (c) => {
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.body(stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }), 200, {
        "content-type": "application/json",
      });
    }
    let out: unknown;
    if (Array.isArray(body)) {
      out =
        body.length === 0
          ? { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id: null }
          : (await Promise.all(body.map(handle))).filter(Boolean);
    } else out = await handle(body);
    return c.body(stringify(out), 200, { "content-type": "application/json" });
  });
  return app;
}

/**
 * Starts the JSON-RPC front of a LocalSolana on 127.0.0.1.
 *
 *   const rpc = await startSolanaRpc({ svm: createLocalSolana() });
 *   process.env.SOLANA_RPC_URL = rpc.url; // http://127.0.0.1:40125
 *   await rpc.close();
 */
export async function startSolanaRpc(opts: SolanaRpcOptions): Promise<SolanaRpc> {
  const app = createSolanaRpcApp(opts.svm);
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve) => {
    const server = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: "127.0.0.1" }, (info) => resolve({ server, port: info.port }));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
