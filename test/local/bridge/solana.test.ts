// The DLN stand-in with a Solana source (DLN's chain 7565164), on the run's stack: create-tx answers DLN's estimation
// and an unsigned v0 transaction paying the stand-in's escrow (a key's USDC account with a memo; no DLN Solana program),
// the payer signs it in Node with @solana/kit after refreshing the blockhash as the service does, the local Solana's
// front runs it, and the solver fills the order on the EVM destination, then takes the escrow (or the escrow refunds
// the payer after the authority's sendSolanaOrderCancel). Amounts are read per order (this order's transactions, the
// payer's own accounts): other test files use the same solver and escrow at the same time.
import { getAddMemoInstruction, LEGACY_MEMO_PROGRAM_ADDRESS_V3 } from "@solana-program/memo";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
  type TransactionMessageBytes,
} from "@solana/kit";
import { describe, expect, inject, it } from "vitest";
import { decodeFunctionData, encodeFunctionData, hexToBytes, parseEther, type Address as EvmAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DLN_EVM } from "../../../chains/registry.js";
import { activeChains } from "../../../chains/runtime.js";
import { SOLANA } from "../../../chains/solana.js";
import {
  bridgeDestinationAbi,
  deBridgeGateAbi,
  DLN_SOLANA_CHAIN_ID,
  dlnOrderId,
  evmAddressToBytes,
  TAKE,
  type DlnOrder,
} from "../../../local/bridge/abi.js";
import { BRIDGE_FEE_BPS, OPERATING_EXPENSE_USD } from "../../../local/bridge/quote.js";
import { SOLANA_FIX_FEE } from "../../../local/bridge/solana-orders.js";
import { LOCAL_SOLANA } from "../../../local/solana/accounts.js";
import { parsePrice18 } from "../../../core/money.js";
import { solanaKeyHex } from "../../../modules/bridge/index.js";
import { chainHelpers, waitFor } from "../../helpers/chain.js";

const env = inject("stackEnv");
const BASE = env.BRIDGE_API_URL!;
const SOLANA_RPC = env.SOLANA_RPC_URL!;
const rpc = createSolanaRpc(SOLANA_RPC);
const chains = activeChains(env);
const chain137 = chains.find((c) => c.chainId === 137)!;
const chain777 = chains.find((c) => c.chainId === 777177)!;
const evm137 = chainHelpers(chain137);
const evm777 = chainHelpers(chain777);
const USDC = SOLANA.usdc.mint as Address;
const USDC777 = evm777.token("USDC").address;
const USDT137 = evm137.token("USDT0").address;
const OPEX = (parsePrice18(OPERATING_EXPENSE_USD) * 10n ** 6n + 10n ** 18n - 1n) / 10n ** 18n; // 0.10 USDC
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const randomEvm = () => privateKeyToAccount(generatePrivateKey()).address;
const LAMPORTS = 1_000_000_000n; // what each test payer is airdropped
const SIGNATURE_FEE = 5000n;

async function get(path: string, query?: Record<string, string>) {
  const res = await fetch(`${BASE}${path}${query ? `?${new URLSearchParams(query)}` : ""}`);
  return { status: res.status, body: (await res.json()) as any };
}

