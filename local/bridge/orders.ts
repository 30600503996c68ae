import { parseEventLogs, size, TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient } from "viem";
import { publicClients } from "../../chains/clients.js";
import type { ActiveChain } from "../../chains/runtime.js";
import {
  bridgeDestinationAbi,
  bridgeSourceAbi,
  bytesToEvmAddress,
  DLN_SOLANA_CHAIN_ID,
  dlnOrderId,
  GIVE,
  TAKE,
  type DlnOrder,
} from "./abi.js";
import type { SolanaOrderBook } from "./solana-orders.js";

/** A local chain with the bridge contracts (either may be missing: then it is neither source nor destination). */
export type BridgeChain = ActiveChain & { bridgeSource?: Address; bridgeDestination?: Address };

/** DLN's order states (`GET /v1.0/dln/order/{id}/status`) as far as the local contracts can tell them apart. */
export type DlnStatus = "None" | "Created" | "Fulfilled" | "SentUnlock" | "ClaimedUnlock" | "SentOrderCancel" | "ClaimedOrderCancel";

/** What the book knows of one order: DLN's struct, and the facts the contracts' events told. */
export type OrderFacts = {
  orderId: Hex;
  order: DlnOrder;
  /** The source transaction that created it (absent while it is only quoted): a hash, or a Solana signature (base58). */
  createdTx?: Hex | string;
  /** Who may unlock it, the taker (FulfilledOrder's unlockAuthority). */
  taker?: Address;
  /** Whom the taker asked the source to pay (SentOrderUnlock), not yet claimed unless `closed`. */
  unlockBeneficiary?: Address;
  /** The authority cancelled it on the destination (SentOrderCancel). */
  cancelSent?: boolean;
  /**
   * Whom that cancel refunds on the source (SentOrderCancel's cancelBeneficiary): an EVM address, or the 32 bytes of a
   * Solana key (a Solana-source order).
   */
  cancelBeneficiary?: Address | Hex;
  /** The source paid the escrow out: the order is final. */
  closed?: "ClaimedUnlock" | "ClaimedOrderCancel";
};

/**
 * The DLN status of an order from the two contracts' statuses: the source's giveStatus and the destination's
 * takeStatus. A claim on the source is final; otherwise the destination is ahead of the source.
 *
 *   dlnStatusOf(GIVE.Created, TAKE.Fulfilled) // "Fulfilled"
 */
export function dlnStatusOf(give: number, take: number): DlnStatus {
  if (give === GIVE.ClaimedCancel) return "ClaimedOrderCancel";
  if (give === GIVE.ClaimedUnlock) return "ClaimedUnlock";
  if (take === TAKE.SentCancel) return "SentOrderCancel";
  if (take === TAKE.SentUnlock) return "SentUnlock";
  if (take === TAKE.Fulfilled) return "Fulfilled";
  if (give === GIVE.Created) return "Created";
  return "None";
}

/** Blocks per eth_getLogs request when catching up. */
const LOG_CHUNK = 5_000n;

/**
 * Every bridge order of the local chains, rebuilt from the contracts' logs (CreatedOrder, FulfilledOrder,
 * SentOrderUnlock, SentOrderCancel, ClaimedUnlock, ClaimedOrderCancel) from each chain's start block, plus the
 * orders quoted but not (yet) created. Nothing is stored: a restart reads the logs again. With a SolanaOrderBook,
 * orders from Solana (7565164) too: their give side (Created, claims) is that book's, their take side the destination's.
 *
 *   const book = new OrderBook(chains);
 *   await book.sync();
 *   await book.status(orderId); // "Created" | … | undefined when the id is unknown
 */
export class OrderBook {
  readonly clients: Map<number, PublicClient>;
  private readonly facts = new Map<Hex, OrderFacts>();
  /** Destination facts of orders whose CreatedOrder this book has not read yet (the chains sync side by side). */
  private readonly early = new Map<Hex, Partial<OrderFacts>>();
  private readonly cursors = new Map<number, bigint>();
  private running: Promise<void> = Promise.resolve();
  private queued?: Promise<void>;

