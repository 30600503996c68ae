import dns from "node:dns";
import net from "node:net";

// Webhook targets are outside the merchant's trust boundary: unless the operator sets
// WEBHOOK_ALLOW_PRIVATE=true (development and tests), a URL must not reach loopback, private,
// link-local or otherwise non-public addresses, checked when the URL is saved AND on every connection
// (the resolved address is checked inside the socket's DNS lookup, so DNS rebinding cannot slip through).

const blocked = new net.BlockList();
for (const [net4, bits] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata endpoints)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  blocked.addSubnet(net4, bits, "ipv4");
for (const [net6, bits] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64 (could reach any IPv4, private included)
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds IPv4)
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const)
  blocked.addSubnet(net6, bits, "ipv6");

/** Is this IP literal outside the public internet? (IPv4-mapped IPv6 is checked as its IPv4.) Non-IPs answer true. */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, "");
  const family = net.isIP(bare);
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family === 6) return blocked.check(bare, "ipv6");
  return true;
}

export const URL_MAX_LENGTH = 2000;

/** Syntax of a webhook URL: absolute, HTTPS only, no credentials, at most 2000 characters. */
export function parseWebhookUrl(input: unknown): { ok: true; url: URL } | { ok: false; error: string } {
  if (typeof input !== "string" || input.trim() === "") return { ok: false, error: "url is required" };
  if (input.length > URL_MAX_LENGTH) return { ok: false, error: `url must be at most ${URL_MAX_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, error: "url is not a valid URL" };
  }
  if (url.protocol === "http:") return { ok: false, error: "Webhook URL must use HTTPS (http:// is not accepted)" };
  if (url.protocol !== "https:") return { ok: false, error: "Webhook URL must use HTTPS" };
  if (url.username || url.password) return { ok: false, error: "Webhook URL must not contain credentials" };
  if (!url.hostname) return { ok: false, error: "url is not a valid URL" };
  return { ok: true, url };
}

export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export const PRIVATE_TARGET_ERROR = "Webhook URL must not point to a loopback, private or reserved address";

/**
 * Where a URL may be saved: with private targets refused, every address its host resolves to must be
 * public (an IP literal is checked as is). An unresolvable host is refused too.
 */
export async function checkWebhookTarget(
  url: URL,
  opts: { allowPrivate: boolean; lookup?: LookupAll },
): Promise<{ ok: true } | { ok: false; error: string }> {
  if (opts.allowPrivate) return { ok: true };
  const host = hostOf(url);
  if (net.isIP(host)) return isPrivateAddress(host) ? { ok: false, error: PRIVATE_TARGET_ERROR } : { ok: true };
  const addresses = await (opts.lookup ?? systemLookup)(host).catch(() => []);
  if (!addresses.length) return { ok: false, error: `Webhook URL host ${host} could not be resolved` };
  if (addresses.some((a) => isPrivateAddress(a.address))) return { ok: false, error: PRIVATE_TARGET_ERROR };
  return { ok: true };
}

export class PrivateAddressError extends Error {
  code = "EWEBHOOK_PRIVATE_ADDRESS";
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a loopback/private/reserved address (set WEBHOOK_ALLOW_PRIVATE=true only in development)`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that refuses private addresses: every connection of the webhook agent
 * resolves through it, so the check holds on each attempt and for every address of the host.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions | number, callback: LookupCallback): void {
  const opts: dns.LookupOptions = typeof options === "number" ? { family: options } : { ...options };
  dns.lookup(hostname, { ...opts, all: true }, (err, addresses) => {
    if (err) return callback(err, "");
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new PrivateAddressError(hostname, bad.address) as NodeJS.ErrnoException, "");
    if (!addresses.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "");
    if (opts.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
