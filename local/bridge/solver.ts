import {
  createWalletClient,
  getAddress,
  http,
  maxUint256,
  parseEther,
  size,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type WalletClient,
} from "viem";
import { testTokenAbi } from "../../abis/TestToken.js";
import { viemChain } from "../../chains/clients.js";
import { firstLine, logger } from "../../core/log.js";
import type { Address as SolanaAddress } from "@solana/kit";
import { solanaKeyOfHex } from "../../modules/bridge/index.js";
import { bridgeDestinationAbi, bridgeSourceAbi, bytesToEvmAddress, DLN_SOLANA_CHAIN_ID, GIVE, TAKE, type DlnOrder } from "./abi.js";
import { messageValue, readGateFee } from "./gate-fee.js";
import { OrderBook, type BridgeChain, type OrderFacts } from "./orders.js";
import type { SolanaOrderBook } from "./solana-orders.js";

// The local solver: fulfils orders on the destination chain from its own balance, asks for its escrow back (paying the
// destination gate's messaging fee, as a DLN taker does), and, as the source contracts' `messenger`, relays the
// destinations' SentOrderUnlock -> claimUnlock(orderId, beneficiary) and SentOrderCancel -> claimCancel(orderId,
// cancelBeneficiary) (what deBridge's cross-chain messaging does on real chains). Orders from Solana (7565164) are
// filled the same way when it has the Solana order book (solana-orders.ts); their escrow is a stand-in key's token
// account (no DLN Solana program, DESIGN option b), paid out directly: to the solver's Solana key a round after the fill
// (no unlock message: BridgeDestination has no Solana unlock), to the cancel beneficiary once the destination emitted
// SentOrderCancel. Local chains only: it mints test tokens to itself and tops its native balance up with anvil_setBalance.

/** DLN's order, with its receiver as an EVM address for convenience (every local destination is an EVM chain). */
export type SolverOrder = DlnOrder & { receiver: Address };
const withReceiver = (o: DlnOrder): SolverOrder => ({ ...o, receiver: bytesToEvmAddress(o.receiverDst) });

export type SolverOptions = {
  chains: BridgeChain[];
  /** The solver's account: the taker on destinations and the messenger of every BridgeSource. */
  account: PrivateKeyAccount;
  /** Orders to leave unfilled (they stay Created until cancelled); cancels and unlocks are relayed regardless. */
  skip?: (order: SolverOrder, orderId: Hex) => boolean;
  /** Pause between two rounds (default 500 ms). */
  intervalMs?: number;
  /** Solana-source orders: their book (shared with the stand-in) and the solver's Solana key (unlocks pay it). */
  solana?: { book: SolanaOrderBook; beneficiary: SolanaAddress };
};

export type Solver = {
  book: OrderBook;
  /** Rounds that finished (tests wait for a round to be sure the solver saw an order). */
  readonly rounds: number;
  stop(): Promise<void>;
};

/** Test tokens the solver mints above what an order needs, so it rarely mints. */
const TOPUP_UNITS = 1_000_000n;
/** A failed order is retried after this long. */
const RETRY_MS = 5_000;

/**
 * Starts the solver loop over every local chain with bridge contracts.
 *
 *   const solver = startSolver({ chains, account: LOCAL_ROLES.solver, skip: (o) => o.receiver === unpaid });
 *   await solver.stop();
 */
