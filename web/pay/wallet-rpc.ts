/**
 * What the payer page asks of a browser wallet (EIP-1193), without a library: switch network, read balances and
 * allowances with eth_call, send transactions and wait for their receipts. Bundled into pay.js (bridge-client.ts);
 * no DOM, and no bigint literals (the bundle targets es2019: `BigInt("…")` calls only).
 */

/** An EIP-1193 provider, as an EIP-6963 announcement hands it over. */
export type Eip1193 = {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>;
  on?(event: string, listener: (...args: unknown[]) => void): void;
  removeListener?(event: string, listener: (...args: unknown[]) => void): void;
};

/** An EIP-1193 error: `code` 4001 is the user's refusal, 4902 an unknown chain (EIP-3085). */
export type WalletError = Error & { code?: number };

export const USER_REJECTED = 4001;
export const UNKNOWN_CHAIN = 4902;

const word = (hexDigits: string) => hexDigits.toLowerCase().padStart(64, "0");
const addressWord = (address: string) => word(address.replace(/^0x/i, ""));
const uintWord = (units: string) => word(BigInt(units).toString(16));

/** `balanceOf(owner)` calldata. */
export const balanceOfData = (owner: string) => `0x70a08231${addressWord(owner)}`;
/** `allowance(owner, spender)` calldata. */
export const allowanceData = (owner: string, spender: string) => `0xdd62ed3e${addressWord(owner)}${addressWord(spender)}`;
/**
 * `approve(spender, units)` calldata.
 * @example approveData("0x5FbD…0aa3", "7423000") // "0x095ea7b3" + 32-byte spender + 32-byte amount
 */
export const approveData = (spender: string, units: string) => `0x095ea7b3${addressWord(spender)}${uintWord(units)}`;

/** A JSON-RPC quantity (`0x…`) for a decimal string of units. */
export const toQuantity = (units: string) => `0x${BigInt(units).toString(16)}`;
/** A decimal string of units from a JSON-RPC quantity or a uint256 return value (`0x` alone: 0). */
export const fromQuantity = (hex: unknown) => (typeof hex === "string" && /^0x[0-9a-fA-F]+$/.test(hex) ? BigInt(hex).toString() : "0");

/** Whether units `a` >= units `b` (decimal strings). */
export const atLeast = (a: string, b: string) => BigInt(a) >= BigInt(b);
/** Units `a` - `b` (decimal strings, may be negative). */
export const minus = (a: string, b: string) => (BigInt(a) - BigInt(b)).toString();
/** Units of `decimals` rescaled to `to` decimals, rounded down. */
export function rescale(units: string, decimals: number, to: number): string {
  const v = BigInt(units);
  const ten = BigInt(10);
  let f = BigInt(1);
  for (let i = 0; i < Math.abs(to - decimals); i++) f *= ten;
  return (to >= decimals ? v * f : v / f).toString();
}

/**
 * Units as a decimal amount, exact, without trailing zeros.
 * @example formatUnits("7423000", 6) // "7.423"
 */
export function formatUnits(units: string, decimals: number): string {
  const neg = units.startsWith("-");
  const digits = (neg ? units.slice(1) : units).replace(/^0+(?=\d)/, "").padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

export const shortAddress = (a: string) => `${a.slice(0, 6)}\u2026${a.slice(-4)}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One wallet and its account, as the page drives it. */
export class WalletRpc {
  constructor(
    readonly provider: Eip1193,
    readonly account: string,
  ) {}

  /**
   * Asks the wallet for its accounts (the wallet's connect prompt) and keeps the first.
   * @example const w = await WalletRpc.connect(detail.provider); w.account // "0xf39F…2266"
   */
  static async connect(provider: Eip1193): Promise<WalletRpc> {
    const accounts = (await provider.request({ method: "eth_requestAccounts" })) as string[];
    if (!accounts || !accounts[0]) throw Object.assign(new Error("The wallet gave no account"), { code: USER_REJECTED });
    return new WalletRpc(provider, accounts[0]);
  }

  async chainId(): Promise<number> {
    return Number(await this.provider.request({ method: "eth_chainId" }));
  }

  /** The wallet on `chainId` (a no-op when it already is), checked with eth_chainId afterwards. */
  async switchTo(chainId: number): Promise<void> {
    if ((await this.chainId()) === chainId) return;
    await this.provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${chainId.toString(16)}` }] });
    if ((await this.chainId()) !== chainId)
      throw Object.assign(new Error(`The wallet did not switch to chain ${chainId}`), { code: UNKNOWN_CHAIN });
  }

  /** The account's balance of a token (native: `native`), in units, on the wallet's current chain. */
  async balance(token: { address: string; native: boolean }): Promise<string> {
    if (token.native) return fromQuantity(await this.provider.request({ method: "eth_getBalance", params: [this.account, "latest"] }));
    return fromQuantity(await this.call(token.address, balanceOfData(this.account)));
  }

  async allowance(token: string, spender: string): Promise<string> {
    return fromQuantity(await this.call(token, allowanceData(this.account, spender)));
  }

  call(to: string, data: string): Promise<unknown> {
    return this.provider.request({ method: "eth_call", params: [{ to, data }, "latest"] });
  }

  /** Sends a transaction from the account (the wallet signs, estimates gas and prices it); its hash. */
  async send(tx: { to: string; data: string; value?: string }): Promise<string> {
    const params: Record<string, string> = { from: this.account, to: tx.to, data: tx.data };
    if (tx.value && tx.value !== "0") params.value = toQuantity(tx.value);
    return (await this.provider.request({ method: "eth_sendTransaction", params: [params] })) as string;
  }

  /** Waits for the transaction's receipt (polling the wallet's node); whether it succeeded. */
  async waitFor(hash: string, timeoutMs = 180_000): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = (await this.provider.request({ method: "eth_getTransactionReceipt", params: [hash] }).catch(() => null)) as {
        status?: string;
      } | null;
      if (r && r.status) return r.status === "0x1";
      if (Date.now() > until) throw new Error(`No receipt for ${hash}`);
      await sleep(1000);
    }
  }
}
