import { createStore, type EIP6963ProviderDetail } from "mipd";
import type { BridgeOrderView, BridgeQuoteView } from "../../modules/bridge/index.js";
import type { PayerStage, PublicPaymentView } from "../../modules/payments/index.js";
import type { BridgeSourceChain, BridgeSourceToken, PayerBridgeState } from "./bridge-types.js";
import { watchSolanaWallets, type SolanaWallet } from "./solana-wallets.js";
import { BRIDGE_STAGES, BRIDGE_TEXT as T, fill, type BridgeStage } from "./texts.js";
import {
  USER_REJECTED,
  WalletRpc,
  approveData,
  atLeast,
  formatUnits,
  minus,
  rescale,
  shortAddress,
  type Eip1193,
  type WalletError,
} from "./wallet-rpc.js";

/**
 * "Pay with another token or network" on the payer page (bundled into pay.js by client.ts): finds the browser's
 * wallets (EIP-6963 through mipd; Solana wallets through the Wallet Standard, solana-wallets.ts), connects one, lists the tokens it holds on the other networks the service knows
 * (balanceOf through the wallet after switching network), quotes the chosen one (GET …/bridge/quote), approves the
 * bridge and sends the order transaction through the wallet, reports it (POST …/bridge/orders), then follows the
 * order (GET …/bridge/orders) and the payment (client.ts's polls) to completion. Stages, in `data-stage` of the
 * section: approving, sending, bridging, delivered, completed.
 */

export type BridgeUi = {
  /** A bridge order is on its way: the page hides the direct-payment address meanwhile (no double payment). */
  inFlight(): boolean;
  /** The payment's stage as client.ts last saw it (called while client.ts renders). */
  paymentChanged(stage: PayerStage): void;
};

type Source = { chain: BridgeSourceChain; token: BridgeSourceToken; balance: string };
type Quote = { view: BridgeQuoteView; source: Source; at: number };
type Followed = { id: string; symbol: string; chain: string; nativeSymbol: string | null; nativeDecimals: number };
/** idle: choosing; running: approving and sending; tracking: the order is placed; done: completed (or given up). */
type Phase = "idle" | "running" | "tracking" | "done";

const ORDERS_POLL_MS = 2_000;
/** DLN asks for the transaction within about 30 s of the quote: older quotes are fetched again before paying. */
const QUOTE_TTL_MS = 30_000;
/** The provider indexes the order transaction a little after it is mined: the report is retried meanwhile. */
const REPORT_TRIES = 30;