export function startSolver(opts: SolverOptions): Solver {
  const log = logger("bridge-solver");
  const me = opts.account.address;
  const book = new OrderBook(opts.chains, undefined, opts.solana?.book);
  const fromSolana = (f: OrderFacts) => f.order.giveChainId === BigInt(DLN_SOLANA_CHAIN_ID);
  const wallets = new Map<number, WalletClient>(
    opts.chains.map((c) => [c.chainId, createWalletClient({ chain: viemChain(c), transport: http(c.rpcUrl), account: opts.account })]),
  );
  const queues = new Map<number, Promise<unknown>>();
  const busy = new Set<Hex>();
  const retryAt = new Map<Hex, number>();
  const mine = new Set<Hex>(); // fulfilled by this solver (before the book reads FulfilledOrder)
  const messengerOf = new Map<number, boolean>();
  const funded = new Set<number>();

  /** Sends one contract call on a chain and waits for it: one transaction at a time per chain (one nonce sequence). */
  const send = (chainId: number, call: { address: Address; abi: Abi; functionName: string; args: unknown[]; value?: bigint }) => {
    const run = async () => {
      const hash = await wallets.get(chainId)!.writeContract({ ...call, account: opts.account } as never);
      const receipt = await book.client(chainId).waitForTransactionReceipt({ hash, pollingInterval: 100 });
      if (receipt.status !== "success") throw new Error(`${call.functionName} reverted (${hash})`);
      return receipt;
    };
    const p = (queues.get(chainId) ?? Promise.resolve()).catch(() => {}).then(run);
    queues.set(chainId, p);
    return p;
  };

  /** Gas money for the account on a local chain (Anvil's dev accounts have plenty; another key may have none). */
  const ensureGas = async (chainId: number, extra = 0n) => {
    if (funded.has(chainId) && extra === 0n) return;
    const pub = book.client(chainId);
    const balance = await pub.getBalance({ address: me });
    const want = parseEther("10") + extra;
    if (balance < want)
      await pub.request({ method: "anvil_setBalance" as never, params: [me, `0x${(want + parseEther("1000")).toString(16)}`] as never });
    funded.add(chainId);
  };

  const isMessenger = async (chainId: number) => {
    let ok = messengerOf.get(chainId);
    if (ok === undefined) {
      const src = book.chain(chainId)!.bridgeSource!;
      const messenger = await book.client(chainId).readContract({ address: src, abi: bridgeSourceAbi, functionName: "messenger" });
      ok = getAddress(messenger) === me;
      if (!ok) log.warn({ chainId, messenger, solver: me }, "the solver is not this BridgeSource's messenger: it relays nothing there");
      messengerOf.set(chainId, ok);
    }
    return ok;
  };

  const fulfil = async (f: OrderFacts) => {
    const o = f.order;
    const dst = book.chain(o.takeChainId)!;
    const chainId = dst.chainId;
    const pub = book.client(chainId);
    const destination = dst.bridgeDestination!;
    const takeToken = bytesToEvmAddress(o.takeTokenAddress);
    if (takeToken === zeroAddress) {
      await ensureGas(chainId, o.takeAmount);
    } else {
      await ensureGas(chainId);
      const [balance, allowance] = await Promise.all([
        pub.readContract({ address: takeToken, abi: testTokenAbi, functionName: "balanceOf", args: [me] }) as Promise<bigint>,
        pub.readContract({ address: takeToken, abi: testTokenAbi, functionName: "allowance", args: [me, destination] }) as Promise<bigint>,
      ]);
      const prep: Promise<unknown>[] = [];
      if (balance < o.takeAmount) {
        const decimals = dst.tokens.find((t) => t.address.toLowerCase() === takeToken.toLowerCase())?.decimals ?? 18;
        const amount = o.takeAmount + TOPUP_UNITS * 10n ** BigInt(decimals);
        prep.push(send(chainId, { address: takeToken, abi: testTokenAbi as Abi, functionName: "mint", args: [me, amount] }));
      }
      if (allowance < o.takeAmount)
        prep.push(
          send(chainId, { address: takeToken, abi: testTokenAbi as Abi, functionName: "approve", args: [destination, maxUint256] }),
        );
      await Promise.all(prep);
    }
    await send(chainId, {
      address: destination,
      abi: bridgeDestinationAbi,
      functionName: "fulfillOrder",
      args: [o, o.takeAmount, f.orderId, "0x", me],
      value: takeToken === zeroAddress ? o.takeAmount : undefined,
    });
    mine.add(f.orderId);
    log.info({ orderId: f.orderId, chainId, receiver: o.receiverDst, amount: String(o.takeAmount) }, "fulfilled");
    // A Solana order's escrow is claimed in a later round (it stays Fulfilled meanwhile, as DLN's do until unlocked).
    if (!fromSolana(f)) await unlock(f);
  };

  /**
   * sendEvmUnlock to the solver itself, paying the destination gate's messaging fee (no execution fee: it claims itself).
   * A Solana order's escrow is paid to the solver's Solana key directly.
   */
  const unlock = async (f: OrderFacts) => {
    if (fromSolana(f)) {
      const signature = await opts.solana!.book.claimUnlock(f.orderId, opts.solana!.beneficiary);
      log.info({ orderId: f.orderId, signature, beneficiary: opts.solana!.beneficiary }, "Solana unlock claimed");
      return;
    }
    const dst = book.chain(f.order.takeChainId)!;
    const fee = await readGateFee(book.client(dst.chainId), dst.bridgeDestination!, f.order.giveChainId);
    const value = messageValue(fee, 0n);
    await ensureGas(dst.chainId, value);
    await send(dst.chainId, {
      address: dst.bridgeDestination!,
      abi: bridgeDestinationAbi,
      functionName: "sendEvmUnlock",
      args: [f.orderId, me, 0n],
      value,
    });
  };

  const claim = async (f: OrderFacts, how: "unlock" | "cancel") => {
    if (fromSolana(f)) {
      // SentOrderCancel named a 32-byte Solana key: the escrow refunds its token account (and the creation fixFee).
      const beneficiary = solanaKeyOfHex(f.cancelBeneficiary as Hex) as SolanaAddress;
      const signature = await opts.solana!.book.claimCancel(f.orderId, beneficiary);
      log.info({ orderId: f.orderId, signature, beneficiary }, "Solana cancel claimed");
      return;
    }
    const src = book.chain(f.order.giveChainId)!;
    if (!(await isMessenger(src.chainId))) return;
    await ensureGas(src.chainId);
    const beneficiary = how === "unlock" ? f.unlockBeneficiary! : (f.cancelBeneficiary as Address);
    await send(src.chainId, {
      address: src.bridgeSource!,
      abi: bridgeSourceAbi,
      functionName: how === "unlock" ? "claimUnlock" : "claimCancel",
      args: [f.orderId, beneficiary],
    });
    log.info({ orderId: f.orderId, chainId: src.chainId, beneficiary }, how === "unlock" ? "unlock claimed" : "cancel claimed");
  };

  /** What to do for an order now, from its on-chain statuses (the events only say which orders may need something). */
  const step = async (f: OrderFacts) => {
    const src = book.chain(f.order.giveChainId);
    const dst = book.chain(f.order.takeChainId);
    // Both ends local EVM chains, or from Solana (with its order book) to a local EVM chain.
    const solana = fromSolana(f);
    if ((solana ? !opts.solana : !src?.bridgeSource) || !dst?.bridgeDestination) return;
    const taker = f.taker ?? (mine.has(f.orderId) ? me : undefined);
    const skipped = opts.skip?.(withReceiver(f.order), f.orderId) ?? false;
    const mayAct = f.unlockBeneficiary || f.cancelSent || taker === me || (!taker && !skipped);
    if (!mayAct) return;
    const { give, take } = await book.statuses(f);
    if (give === GIVE.Created && take === TAKE.NotSet && !skipped) await fulfil(f);
    else if (take === TAKE.Fulfilled && taker === me && (!solana || give === GIVE.Created)) await unlock(f);
    else if (give === GIVE.Created && take === TAKE.SentUnlock && f.unlockBeneficiary) await claim(f, "unlock");
    else if (give === GIVE.Created && take === TAKE.SentCancel && f.cancelBeneficiary && size(f.cancelBeneficiary) === (solana ? 32 : 20))
      await claim(f, "cancel");
  };

  /** Approves every token of every destination once up front, so the first order is one transaction quicker. */
  const prepare = async () => {
    await Promise.all(
      opts.chains
        .filter((c) => c.bridgeDestination)
        .map(async (c) => {
          await ensureGas(c.chainId);
          for (const t of c.tokens) {
            const allowance = (await book.client(c.chainId).readContract({
              address: t.address,
              abi: testTokenAbi,
              functionName: "allowance",
              args: [me, c.bridgeDestination!],
            })) as bigint;
            if (allowance < maxUint256 / 2n)
              await send(c.chainId, {
                address: t.address,
                abi: testTokenAbi as Abi,
                functionName: "approve",
                args: [c.bridgeDestination!, maxUint256],
              });
          }
        }),
    ).catch((e) => log.warn({ error: firstLine(e) }, "solver warm-up failed (approvals are made per order instead)"));
  };

  let stopped = false;
  let rounds = 0;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const round = async () => {
    await book.sync();
    const now = Date.now();
    const due = book.all().filter((f) => !f.closed && !busy.has(f.orderId) && (retryAt.get(f.orderId) ?? 0) <= now);
    await Promise.all(
      due.map(async (f) => {
        busy.add(f.orderId);
        try {
          await step(f);
        } catch (e) {
          retryAt.set(f.orderId, Date.now() + RETRY_MS);
          log.warn({ orderId: f.orderId, error: firstLine(e) }, "order step failed; retrying later");
        } finally {
          busy.delete(f.orderId);
        }
      }),
    );
  };
  const loop = () => {
    if (stopped) return;
    current = round()
      .catch((e) => log.warn({ error: firstLine(e) }, "solver round failed"))
      .then(() => {
        rounds++;
        if (!stopped) timer = setTimeout(loop, opts.intervalMs ?? 500);
      });
  };
  current = prepare().then(loop);

  return {
    book,
    get rounds() {
      return rounds;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
      await Promise.all([...queues.values()].map((q) => q.catch(() => {})));
    },
  };
}
