import ipaddr from "ipaddr.js";

/**
 * TRUSTED_PROXIES (core/config.ts), parsed once at start: named ranges of ipaddr.js (`loopback`, `private`,
 * `none`) or comma-separated CIDRs. A bad value stops the service at start, never a request.
 *
 * @example
 * isTrustedProxy(parseTrustedProxies("10.0.0.0/8"), ipaddr.process("10.1.2.3")) // true
 */
export type TrustedProxies = { ranges: readonly string[]; cidrs: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][] };

const NAMED: Record<string, readonly string[]> = {
  none: [],
  loopback: ["loopback"],
  private: ["loopback", "private", "linkLocal", "uniqueLocal"],
};

/** Throws on anything that is neither a name above nor a list of CIDRs. */
export function parseTrustedProxies(setting: string): TrustedProxies {
  const named = NAMED[setting.trim()];
  if (named) return { ranges: named, cidrs: [] };
  const cidrs = setting
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ipaddr.parseCIDR(s));
  return { ranges: [], cidrs };
}

export function isTrustedProxy(t: TrustedProxies, a: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return t.ranges.includes(a.range()) || t.cidrs.some(([net, bits]) => a.kind() === net.kind() && a.match(net, bits));
}