  constructor(
    readonly chains: BridgeChain[],
    clients?: Map<number, PublicClient>,
    /** The give side of Solana-source orders (solana-orders.ts), when the local Solana runs. */
    readonly solana?: SolanaOrderBook,
  ) {
    this.clients = clients ?? publicClients(chains);
  }

  chain(chainId: number | bigint): BridgeChain | undefined {
    return this.chains.find((c) => BigInt(c.chainId) === BigInt(chainId));
  }

  client(chainId: number | bigint): PublicClient {
    const c = this.clients.get(Number(chainId));
    if (!c) throw new Error(`no client for chain ${chainId}`);
    return c;
  }

  get(orderId: string): OrderFacts | undefined {
    return this.facts.get(orderId.toLowerCase() as Hex);
  }

  all(): OrderFacts[] {
    return [...this.facts.values()];
  }

  /** Keeps a quoted order (its id is what create-tx returned) so status and cancel-tx know it before it is mined. */
  remember(order: DlnOrder): OrderFacts {
    return this.entry(dlnOrderId(order), order);
  }

  /**
   * Reads the logs of every chain since the last sync. Concurrent callers share one pending round, and a call
   * made while a round runs gets the next one (so it sees blocks mined before it called).
   */
  sync(): Promise<void> {
    if (this.queued) return this.queued;
    const round = this.running
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.syncOnce();
      });
    this.queued = round;
    this.running = round;
    return round;
  }

  /** The order's DLN status read from the contracts; undefined when the book does not know the id. */
  async status(orderId: string): Promise<DlnStatus | undefined> {
    const f = this.get(orderId);
    if (!f) return undefined;
    const { give, take } = await this.statuses(f);
    return dlnStatusOf(give, take);
  }

  /**
   * The order's status on the source (giveOrders) and on the destination (takeOrders), DLN's numbers (GIVE, TAKE);
   * 0 where the chain has no bridge contract.
   */
  async statuses(f: OrderFacts): Promise<{ give: number; take: number }> {
    const src = this.chain(f.order.giveChainId);
    const dst = this.chain(f.order.takeChainId);
    const [give, take] = await Promise.all([
      f.order.giveChainId === BigInt(DLN_SOLANA_CHAIN_ID)
        ? (this.solana?.giveStatus(f.orderId) ?? GIVE.NotSet)
        : src?.bridgeSource
          ? this.client(src.chainId)
              .readContract({ address: src.bridgeSource, abi: bridgeSourceAbi, functionName: "giveOrders", args: [f.orderId] })
              .then((s) => s[0])
          : 0,
      dst?.bridgeDestination
        ? this.client(dst.chainId)
            .readContract({ address: dst.bridgeDestination, abi: bridgeDestinationAbi, functionName: "takeOrders", args: [f.orderId] })
            .then((s) => s[0])
        : 0,
    ]);
    return { give, take };
  }

  /** Ids of the orders a transaction created, on whichever local chain it was mined ([] when none). */
  async orderIdsOfTx(hash: Hex): Promise<Hex[]> {
    const found = await Promise.all(
      this.chains
        .filter((c) => c.bridgeSource)
        .map(async (c) => {
          const receipt = await this.client(c.chainId)
            .getTransactionReceipt({ hash })
            .catch((e) => {
              if (e instanceof TransactionReceiptNotFoundError) return null;
              throw e;
            });
          if (!receipt) return [];
          const source = c.bridgeSource!.toLowerCase();
          return parseEventLogs({ abi: bridgeSourceAbi, eventName: "CreatedOrder", logs: receipt.logs })
            .filter((l) => l.address.toLowerCase() === source)
            .map((l) => {
              this.entry(l.args.orderId, l.args.order).createdTx = l.transactionHash;
              return l.args.orderId.toLowerCase() as Hex;
            });
        }),
    );
    return found.flat();
  }

  private entry(orderId: Hex, order: DlnOrder): OrderFacts {
    const id = orderId.toLowerCase() as Hex;
    let f = this.facts.get(id);
    if (!f) {
      this.facts.set(id, (f = { ...this.early.get(id), orderId: id, order: normalize(order) }));
      this.early.delete(id);
    }
    return f;
  }

  private async syncOnce(): Promise<void> {
    // Solana orders first: a destination event of one (SentOrderCancel) then finds its entry.
    for (const s of this.solana?.created() ?? []) {
      const f = this.entry(s.orderId, s.order);
      f.createdTx ??= s.createdTx;
      if (s.give === GIVE.ClaimedUnlock) f.closed = "ClaimedUnlock";
      if (s.give === GIVE.ClaimedCancel) f.closed = "ClaimedOrderCancel";
    }
    await Promise.all(this.chains.map((c) => this.syncChain(c)));
  }

  private async syncChain(c: BridgeChain): Promise<void> {
    const address = [c.bridgeSource, c.bridgeDestination].filter((a): a is Address => !!a);
    if (!address.length) return;
    const client = this.client(c.chainId);
    const latest = await client.getBlockNumber();
    let from = (this.cursors.get(c.chainId) ?? BigInt(c.startBlock) - 1n) + 1n;
    while (from <= latest) {
      const to = from + LOG_CHUNK - 1n < latest ? from + LOG_CHUNK - 1n : latest;
      const logs = await client.getLogs({ address, fromBlock: from, toBlock: to });
      this.apply(c, logs);
      this.cursors.set(c.chainId, to);
      from = to + 1n;
    }
  }

  private apply(c: BridgeChain, logs: Parameters<typeof parseEventLogs>[0]["logs"]) {
    const src = c.bridgeSource?.toLowerCase();
    const dst = c.bridgeDestination?.toLowerCase();
    for (const l of parseEventLogs({
      abi: bridgeSourceAbi,
      logs,
      eventName: ["CreatedOrder", "ClaimedUnlock", "ClaimedOrderCancel"],
    }).filter((l) => l.address.toLowerCase() === src)) {
      if (l.eventName === "CreatedOrder") this.entry(l.args.orderId, l.args.order).createdTx = l.transactionHash;
      else {
        // Claims follow CreatedOrder on the same chain, so the order is known.
        const f = this.get(l.args.orderId);
        if (f) f.closed = l.eventName;
      }
    }
    for (const l of parseEventLogs({
      abi: bridgeDestinationAbi,
      logs,
      eventName: ["FulfilledOrder", "SentOrderUnlock", "SentOrderCancel"],
    }).filter((l) => l.address.toLowerCase() === dst)) {
      if (l.eventName === "FulfilledOrder") {
        this.entry(l.args.orderId, l.args.order).taker = l.args.unlockAuthority;
        continue;
      }
      const id = l.args.orderId.toLowerCase() as Hex;
      const f: Partial<OrderFacts> = this.facts.get(id) ?? this.early.get(id) ?? {};
      if (l.eventName === "SentOrderUnlock") f.unlockBeneficiary = bytesToEvmAddress(l.args.beneficiary);
      else {
        f.cancelSent = true;
        const b = l.args.cancelBeneficiary;
        f.cancelBeneficiary = size(b) === 20 ? bytesToEvmAddress(b) : (b.toLowerCase() as Hex);
      }
      if (!this.facts.has(id)) this.early.set(id, f);
    }
  }
}

/** The order with its bytes fields in lower case (ids and comparisons do not depend on how a log or a quote spelled them). */
function normalize(o: DlnOrder): DlnOrder {
  const low = (h: Hex) => h.toLowerCase() as Hex;
  return {
    ...o,
    makerSrc: low(o.makerSrc),
    giveTokenAddress: low(o.giveTokenAddress),
    takeTokenAddress: low(o.takeTokenAddress),
    receiverDst: low(o.receiverDst),
    givePatchAuthoritySrc: low(o.givePatchAuthoritySrc),
    orderAuthorityAddressDst: low(o.orderAuthorityAddressDst),
    allowedTakerDst: low(o.allowedTakerDst),
    allowedCancelBeneficiarySrc: low(o.allowedCancelBeneficiarySrc),
    externalCall: low(o.externalCall),
  };
}
