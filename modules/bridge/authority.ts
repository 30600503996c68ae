import type { Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Config } from "../../core/config.js";

/**
 * The service's order authority on destination chains (`dstChainOrderAuthorityAddress` of every order): the only
 * account that may cancel an order the solvers leave unfilled, refunding the payer on the source. BRIDGE_AUTHORITY_PRIVATE_KEY;
 * outside production the settler's key stands in (config refuses production without it). Null: no key at all.
 * @example bridgeAuthority(deps.config)?.address // "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
 */
export function bridgeAuthority(
  config: Pick<Config, "BRIDGE_AUTHORITY_PRIVATE_KEY" | "SETTLER_PRIVATE_KEY" | "NODE_ENV">,
): PrivateKeyAccount | null {
  const key = config.BRIDGE_AUTHORITY_PRIVATE_KEY ?? (config.NODE_ENV === "production" ? undefined : config.SETTLER_PRIVATE_KEY);
  return key ? privateKeyToAccount(key as Hex) : null;
}
