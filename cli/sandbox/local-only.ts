import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { readStackInfo } from "../../local/stack-info.js";

// What `trigger` checks before it creates anything: it spends dev funds (anvil_setBalance, test-token mints) and must
// never run against a real chain or a production API. Every condition must hold, each checked on its own:
//   - the API (`--api-url`) and the chain's RPC are on this machine or a private network (names resolved);
//   - the chain id is a development chain's: Anvil's default, the registry's service chains, the local stack's;
//   - the RPC answers `web3_clientVersion` with `anvil/…` and `eth_chainId` with that chain id.

/** Anvil's default chain id and the registry's local service chains. */
const DEV_CHAIN_IDS = [31337, 777177, 777178];

/** The development chain ids: DEV_CHAIN_IDS, LOCAL_CHAINS (what local/stack.ts runs on Anvil) and the running stack's. */
export function devChainIds(env: NodeJS.ProcessEnv = process.env): Set<number> {
  const ids = new Set(DEV_CHAIN_IDS);
  for (const s of (env.LOCAL_CHAINS ?? "").split(",")) if (/^\d+$/.test(s.trim())) ids.add(Number(s.trim()));
  for (const c of readStackInfo()?.chains ?? []) ids.add(c.chainId);
  return ids;
}

/** Loopback, RFC 1918 private and IPv6 unique-local addresses (IPv4-mapped IPv6 judged as its IPv4). */
const LOCAL_RANGES = new Set(["loopback", "private", "uniqueLocal"]);

export type LookupAll = (hostname: string) => Promise<{ address: string }[]>;
const systemLookup: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Does the URL's host reach this machine or a private network only? A name must resolve, and every address be local. */
export async function isLocalUrl(url: string, lookup: LookupAll = systemLookup): Promise<boolean> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host)).map((a) => a.address);
    } catch {
      return false;
    }
  }
  return addresses.length > 0 && addresses.every(isLocalAddress);
}

function isLocalAddress(ip: string): boolean {
  try {
    return LOCAL_RANGES.has(ipaddr.process(ip).range());
  } catch {
    return false; // not an address ipaddr reads (a zone id…): not provably local
  }
}