/** A raw JSON-RPC call to the local Solana's front (its local_* methods, and getTransaction's JSON as sent). */
async function call(method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(SOLANA_RPC, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as any;
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const ataOf = async (owner: Address) => (await findAssociatedTokenPda({ owner, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
const usdcOf = async (owner: Address) => {
  const accounts = await call("getTokenAccountsByOwner", [owner, { mint: USDC }, { encoding: "jsonParsed" }]);
  return accounts.value.reduce((sum: bigint, a: any) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount), 0n);
};
const lamportsOf = async (owner: Address) => (await rpc.getBalance(owner).send()).value;

/** A fresh Solana payer: 1 SOL (requestAirdrop) and `usdc` units of USDC (local_mintTo). */
async function newSolanaPayer(usdc: bigint): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  await call("requestAirdrop", [payer.address, Number(LAMPORTS)]);
  await call("local_mintTo", [USDC, payer.address, String(usdc)]);
  return payer;
}

type SolanaOrderParams = { payer: Address; receiver: EvmAddress; authority: EvmAddress; out: bigint; to?: number; tokenOut?: EvmAddress };

/** create-tx from Solana as the service sends it (a reverse market order to an exact amount). */
function solanaQuery(p: SolanaOrderParams): Record<string, string> {
  return {
    srcChainId: "7565164",
    srcChainTokenIn: USDC,
    srcChainTokenInAmount: "auto",
    dstChainId: String(p.to ?? 777177),
    dstChainTokenOut: p.tokenOut ?? USDC777,
    dstChainTokenOutAmount: String(p.out),
    dstChainTokenOutRecipient: p.receiver,
    senderAddress: p.payer,
    srcChainOrderAuthorityAddress: p.payer,
    dstChainOrderAuthorityAddress: p.authority,
    srcChainRefundAddress: p.payer,
    prependOperatingExpenses: "true",
  };
}

/** DLN's order a create-tx answer commits to, rebuilt from the query (32-byte Solana fields). */
function expectedOrder(body: any, p: SolanaOrderParams): DlnOrder {
  return {
    makerOrderNonce: BigInt(body.order.salt),
    makerSrc: solanaKeyHex(p.payer),
    giveChainId: 7565164n,
    giveTokenAddress: solanaKeyHex(USDC),
    giveAmount: BigInt(body.estimation.srcChainTokenIn.amount),
    takeChainId: BigInt(p.to ?? 777177),
    takeTokenAddress: evmAddressToBytes(p.tokenOut ?? USDC777),
    takeAmount: p.out,
    receiverDst: evmAddressToBytes(p.receiver),
    givePatchAuthoritySrc: solanaKeyHex(p.payer),
    orderAuthorityAddressDst: evmAddressToBytes(p.authority),
    allowedTakerDst: "0x",
    allowedCancelBeneficiarySrc: "0x",
    externalCall: "0x",
  };
}

/**
 * What the service (modules/bridge/solana.ts withBlockhash) and the payer's wallet do with DLN's tx.data: put in the
 * cluster's latest blockhash (only the message's lifetime token changes), then sign.
 */
async function signed(payer: KeyPairSigner, txHex: string) {
  const { blockhash } = (await rpc.getLatestBlockhash().send()).value;
  const tx = getTransactionDecoder().decode(hexToBytes(txHex as Hex));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...message, lifetimeToken: blockhash }) as TransactionMessageBytes;
  return signTransaction([payer.keyPair], { ...tx, messageBytes });
}

const send = async (tx: Parameters<typeof getBase64EncodedWireTransaction>[0]): Promise<Signature> =>
  rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: "base64" }).send();

/** USDC moved by one transaction, per owner (post − pre of its token balances; zero deltas left out). */
async function usdcMoves(signature: string): Promise<Record<string, bigint>> {
  const tx = await call("getTransaction", [signature, { encoding: "json", maxSupportedTransactionVersion: 0 }]);
  expect(tx.meta.err).toBeNull();
  const moves: Record<string, bigint> = {};
  for (const [list, sign] of [
    [tx.meta.preTokenBalances, -1n],
    [tx.meta.postTokenBalances, 1n],
  ] as const)
    for (const b of list.filter((x: any) => x.mint === USDC))
      moves[b.owner] = (moves[b.owner] ?? 0n) + sign * BigInt(b.uiTokenAmount.amount);
  return Object.fromEntries(Object.entries(moves).filter(([, v]) => v !== 0n));
}

/** Lamports one transaction moved for an account. */
async function lamportMove(signature: string, account: Address): Promise<bigint> {
  const tx = await call("getTransaction", [signature, { encoding: "json", maxSupportedTransactionVersion: 0 }]);
  const i = tx.transaction.message.accountKeys.indexOf(account);
  expect(i).toBeGreaterThanOrEqual(0);
  return BigInt(tx.meta.postBalances[i]) - BigInt(tx.meta.preBalances[i]);
}