const $ = (id: string) => document.getElementById(id)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sameAddr = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the section when the page embeds its state (cross-chain payments on); null otherwise. */
export function startBridge(payment: () => PublicPaymentView, onChange: () => void): BridgeUi | null {
  const stateEl = document.getElementById("bridge-state");
  if (!stateEl) return null;
  const bridge = JSON.parse(stateEl.textContent!) as PayerBridgeState;
  const section = $("bridge");
  const base = `../api/payments/${encodeURIComponent(payment().paymentId)}/bridge`;

  let phase: Phase = "idle";
  let busy = false;
  let wallet: WalletRpc | null = null;
  /** A connected Solana wallet (instead of `wallet`): its balances come from …/bridge/holdings. */
  let sol: { wallet: SolanaWallet; address: string } | null = null;
  let evmWallets: readonly EIP6963ProviderDetail[] = [];
  let solWallets: SolanaWallet[] = [];
  /** Solana as a source chain of the page's lists (DLN's 7565164). */
  const solChain: BridgeSourceChain | null = bridge.solana
    ? {
        chainId: bridge.solana.chainId,
        name: bridge.solana.name,
        nativeSymbol: bridge.solana.nativeSymbol,
        tokens: bridge.solana.tokens.map((t) => ({
          address: t.address,
          symbol: t.symbol,
          decimals: t.decimals,
          native: false,
          stable: t.stable,
        })),
      }
    : null;
  let sources: Source[] = [];
  let quote: Quote | null = null;
  let quoteSeq = 0;
  let followed: Followed | null = null;
  let stage: BridgeStage | null = null;
  let paymentStage: PayerStage = payment().stage;
  const watched = new WeakSet<Eip1193>();
  /** The shown quote can be paid from the wallet's balance. */
  let payable = false;

  // --- what the section shows

  function say(kind: "ok" | "info" | "bad" | null, text = "") {
    const el = $("bridge-msg");
    el.hidden = !kind;
    el.className = `msg${kind ? ` ${kind}` : ""}`;
    el.textContent = text;
  }

  function sayError(e: unknown) {
    const err = e as WalletError;
    if (err && err.code === USER_REJECTED) say("bad", T.rejected);
    else say("bad", fill(T.error, { error: (err && err.message) || String(e) }));
  }

  /** Moves the stage list forward (never back); `failed` marks the current stage as where it stopped. */
  function setStage(next: BridgeStage, failed = false) {
    const at = BRIDGE_STAGES.indexOf(next);
    if (stage && BRIDGE_STAGES.indexOf(stage) > at && !failed) return;
    stage = next;
    section.setAttribute("data-stage", failed ? `${next}-failed` : next);
    $("bridge-stages").hidden = false;
    const items = $("bridge-stages").querySelectorAll("li");
    for (let i = 0; i < items.length; i++) {
      const li = items[i]!;
      const done = i < at || (i === at && next === "completed");
      li.className = done ? "done" : i === at ? (failed ? "failed" : "active") : "";
    }
  }

  /** `notify`: let client.ts render again when inFlight changes (not while it renders). */
  function setPhase(p: Phase, notify = true) {
    const was = inFlight();
    phase = p;
    const choosing = p === "idle";
    $("bridge-intro").hidden = !choosing;
    $("bridge-wallets").hidden = !choosing;
    $("bridge-pick").hidden = !choosing || !sources.length;
    $("bridge-quote").hidden = !choosing || !quote;
    if (p === "tracking") paymentProgress();
    syncVisibility();
    if (notify && was !== inFlight()) onChange();
  }

  /** While an order runs, the payment's own progress: the fill arrived (processing), then completed. */
  function paymentProgress() {
    if (phase !== "tracking") return;
    if (paymentStage === "processing") setStage("delivered");
    if (paymentStage === "completed") {
      setStage("completed");
      say("ok", T.done);
      phase = "done";
    }
  }

  function inFlight() {
    return phase === "running" || phase === "tracking";
  }

  /** Shown while the payment can be paid, and for as long as an order of this page runs or just finished. */
  function syncVisibility() {
    section.hidden = !(phase !== "idle" || paymentStage === "awaiting_payment");
  }

  function setControls(enabled: boolean) {
    ($("bridge-pay") as HTMLButtonElement).disabled = !(enabled && payable);
    ($("bridge-source") as HTMLSelectElement).disabled = !enabled;
    const buttons = $("bridge-wallets").querySelectorAll("button");
    for (let i = 0; i < buttons.length; i++) buttons[i]!.disabled = !enabled;
  }

  // --- wallets (EIP-6963)

  function renderWallets() {
    const details = evmWallets;
    const box = $("bridge-wallets");
    box.textContent = "";
    for (const w of solWallets) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "btn wallet";
      b.setAttribute("data-testid", "bridge-wallet");
      b.setAttribute("data-kind", "solana");
      b.setAttribute("data-name", w.name);
      if (/^data:image\//.test(w.icon)) {
        const img = document.createElement("img");
        img.src = w.icon;
        img.alt = "";
        b.appendChild(img);
      }
      b.appendChild(document.createTextNode(fill(T.solanaWallet, { wallet: w.name })));
      b.addEventListener("click", () => void connectSolana(w));
      box.appendChild(b);
    }
    for (const d of details) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "btn wallet";
      b.setAttribute("data-testid", "bridge-wallet");
      b.setAttribute("data-rdns", d.info.rdns);
      // EIP-6963 icons are data: URIs (the page's CSP allows no other image source anyway).
      if (/^data:image\//.test(d.info.icon)) {
        const img = document.createElement("img");
        img.src = d.info.icon;
        img.alt = "";
        b.appendChild(img);
      }
      b.appendChild(document.createTextNode(d.info.name));
      b.addEventListener("click", () => void connect(d));
      box.appendChild(b);
    }
    if (!details.length && !solWallets.length) {
      const p = document.createElement("p");
      p.className = "sub";
      p.textContent = T.noWallet;
      box.appendChild(p);
    }
  }

  async function connect(d: EIP6963ProviderDetail) {
    if (busy) return;
    busy = true;
    setControls(false);
    say("info", fill(T.connecting, { wallet: d.info.name }));
    try {
      const provider = d.provider as unknown as Eip1193;
      wallet = await WalletRpc.connect(provider);
      sol = null;
      // Another account chosen in the wallet while the payer is still choosing: connect again (balances differ).
      if (provider.on && !watched.has(provider)) {
        watched.add(provider);
        provider.on("accountsChanged", () => {
          if (wallet && wallet.provider === provider && phase === "idle") void connect(d);
        });
      }
      const acct = $("bridge-account");
      acct.textContent = fill(T.connected, { account: shortAddress(wallet.account), wallet: d.info.name });
      acct.hidden = false;
      await scan(wallet);
    } catch (e) {
      sayError(e);
    } finally {
      busy = false;
      setControls(true);
    }
  }

  async function connectSolana(w: SolanaWallet) {
    if (busy) return;
    busy = true;
    setControls(false);
    say("info", fill(T.connecting, { wallet: w.name }));
    try {
      const address = await w.connect();
      sol = { wallet: w, address };
      wallet = null;
      const acct = $("bridge-account");
      acct.textContent = fill(T.connected, { account: shortAddress(address), wallet: w.name });
      acct.hidden = false;
      await scanSolana(address);
    } catch (e) {
      sayError(e);
    } finally {
      busy = false;
      setControls(true);
    }
  }

  /** What a Solana wallet holds of the offered tokens, as the service reads it (the wallet has no read API). */
  async function scanSolana(owner: string) {
    sources = [];
    quote = null;
    say("info", fill(T.scanning, { chain: solChain!.name }));
    const q = new URLSearchParams({ srcChainId: String(solChain!.chainId), owner });
    const held = await api<{ tokens: { mint: string; units: string }[] }>(`/holdings?${q.toString()}`);
    for (const token of solChain!.tokens) {
      const h = held.tokens.filter((t) => t.mint === token.address)[0];
      if (h && h.units !== "0") sources.push({ chain: solChain!, token, balance: h.units });
    }
    renderSources();
    if (sources.length) say(null);
    else say("info", T.noBalance);
    setPhase("idle");
  }

  /** The tokens the wallet holds on each other network (the wallet switches network to read them). */
  async function scan(w: WalletRpc) {
    sources = [];
    quote = null;
    for (const chain of bridge.chains) {
      say("info", fill(T.scanning, { chain: chain.name }));
      try {
        await w.switchTo(chain.chainId);
      } catch (e) {
        if ((e as WalletError).code === USER_REJECTED) throw e;
        continue; // a network the wallet does not have: nothing to pay from there
      }
      for (const token of chain.tokens) {
        const balance = await w.balance(token).catch(() => "0");
        if (balance !== "0") sources.push({ chain, token, balance });
      }
    }
    renderSources();
    if (sources.length) say(null);
    else say("info", T.noBalance);
    setPhase("idle");
  }

  // A base58 mint is case-sensitive; an EVM address is not.
  const sourceKey = (s: Source) =>
    `${s.chain.chainId}:${s.token.address.slice(0, 2) === "0x" ? s.token.address.toLowerCase() : s.token.address}`;

  function renderSources() {
    const sel = $("bridge-source") as HTMLSelectElement;
    sel.textContent = "";
    const first = document.createElement("option");
    first.value = "";
    first.textContent = T.choose;
    sel.appendChild(first);
    for (const s of sources) {
      const o = document.createElement("option");
      o.value = sourceKey(s);
      o.textContent = fill(T.option, { symbol: s.token.symbol, chain: s.chain.name, balance: formatUnits(s.balance, s.token.decimals) });
      sel.appendChild(o);
    }
  }

  // --- the quote

  async function api<R>(path: string, init?: RequestInit): Promise<R> {
    const res = await fetch(`${base}${path}`, {
      cache: "no-store",
      ...init,
      headers: { accept: "application/json", ...(init && init.headers) },
    });
    const body = (await res.json().catch(() => null)) as (R & { error?: string }) | null;
    if (!res.ok || !body) throw new ApiError(res.status, (body && body.error) || `HTTP ${res.status}`);
    return body;
  }

  async function fetchQuote(source: Source) {
    const seq = ++quoteSeq;
    quote = null;
    $("bridge-quote").hidden = true;
    say("info", T.quoting);
    const payer = sol ? sol.address : wallet!.account;
    const q = new URLSearchParams({ srcChainId: String(source.chain.chainId), srcToken: source.token.address, payer });
    const view = await api<BridgeQuoteView>(`/quote?${q.toString()}`);
    if (seq !== quoteSeq) return; // another choice since
    // A quote the service had asked for shortly before (its cache) is that much older already.
    quote = { view, source, at: Date.now() - view.quoteAgeMs };
    renderQuote(quote);
  }

  function row(box: HTMLElement, testid: string, label: string, value: string) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.setAttribute("data-testid", testid);
    dd.textContent = value;
    box.appendChild(dt);
    box.appendChild(dd);
  }

  function renderQuote(q: Quote) {
    const v = q.view;
    const s = q.source;
    const p = payment();
    const box = $("bridge-quote-rows");
    box.textContent = "";
    row(box, "quote-in", T.youPay, `${v.srcToken.amount} ${v.srcToken.symbol} on ${s.chain.name}`);
    row(box, "quote-out", T.merchantGets, `${v.dstToken.amount} ${v.dstToken.symbol} on ${p.chainName}`);
    const opex = v.srcToken.operatingExpenseUnits ? formatUnits(v.srcToken.operatingExpenseUnits, v.srcToken.decimals) : null;
    if (s.token.stable && bridge.dstStable) {
      // Two stablecoins: what the payer gives above what is delivered is the bridge's whole cost.
      const fees = formatUnits(
        minus(v.srcToken.units, rescale(v.dstToken.units, v.dstToken.decimals, v.srcToken.decimals)),
        v.srcToken.decimals,
      );
      row(box, "quote-fees", T.fees, fill(T.feesIncluded, { fees, opex: opex || "0", symbol: v.srcToken.symbol }));
    } else if (opex) row(box, "quote-fees", T.fees, fill(T.networkCost, { opex, symbol: v.srcToken.symbol }));
    const native = s.chain.tokens.filter((t) => t.native)[0];
    if (v.fixFee !== "0")
      row(
        box,
        "quote-protocol-fee",
        T.protocolFee,
        `${formatUnits(v.fixFee, s.chain === solChain && bridge.solana ? bridge.solana.nativeDecimals : native ? native.decimals : 18)} ${s.chain.nativeSymbol || ""}`.trim(),
      );
    // DLN swaps a non-reserve input (MATIC, USDT, …) to USDC or ETH first: a cancel refunds that, not the input.
    if (v.preSwap) row(box, "quote-refund", T.refundRow, fill(T.refundValue, { amount: v.refund.amount, symbol: v.refund.symbol }));
    if (v.estimatedFulfillmentSeconds !== null) row(box, "quote-eta", T.eta, fill(T.etaValue, { seconds: v.estimatedFulfillmentSeconds }));
    const pay = $("bridge-pay") as HTMLButtonElement;
    // Nothing to approve for the native coin, nor on Solana (the wallet signs one transaction).
    pay.textContent = s.token.native || s.chain === solChain ? T.payNative : T.pay;
    $("bridge-quote").hidden = false;
    const need = s.token.native && v.tx && v.tx.kind === "evm" ? v.tx.value : v.srcToken.units;
    payable = atLeast(s.balance, need);
    if (!payable) {
      pay.disabled = true;
      say("bad", fill(T.short, { symbol: s.token.symbol, balance: formatUnits(s.balance, s.token.decimals) }));
    } else {
      pay.disabled = false;
      say(null);
    }
  }

  // --- approve, send, report

  async function pay() {
    if (busy || !quote || (!wallet && !sol)) return;
    busy = true;
    setControls(false);
    try {
      if (Date.now() - quote.at > QUOTE_TTL_MS) {
        await fetchQuote(quote.source);
        if (quote) say("info", T.requoted);
        return;
      }
      if (sol) await runSolana(sol.wallet, quote);
      else await run(wallet!, quote);
    } catch (e) {
      sayError(e);
    } finally {
      busy = false;
      setControls(true);
    }
  }

  async function run(w: WalletRpc, q: Quote) {
    const v = q.view;
    const s = q.source;
    const tx = v.tx;
    if (!tx || tx.kind !== "evm" || !v.orderId) throw new Error("the quote has no transaction");
    setPhase("running");
    const approving = $("bridge-stages").querySelector('li[data-stage="approving"]') as HTMLElement | null;
    if (approving) approving.hidden = false;
    stage = null; // a new order after a cancelled or refused one starts the list again
    let step: BridgeStage = "approving";
    try {
      say(null);
      setStage("approving");
      try {
        await w.switchTo(s.chain.chainId);
      } catch (e) {
        if ((e as WalletError).code === USER_REJECTED) throw e;
        throw new Error(fill(T.switchFailed, { chain: s.chain.name }));
      }
      if (!s.token.native) {
        const spender = tx.allowanceTarget || tx.to;
        const need = tx.allowanceValue || v.srcToken.units;
        if (!atLeast(await w.allowance(s.token.address, spender), need)) {
          const hash = await w.send({ to: s.token.address, data: approveData(spender, need) });
          if (!(await w.waitFor(hash))) throw new Error(fill(T.txFailed, { chain: s.chain.name }));
        }
      }
      step = "sending";
      setStage("sending");
      const hash = await w.send({ to: tx.to, data: tx.data, value: tx.value });
      if (!(await w.waitFor(hash))) throw new Error(fill(T.txFailed, { chain: s.chain.name }));
      followed = { id: v.orderId, symbol: s.token.symbol, chain: s.chain.name, nativeSymbol: s.chain.nativeSymbol, nativeDecimals: 18 };
      setStage("bridging");
      setPhase("tracking");
      void report(hash).then(follow);
    } catch (e) {
      setStage(step, true);
      setPhase("idle");
      throw e;
    }
  }

  /** Solana: the wallet signs DLN's transaction (its blockhash refreshed by the service) and sends it; no approval. */
  async function runSolana(w: SolanaWallet, q: Quote) {
    const v = q.view;
    const s = q.source;
    const tx = v.tx;
    if (!tx || tx.kind !== "solana" || !v.orderId) throw new Error("the quote has no transaction");
    setPhase("running");
    stage = null;
    // No approval on Solana: the stage is not shown.
    const approving = $("bridge-stages").querySelector('li[data-stage="approving"]') as HTMLElement | null;
    if (approving) approving.hidden = true;
    try {
      say(null);
      setStage("sending");
      const signature = await w.signAndSend(tx.data);
      followed = { id: v.orderId, symbol: s.token.symbol, chain: s.chain.name, nativeSymbol: s.chain.nativeSymbol, nativeDecimals: 9 };
      setStage("bridging");
      setPhase("tracking");
      void report(signature).then(follow);
    } catch (e) {
      setStage("sending", true);
      setPhase("idle");
      throw e;
    }
  }

  /** POST …/bridge/orders until the provider has indexed the transaction (409 meanwhile). */
  async function report(txHash: string) {
    for (let i = 0; i < REPORT_TRIES; i++) {
      try {
        await api("/orders", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ txHash }) });
        return;
      } catch (e) {
        if (!(e instanceof ApiError) || (e.status !== 409 && e.status !== 429 && e.status < 500)) {
          sayError(e);
          return;
        }
        await sleep(ORDERS_POLL_MS);
      }
    }
    say("info", T.reportFailed);
  }

  // --- following the order

  async function follow() {
    while (phase === "tracking" && followed) {
      try {
        const { orders } = await api<{ orders: BridgeOrderView[] }>("/orders");
        const o = orders.find((x) => sameAddr(x.orderId, followed!.id));
        if (o) orderChanged(o);
      } catch {
        // a missed poll: the next one catches up
      }
      if (phase !== "tracking") return;
      await sleep(ORDERS_POLL_MS);
    }
  }

  function orderChanged(o: BridgeOrderView) {
    const f = followed!;
    switch (o.status) {
      case "created":
        setStage("bridging");
        break;
      case "fulfilled":
      case "claimed_unlock":
        setStage("delivered");
        break;
      case "cancel_sent":
        setStage("bridging", true);
        say("bad", fill(T.cancelling, { refund: refundText(o, f), chain: f.chain }));
        break;
      case "cancelled":
        setStage("bridging", true);
        say("bad", fill(T.cancelled, { refund: refundText(o, f), chain: f.chain }));
        followed = null;
        quote = null;
        // The payer may choose again (the refunded balance is back in the wallet).
        ($("bridge-source") as HTMLSelectElement).value = "";
        setPhase("idle");
        break;
      case "failed":
        setStage("bridging", true);
        say("bad", fill(T.failed, { order: o.orderId }));
        setPhase("done");
        break;
    }
  }

  /**
   * What a cancel gives back, as recorded from the quote: the exact amount in the token the order escrows (for a
   * pre-swapped input the reserve asset, usually USDC, not what was sent), and the creation fee in the native coin.
   */
  function refundText(o: BridgeOrderView, f: Followed): string {
    const r = o.refund;
    if (!r) return fill(T.yourTokens, { symbol: f.symbol });
    if (r.feeUnits === "0" || !f.nativeSymbol) return fill(T.refundAmount, { amount: r.amount, symbol: r.symbol });
    return fill(T.refundWithFee, {
      amount: r.amount,
      symbol: r.symbol,
      fee: formatUnits(r.feeUnits, f.nativeDecimals),
      native: f.nativeSymbol,
    });
  }

  /** A page opened again while an order of the payment runs: follow it. */
  async function resume() {
    const { orders } = await api<{ orders: BridgeOrderView[] }>("/orders");
    const o = orders.find((x) => x.status !== "cancelled" && x.status !== "failed");
    if (!o || phase !== "idle") return;
    const chain = bridge.chains.concat(solChain ? [solChain] : []).find((c) => c.chainId === o.srcChainId);
    const token = chain && chain.tokens.find((t) => sameAddr(t.address, o.srcToken));
    followed = {
      id: o.orderId,
      symbol: token ? token.symbol : "tokens",
      chain: chain ? chain.name : `chain ${o.srcChainId}`,
      nativeSymbol: chain ? chain.nativeSymbol : null,
      nativeDecimals: chain === solChain && bridge.solana ? bridge.solana.nativeDecimals : 18,
    };
    setStage("bridging");
    setPhase("tracking");
    orderChanged(o);
    void follow();
  }

  // --- start

  ($("bridge-source") as HTMLSelectElement).addEventListener("change", (e) => {
    const key = (e.target as HTMLSelectElement).value;
    const source = sources.find((s) => sourceKey(s) === key);
    if (!source) {
      quote = null;
      $("bridge-quote").hidden = true;
      return;
    }
    fetchQuote(source).catch((err) => {
      quote = null;
      sayError(err);
    });
  });
  $("bridge-pay").addEventListener("click", () => void pay());

  const store = createStore();
  store.subscribe(
    (details) => {
      evmWallets = details;
      renderWallets();
    },
    { emitImmediately: true },
  );
  if (bridge.solana)
    watchSolanaWallets(bridge.solana.walletChain, (ws) => {
      solWallets = ws;
      renderWallets();
    });
  setPhase("idle");
  resume().catch(() => {});

  return {
    inFlight,
    paymentChanged(ps) {
      paymentStage = ps;
      paymentProgress();
      // Closed to new orders (paid otherwise, expired, cancelled): hidden unless an order of this page is shown.
      syncVisibility();
    },
  };
}
