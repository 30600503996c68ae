import { zeroAddress } from "viem";
import type { AppDeps } from "../../core/deps.js";
import { firstLine } from "../../core/log.js";
import { lookupTokenPrice, type PriceSource } from "./resolve.js";

/** What a chain's native coin is priced at now, for health and metrics: the price every gas fee is converted with. */
export type NativePriceState = {
  chainId: number;
  symbol: string;
  status: "ok" | "unavailable" | "none";
  source: PriceSource | null;
  priceUsd: string | null;
  /** When the price was set (a feed's or the PriceOracle's updatedAt, the index's read); null: unknown. */
  updatedAt: Date | null;
  error: string | null;
};

/**
 * Each served chain's native coin price as a quote would get it now (the same sources, checks and cache: a stale feed
 * or a sequencer down reads `unavailable`, as creation would answer 503).
 *
 * @example
 * (await nativePriceStates(deps)).find((s) => s.chainId === 137) // { symbol: "MATIC", status: "ok", source: "trusted_oracle", ... }
 */
export async function nativePriceStates(deps: Pick<AppDeps, "config" | "chains" | "clients">): Promise<NativePriceState[]> {
  const chains = deps.chains.filter((c) => c.native);
  return Promise.all(
    chains.map(async (chain): Promise<NativePriceState> => {
      const native = chain.native!;
      const base = { chainId: chain.chainId, symbol: native.symbol, source: null, priceUsd: null, updatedAt: null, error: null };
      try {
        const r = await lookupTokenPrice({
          deps,
          chainId: chain.chainId,
          token: { address: zeroAddress, symbol: native.symbol, kind: "native", oracleSymbol: native.oracleSymbol },
          cached: true,
        });
        if (r.status === "ok")
          return { ...base, status: "ok", source: r.price.source, priceUsd: r.price.priceUsd, updatedAt: r.price.updatedAt ?? null };
        if (r.status === "unavailable") return { ...base, status: "unavailable", error: r.errors.join("; ") };
        return { ...base, status: "none" };
      } catch (e) {
        return { ...base, status: "unavailable", error: firstLine(e) };
      }
    }),
  );
}