/** The transaction touching `account` whose memo is `memo` (getSignaturesForAddress shows memos as "[len] text"). */
async function signatureWithMemo(account: Address, memo: string): Promise<string> {
  let found: string | undefined;
  await waitFor(
    async () => {
      const list = await call("getSignaturesForAddress", [account, { limit: 1000 }]);
      found = list.find((s: any) => s.memo === `[${memo.length}] ${memo}`)?.signature;
      return !!found;
    },
    { what: `a transaction with memo ${memo}` },
  );
  return found!;
}

/** Polls the status until `final`, returning each distinct status seen in order. */
async function followStatus(orderId: Hex, final: string): Promise<string[]> {
  const seen: string[] = [];
  await waitFor(
    async () => {
      const r = await get(`/v1.0/dln/order/${orderId}/status`);
      expect(r.status).toBe(200);
      if (seen.at(-1) !== r.body.status) seen.push(r.body.status);
      return r.body.status === final;
    },
    { timeout: 45_000, interval: 50, what: `order ${final}` },
  );
  return seen;
}

/** Adds the receiver to the solver's skip list (its order stays Created) for the duration of `fn`. */
async function skipping<T>(receiver: EvmAddress, fn: () => Promise<T>): Promise<T> {
  expect((await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "POST" })).status).toBe(204);
  try {
    return await fn();
  } finally {
    await fetch(`${BASE}/local/solver/skip/${receiver}`, { method: "DELETE" });
  }
}

const OUT = 10_000_000n; // 10 USDC on 777177
// 10 USDC at 1.00 + 0.3 % = 10.03, + 0.10 USD of operating expense = 10.13 USDC (Solana USDC priced as EVM USDC).
const GIVE = ceilDiv(OUT * (10_000n + BRIDGE_FEE_BPS), 10_000n) + OPEX;

