import { getAddress, isAddress, zeroAddress } from "viem";
import { chainInfo } from "../../chains/registry.js";
import { findToken, type ActiveChain } from "../../chains/runtime.js";
import { Invalid } from "../../core/errors.js";

/**
 * What a POS terminal charges in and where it settles: the payout address (the payment's `merchant`), the token
 * preselected on the POS (`defaultChainId` + `defaultToken`) and further tokens the cashier may pick. A token is a
 * `chainId:address` entry naming a token of the chain registry (chains/registry.ts, with the addresses this
 * deployment runs) on a network this service serves; the zero address is the chain's native coin.
 */
export type TerminalSettingsInput = {
  payoutAddress?: string | null;
  /** `chainId:address` of the token preselected on the POS; empty or null for none. */
  defaultToken?: string | null;
  /** `chainId:address` entries the cashier may also charge in. */
  allowedTokens?: readonly string[];
};

/** Settings as stored (terminals columns): addresses of tokens lowercase, the payout checksummed. */
export type TerminalSettings = {
  payoutAddress: string | null;
  defaultChainId: number | null;
  defaultToken: string | null;
  allowedTokens: string[];
};

/** A token the POS offers: `key` is its `chainId:address` entry. */
export type PosToken = { key: string; chainId: number; chainName: string; address: string; symbol: string; decimals: number };

export const tokenKey = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

const ENTRY_RE = /^(\d{1,12}):(0x[0-9a-fA-F]{40})$/;
const MAX_TOKENS = 50;
const shown = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}...` : s);

/**
 * The registry token a `chainId:address` entry names on a served network; throws Invalid with the reason.
 *
 * @example
 * resolveTokenEntry(deps.chains, "777177:0x5FbDB2315678afecb367f032d93F642f64180aa3") // { key, symbol: "USDT", decimals: 6, ... }
 */
export function resolveTokenEntry(chains: readonly ActiveChain[], entry: string): PosToken {
  const m = ENTRY_RE.exec(entry.trim());
  if (!m) throw new Invalid(`A token is written chainId:address (got "${shown(entry.trim())}")`);
  const chainId = Number(m[1]);
  const info = chainInfo(chainId);
  if (!info) throw new Invalid(`Unknown network ${chainId}`);
  const chain = chains.find((c) => c.chainId === chainId && c.factory);
  if (!chain) throw new Invalid(`Network ${info.name} (${chainId}) is not served here`);
  const token = findToken(chain, m[2]!);
  if (!token) throw new Invalid(`${m[2]} is not a token of ${info.name} (${chainId})`);
  return {
    key: tokenKey(chainId, token.address),
    chainId,
    chainName: info.name,
    address: token.address,
    symbol: token.symbol,
    decimals: token.decimals,
  };
}

/**
 * Checks settings from a form or the CLI against the served networks; throws Invalid naming the first problem.
 *
 * @example
 * checkTerminalSettings(deps.chains, { payoutAddress: "0xAbc…", defaultToken: "777177:0x5fbd…", allowedTokens: [] })
 */
export function checkTerminalSettings(chains: readonly ActiveChain[], input: TerminalSettingsInput): TerminalSettings {
  const payout = input.payoutAddress?.trim() || null;
  // The factory refuses the zero address as a payout: a payer's funds would be stranded.
  if (payout && (!isAddress(payout, { strict: false }) || payout.toLowerCase() === zeroAddress))
    throw new Invalid("Payout address must be 0x followed by 40 hex characters");
  const def = input.defaultToken?.trim() ? resolveTokenEntry(chains, input.defaultToken) : null;
  const entries = (input.allowedTokens ?? []).map((e) => e.trim()).filter(Boolean);
  if (entries.length > MAX_TOKENS) throw new Invalid(`A terminal accepts at most ${MAX_TOKENS} tokens`);
  const allowed = [...new Set(entries.map((e) => resolveTokenEntry(chains, e).key))];
  return {
    payoutAddress: payout ? getAddress(payout) : null,
    defaultChainId: def?.chainId ?? null,
    defaultToken: def ? def.address.toLowerCase() : null,
    allowedTokens: allowed,
  };
}

/**
 * The tokens a terminal's cashier may charge in, the default first (it is preselected); entries a changed
 * configuration no longer serves are left out.
 */
export function terminalTokens(
  chains: readonly ActiveChain[],
  t: { defaultChainId: number | null; defaultToken: string | null; allowedTokens: readonly string[] },
): PosToken[] {
  const keys = [...(t.defaultChainId && t.defaultToken ? [tokenKey(t.defaultChainId, t.defaultToken)] : []), ...t.allowedTokens];
  const out: PosToken[] = [];
  for (const key of new Set(keys)) {
    try {
      out.push(resolveTokenEntry(chains, key));
    } catch {
      // A network or token no longer served: not offered.
    }
  }
  return out;
}

/** Every token a terminal could be set to accept (the dashboard's choices): native coin and registry tokens of served networks. */
export function servedTokens(chains: readonly ActiveChain[]): PosToken[] {
  const out: PosToken[] = [];
  for (const c of chains) {
    if (!c.factory) continue;
    for (const address of [...(c.native ? [zeroAddress] : []), ...c.tokens.map((t) => t.address)])
      out.push(resolveTokenEntry(chains, tokenKey(c.chainId, address)));
  }
  return out;
}