describe("DLN stand-in, Solana source (7565164)", () => {
  it("create-tx from 7565164: DLN's estimation, a 0x-hex v0 transaction for the payer to sign, the order id (equal to dlnOrderId of the order); bad base58 is INVALID_QUERY_PARAMETERS; another mint UNSUPPORTED_TOKEN_IN", async () => {
    expect(GIVE).toBe(10_130_000n);
    const payer = (await generateKeyPairSigner()).address;
    const p = { payer, receiver: randomEvm(), authority: randomEvm(), out: OUT };
    const r = await get("/v1.0/dln/order/create-tx", solanaQuery(p));
    expect(r.status).toBe(200);
    const order = expectedOrder(r.body, p);
    const usdcIn = { address: USDC, chainId: 7565164, decimals: 6, name: "USD Coin", symbol: "USDC" };
    expect(r.body).toEqual({
      estimation: {
        srcChainTokenIn: { ...usdcIn, amount: "10130000", approximateOperatingExpense: "100000", mutatedWithOperatingExpense: true },
        dstChainTokenOut: {
          address: USDC777,
          chainId: 777177,
          decimals: 6,
          name: "USDC (local 777177)",
          symbol: "USDC",
          amount: "10000000",
          recommendedAmount: "10000000",
          maxTheoreticalAmount: "10000000",
        },
        recommendedSlippage: 0,
        costsDetails: [
          {
            chain: "7565164",
            tokenIn: USDC,
            tokenOut: USDC,
            amountIn: "10130000",
            amountOut: "10030000",
            type: "EstimatedOperatingExpenses",
            payload: { feeAmount: "100000" },
          },
          {
            chain: "7565164",
            tokenIn: USDC,
            tokenOut: USDC,
            amountIn: "10030000",
            amountOut: "10000000",
            type: "TakerMargin",
            payload: { feeAmount: "30000", feeBps: "30" },
          },
        ],
      },
      prependedOperatingExpenseCost: "100000",
      fixFee: "15000000", // DLN's 0.015 SOL, in lamports
      tx: { data: expect.stringMatching(/^0x(?:[0-9a-f]{2})+$/) },
      orderId: dlnOrderId(order),
      order: { approximateFulfillmentDelay: 3, salt: Number(order.makerOrderNonce) },
    });
    expect(SOLANA_FIX_FEE).toBe(15_000_000n);
    // The 32-byte Solana fields of DLN's order: the payer's key and the mint, as their raw bytes.
    expect(order.makerSrc).toBe(`0x${Buffer.from(getBase58Encoder().encode(payer)).toString("hex")}`);
    expect(order.giveTokenAddress).toBe(`0x${Buffer.from(getBase58Encoder().encode(USDC)).toString("hex")}`);

    // tx.data: an unsigned v0 transaction, the payer its fee payer and only signer.
    const tx = getTransactionDecoder().decode(hexToBytes(r.body.tx.data));
    expect(tx.signatures).toEqual({ [payer]: null });
    const m = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    expect(m.version).toBe(0);
    if (m.version !== 0) throw new Error("not a v0 transaction");
    expect(m.staticAccounts[0]).toBe(payer);
    expect(m.header.numSignerAccounts).toBe(1);
    // Its blockhash is the cluster's current one (the service refreshes it anyway).
    expect((await rpc.isBlockhashValid(m.lifetimeToken as never).send()).value).toBe(true);
    const escrow = LOCAL_SOLANA.escrow.address;
    const [payerAta, escrowAta] = [await ataOf(payer), await ataOf(escrow)];
    const ixs = m.instructions.map((ix) => ({
      program: m.staticAccounts[ix.programAddressIndex],
      accounts: (ix.accountIndices ?? []).map((i) => m.staticAccounts[i]),
      data: new Uint8Array(ix.data ?? []),
    }));
    expect(ixs.map((ix) => ix.program)).toEqual([
      ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
      TOKEN_PROGRAM_ADDRESS,
      "11111111111111111111111111111111",
      LEGACY_MEMO_PROGRAM_ADDRESS_V3,
    ]);
    // CreateAssociatedTokenIdempotent (1) of the escrow's USDC account, paid by the payer.
    expect(ixs[0]!.data).toEqual(new Uint8Array([1]));
    expect(ixs[0]!.accounts.slice(0, 4)).toEqual([payer, escrowAta, escrow, USDC]);
    // TransferChecked (12): payer's USDC account → escrow's, exactly the order's giveAmount, 6 decimals.
    const view = new DataView(ixs[1]!.data.buffer, ixs[1]!.data.byteOffset);
    expect([ixs[1]!.data[0], view.getBigUint64(1, true), ixs[1]!.data[9]]).toEqual([12, GIVE, 6]);
    expect(ixs[1]!.accounts).toEqual([payerAta, USDC, escrowAta, payer]);
    // The creation fixFee in SOL to the escrow key (System Transfer, 2).
    const sys = new DataView(ixs[2]!.data.buffer, ixs[2]!.data.byteOffset);
    expect([sys.getUint32(0, true), sys.getBigUint64(4, true)]).toEqual([2, SOLANA_FIX_FEE]);
    expect(ixs[2]!.accounts).toEqual([payer, escrow]);
    expect(new TextDecoder().decode(ixs[3]!.data)).toBe(`dln:${r.body.orderId}`);
    // Quoted, not created.
    expect((await get(`/v1.0/dln/order/${r.body.orderId}/status`)).body).toEqual({ orderId: r.body.orderId, status: "None" });

    // Errors in DLN's envelope.
    const q = solanaQuery(p);
    const cases: [Record<string, string>, number, string, string][] = [
      [
        { ...q, senderAddress: "0OIl" + payer.slice(4) },
        2,
        "INVALID_QUERY_PARAMETERS",
        "senderAddress is not a valid Solana address (base58 of 32 bytes)",
      ],
      [
        { ...q, srcChainOrderAuthorityAddress: randomEvm() },
        2,
        "INVALID_QUERY_PARAMETERS",
        "srcChainOrderAuthorityAddress is not a valid Solana address (base58 of 32 bytes)",
      ],
      [
        { ...q, srcChainTokenIn: `${USDC}0` },
        2,
        "INVALID_QUERY_PARAMETERS",
        "srcChainTokenIn is not a valid Solana address (base58 of 32 bytes)",
      ],
      [
        { ...q, srcChainTokenIn: "11111111111111111111111111111111" },
        4,
        "UNSUPPORTED_TOKEN_IN",
        "token 11111111111111111111111111111111 is not supported on chain 7565164 (the local stand-in takes USDC only)",
      ],
      [
        { ...q, srcChainTokenIn: LOCAL_SOLANA.payer.address },
        4,
        "UNSUPPORTED_TOKEN_IN",
        `token ${LOCAL_SOLANA.payer.address} is not supported on chain 7565164 (the local stand-in takes USDC only)`,
      ],
      [{ ...q, dstChainTokenOutRecipient: payer }, 2, "INVALID_QUERY_PARAMETERS", "dstChainTokenOutRecipient is not a valid EVM address"],
      [{ ...q, dstChainId: "7565164" }, 2, "INVALID_QUERY_PARAMETERS", "dstChainId must be one of the following values: 137, 777177"],
    ];
    for (const [query, errorCode, errorId, errorMessage] of cases) {
      const res = await get("/v1.0/dln/order/create-tx", query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { errorCode, errorId, errorMessage } });
    }
    // A malformed signature or hash is refused by order-ids.
    expect((await get("/v1.0/dln/tx/0OIl/order-ids")).body.errorId).toBe("INVALID_QUERY_PARAMETERS");
    // Solana is listed as a (source) chain.
    expect((await get("/v1.0/supported-chains-info")).body.chains).toContainEqual({
      chainId: DLN_SOLANA_CHAIN_ID,
      originalChainId: DLN_SOLANA_CHAIN_ID,
      chainName: "Solana",
    });
  });

  it("the payer's signed transaction (blockhash refreshed) creates the order; order-ids by signature; the solver pays the EVM receiver exactly; Created → Fulfilled → ClaimedUnlock; the escrow's USDC went to the solver", async () => {
    const payer = await newSolanaPayer(50_000_000n);
    const receiver = randomEvm();
    const p = { payer: payer.address, receiver, authority: randomEvm(), out: OUT };
    const q = await get("/v1.0/dln/order/create-tx", solanaQuery(p));
    expect(q.status).toBe(200);
    const orderId: Hex = q.body.orderId;
    const tx = await signed(payer, q.body.tx.data);
    const signature = getSignatureFromTransaction(tx);
    // Not sent yet: no order for that signature, the order only quoted.
    expect(await get(`/v1.0/dln/tx/${signature}/order-ids`)).toEqual({ status: 200, body: { orderIds: [] } });
    expect(await send(tx)).toBe(signature);
    expect(await get(`/v1.0/dln/tx/${signature}/order-ids`)).toEqual({ status: 200, body: { orderIds: [orderId] } });

    const seen = await followStatus(orderId, "ClaimedUnlock");
    expect(seen[0]).toBe("Created");
    expect(seen).toContain("Fulfilled");
    const order = ["Created", "Fulfilled", "SentUnlock", "ClaimedUnlock"];
    expect(seen.every((s) => order.includes(s))).toBe(true);
    expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort((a, b) => a - b));

    // The receiver got exactly the amount on 777177; the payer paid exactly the quote, the creation fee and one signature.
    expect(await evm777.balanceOf("USDC", receiver)).toBe(OUT);
    expect(await usdcOf(payer.address)).toBe(50_000_000n - GIVE);
    expect(await lamportsOf(payer.address)).toBe(LAMPORTS - SOLANA_FIX_FEE - SIGNATURE_FEE);
    // The create transaction moved the order's USDC into the escrow, and the escrow's payout (memo dln-unlock) moved
    // exactly that to the solver's Solana key.
    const escrow = LOCAL_SOLANA.escrow.address;
    expect(await usdcMoves(signature)).toEqual({ [payer.address]: -GIVE, [escrow]: GIVE });
    const unlock = await signatureWithMemo(await ataOf(escrow), `dln-unlock:${orderId}`);
    expect(await usdcMoves(unlock)).toEqual({ [escrow]: -GIVE, [LOCAL_SOLANA.solver.address]: GIVE });

    expect((await get(`/v1.0/dln/order/${orderId}`)).body).toMatchObject({
      orderId,
      status: "ClaimedUnlock",
      orderStruct: { giveOffer: { chainId: 7565164, amount: String(GIVE) }, takeOffer: { chainId: 777177, amount: String(OUT) } },
      srcChainTxHash: signature,
    });
    // A fulfilled order cannot be cancelled.
    expect((await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).body.errorId).toBe("ORDER_NOT_CANCELLABLE");
  });

  it("an unfilled Solana order's cancel-tx calls sendSolanaOrderCancel with the payer as bytes32 beneficiary and value = gate fee + execution fee + rewards; sent by the authority it is relayed and the payer's SPL balance is back exactly", async () => {
    const payer = await newSolanaPayer(20_000_000n);
    const authority = await evm137.newPayer();
    const receiver = randomEvm();
    await skipping(receiver, async () => {
      const out = 3_000_000n;
      const p = { payer: payer.address, receiver, authority: authority.address, out, to: 137, tokenOut: USDT137 };
      const q = await get("/v1.0/dln/order/create-tx", solanaQuery(p));
      expect(q.status).toBe(200);
      const give = BigInt(q.body.estimation.srcChainTokenIn.amount);
      const orderId: Hex = q.body.orderId;
      // Not created yet: not cancellable.
      expect((await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).body.errorId).toBe("ORDER_NOT_CANCELLABLE");
      const signature = await send(await signed(payer, q.body.tx.data));
      expect(await usdcOf(payer.address)).toBe(20_000_000n - give);

      // Several solver rounds and destination blocks later, still unfilled.
      const block = await evm137.pub.getBlockNumber();
      await waitFor(async () => (await evm137.pub.getBlockNumber()) >= block + 3n, { what: "3 blocks on 137" });
      expect((await get(`/v1.0/dln/order/${orderId}/status`)).body).toEqual({ orderId, status: "Created" });
      const take = await evm137.pub.readContract({
        address: chain137.bridgeDestination!,
        abi: bridgeDestinationAbi,
        functionName: "takeOrders",
        args: [orderId],
      });
      expect(take[0]).toBe(TAKE.NotSet);

      // 137's gate (behind DLN's DlnDestination address) serves the route to Solana with the global fee: 0.5 MATIC.
      expect(chain137.bridgeDestination).toBe(DLN_EVM.destination);
      const gate = await evm137.pub.readContract({ address: DLN_EVM.destination, abi: bridgeDestinationAbi, functionName: "deBridgeGate" });
      const [routeFee, supported] = await evm137.pub.readContract({
        address: gate,
        abi: deBridgeGateAbi,
        functionName: "getChainToConfig",
        args: [7565164n],
      });
      expect([routeFee, supported]).toEqual([0n, true]);
      const fee = await evm137.pub.readContract({ address: gate, abi: deBridgeGateAbi, functionName: "globalFixedNativeFee" });
      expect(fee).toBe(parseEther("0.5"));

      const c = await get(`/v1.0/dln/order/${orderId}/cancel-tx`);
      expect(c.status).toBe(200);
      // The stand-in's keeper share (a tenth of the gate's fee) rides as the claim_cancel reward, in units of 1e10 wei.
      const reward = parseEther("0.05") / 10n ** 10n;
      expect(c.body).toEqual({
        to: DLN_EVM.destination,
        data: encodeFunctionData({
          abi: bridgeDestinationAbi,
          functionName: "sendSolanaOrderCancel",
          args: [expectedOrder(q.body, p), solanaKeyHex(payer.address), 0n, 0n, reward],
        }),
        value: String(parseEther("0.55")),
        chainId: 137,
        from: authority.address,
        cancelBeneficiary: payer.address,
      });
      expect(c.body.data.slice(0, 10)).toBe("0x9327145d");
      const { args } = decodeFunctionData({ abi: bridgeDestinationAbi, data: c.body.data });
      const [, beneficiary, executionFee, r1, r2] = args as unknown as [DlnOrder, Hex, bigint, bigint, bigint];
      expect(beneficiary).toBe(solanaKeyHex(payer.address));
      expect(BigInt(c.body.value)).toBe(fee + executionFee + (r1 + r2) * 10n ** 10n);
      const gateBefore = await evm137.pub.getBalance({ address: gate });
      await evm137.wait(
        await evm137.walletOf(authority).sendTransaction({ to: c.body.to, data: c.body.data, value: BigInt(c.body.value) }),
      );
      expect((await evm137.pub.getBalance({ address: gate })) - gateBefore).toBe(parseEther("0.55"));
      const seen = await followStatus(orderId, "ClaimedOrderCancel");
      expect(seen.every((s) => s === "SentOrderCancel" || s === "ClaimedOrderCancel")).toBe(true);

      // The payer has all its USDC back, and the creation fee: only the signature's fee is spent.
      expect(await usdcOf(payer.address)).toBe(20_000_000n);
      expect(await lamportsOf(payer.address)).toBe(LAMPORTS - SIGNATURE_FEE);
      const escrow = LOCAL_SOLANA.escrow.address;
      expect(await usdcMoves(signature)).toEqual({ [payer.address]: -give, [escrow]: give });
      const refund = await signatureWithMemo(await ataOf(payer.address), `dln-cancel:${orderId}`);
      expect(await usdcMoves(refund)).toEqual({ [escrow]: -give, [payer.address]: give });
      expect(await lamportMove(refund, payer.address)).toBe(SOLANA_FIX_FEE);
      expect(await evm137.balanceOf("USDT0", receiver)).toBe(0n);
      expect((await get(`/v1.0/dln/order/${orderId}/cancel-tx`)).status).toBe(400);
    });
  });

  it("a transfer to the escrow of the wrong amount, without the memo or without the creation fee creates nothing; the quoted transaction then does", async () => {
    const payer = await newSolanaPayer(40_000_000n);
    const receiver = randomEvm();
    await skipping(receiver, async () => {
      const q = await get(
        "/v1.0/dln/order/create-tx",
        solanaQuery({ payer: payer.address, receiver, authority: randomEvm(), out: 1_000_000n }),
      );
      const orderId: Hex = q.body.orderId;
      const give = BigInt(q.body.estimation.srcChainTokenIn.amount);
      const escrow = LOCAL_SOLANA.escrow.address;
      const [payerAta, escrowAta] = [await ataOf(payer.address), await ataOf(escrow)];
      const transfer = (amount: bigint) =>
        getTransferCheckedInstruction({ source: payerAta, mint: USDC, destination: escrowAta, authority: payer, amount, decimals: 6 });
      const fixFee = getTransferSolInstruction({ source: payer, destination: escrow, amount: SOLANA_FIX_FEE });
      const memo = getAddMemoInstruction({ memo: `dln:${orderId}` }, { programAddress: LEGACY_MEMO_PROGRAM_ADDRESS_V3 });
      const sendOwn = async (instructions: Instruction[]) => {
        const { blockhash, lastValidBlockHeight } = (await rpc.getLatestBlockhash().send()).value;
        const message = pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight }, m),
          (m) => appendTransactionMessageInstructions(instructions, m),
        );
        return send(await signTransactionMessageWithSigners(message));
      };
      const cases: [Instruction[], bigint][] = [
        [[transfer(give - 1n), fixFee, memo], give - 1n], // one unit short
        [[transfer(give + 1n), fixFee, memo], give + 1n], // one unit over
        [[transfer(give), fixFee], give], // no memo
        [[transfer(give), memo], give], // no creation fee
      ];
      for (const [instructions, moved] of cases) {
        const signature = await sendOwn(instructions);
        // It landed (the tokens moved into the escrow), and created nothing.
        expect(await usdcMoves(signature)).toEqual({ [payer.address]: -moved, [escrow]: moved });
        expect(await get(`/v1.0/dln/tx/${signature}/order-ids`)).toEqual({ status: 200, body: { orderIds: [] } });
        expect((await get(`/v1.0/dln/order/${orderId}/status`)).body.status).toBe("None");
      }
      const signature = await send(await signed(payer, q.body.tx.data));
      expect(await get(`/v1.0/dln/tx/${signature}/order-ids`)).toEqual({ status: 200, body: { orderIds: [orderId] } });
      expect((await get(`/v1.0/dln/order/${orderId}/status`)).body.status).toBe("Created");
    });
  });
});
