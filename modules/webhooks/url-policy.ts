import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { z } from "zod";

// Webhook targets are outside the merchant's trust boundary: unless the operator sets
// WEBHOOK_ALLOW_PRIVATE=true (development and tests), a URL must not reach loopback, private,
// link-local or otherwise non-public addresses, checked when the URL is saved AND on every connection
// (the resolved address is checked inside the socket's DNS lookup, so DNS rebinding cannot slip through).

// The policy is one function, isPrivateAddress: an IPv6 address that carries an IPv4 address (IPv4-mapped,
// IPv4-compatible, SIIT-translated, NAT64) is judged as that IPv4 address, whatever its spelling, before
// any range is looked at; other IPv6 addresses must be global unicast (2000::/3); then block lists apply.

const v4 = (cidr: string) => ipaddr.IPv4.parseCIDR(cidr);
const v6 = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr);

const BLOCKED_V4 = [
  v4("0.0.0.0/8"), // "this" network
  v4("10.0.0.0/8"), // private
  v4("100.64.0.0/10"), // carrier-grade NAT (Alibaba Cloud metadata 100.100.100.200)
  v4("127.0.0.0/8"), // loopback
  v4("169.254.0.0/16"), // link-local (metadata of AWS, GCP, Azure, OpenStack… at 169.254.169.254)
  v4("172.16.0.0/12"), // private
  v4("192.0.0.0/24"), // IETF protocol assignments (Oracle Cloud metadata 192.0.0.192)
  v4("192.0.2.0/24"), // documentation
  v4("192.88.99.0/24"), // 6to4 relay
  v4("192.168.0.0/16"), // private
  v4("198.18.0.0/15"), // benchmarking
  v4("198.51.100.0/24"), // documentation
  v4("203.0.113.0/24"), // documentation
  v4("224.0.0.0/4"), // multicast
  v4("240.0.0.0/4"), // reserved, broadcast
  v4("168.63.129.16/32"), // Azure WireServer / platform metadata (a public address, answered by the host)
];

/** IPv6 forms whose last 32 bits are an IPv4 address that the connection reaches (or is translated to). */
const EMBEDS_V4 = [
  v6("::/96"), // IPv4-compatible (deprecated; `::7f00:1` = `::127.0.0.1`); `::` and `::1` fall in 0.0.0.0/8
  v6("::ffff:0:0/96"), // IPv4-mapped
  v6("::ffff:0:0:0/96"), // SIIT, IPv4-translated (RFC 6145)
  v6("64:ff9b::/96"), // NAT64 well-known prefix (RFC 6052)
];

const GLOBAL_UNICAST_V6 = v6("2000::/3"); // outside it: loopback, ULA (AWS metadata fd00:ec2::254), link-local, multicast…

const BLOCKED_V6 = [
  v6("2001::/23"), // IETF protocol assignments, Teredo 2001::/32 included (its IPv4 is obfuscated: blocked outright)
  v6("2001:db8::/32"), // documentation
  v6("2002::/16"), // 6to4 (reaches an IPv4 relay or host: blocked outright)
  v6("3fff::/20"), // documentation (RFC 9637)
];

function blockedAddress(addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (addr.kind() === "ipv4") return BLOCKED_V4.some((r) => addr.match(r));
  const a = addr as ipaddr.IPv6;
  if (EMBEDS_V4.some((r) => a.match(r))) return blockedAddress(new ipaddr.IPv4(a.toByteArray().slice(12)));
  return !a.match(GLOBAL_UNICAST_V6) || BLOCKED_V6.some((r) => a.match(r));
}

/**
 * Is this IP literal outside the public internet? Loopback, private, link-local, cloud metadata, reserved
 * and IPv4-embedding IPv6 forms of any of those answer true. Anything that is not a plain IP literal
 * (`net.isIP`: dotted decimal or IPv6) answers true as well.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, "");
  if (!net.isIP(bare)) return true;
  return blockedAddress(ipaddr.parse(bare));
}

export const URL_MAX_LENGTH = 2000;

/**
 * Where webhook URLs may point, from the configuration. `allowPrivate`: WEBHOOK_ALLOW_PRIVATE. `localHttp`: local
 * mode, a development service (WEBHOOK_ALLOW_PRIVATE, which `npm start` sets, and NODE_ENV not `production`): plain
 * `http://` is accepted too, to this machine only (isLoopbackHost).
 * @example webhookUrlPolicy({ WEBHOOK_ALLOW_PRIVATE: true, NODE_ENV: "development" }) // { allowPrivate: true, localHttp: true }
 */
export type WebhookUrlPolicy = { allowPrivate: boolean; localHttp: boolean };
export function webhookUrlPolicy(config: { WEBHOOK_ALLOW_PRIVATE?: boolean; NODE_ENV: string }): WebhookUrlPolicy {
  const allowPrivate = config.WEBHOOK_ALLOW_PRIVATE === true;
  return { allowPrivate, localHttp: allowPrivate && config.NODE_ENV !== "production" };
}

/**
 * A host on this machine: `localhost` and its subdomains (RFC 6761), or a loopback IP literal (127.0.0.0/8, `::1`,
 * their IPv4-mapped forms). Odd IPv4 spellings reach here normalised by the URL parser (`http://0x7f.1` is 127.0.0.1).
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (!net.isIP(h)) return false;
  const a = ipaddr.process(h);
  return a.range() === "loopback";
}

/** `http://` to this machine outside local mode: the refusal says how to receive webhooks locally instead. */
export const HTTP_LOOPBACK_ERROR =
  "Webhook URL must use HTTPS (http:// is not accepted); to receive webhooks on this machine, run `npm run cli -- listen --forward-to <url>`";

/**
 * Syntax of a webhook URL: absolute, HTTPS only, no credentials, at most 2000 characters. With `localHttp` (local
 * mode, webhookUrlPolicy), `http://` to this machine is accepted too.
 */
export function parseWebhookUrl(input: unknown, opts: { localHttp?: boolean } = {}): { ok: true; url: URL } | { ok: false; error: string } {
  if (typeof input !== "string" || input.trim() === "") return { ok: false, error: "url is required" };
  if (input.length > URL_MAX_LENGTH) return { ok: false, error: `url must be at most ${URL_MAX_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, error: "url is not a valid URL" };
  }
  if (url.protocol === "http:") {
    const loopback = isLoopbackHost(url.hostname);
    if (!(loopback && opts.localHttp))
      return { ok: false, error: loopback ? HTTP_LOOPBACK_ERROR : "Webhook URL must use HTTPS (http:// is not accepted)" };
  } else if (url.protocol !== "https:") return { ok: false, error: "Webhook URL must use HTTPS" };
  if (url.username || url.password) return { ok: false, error: "Webhook URL must not contain credentials" };
  if (!url.hostname) return { ok: false, error: "url is not a valid URL" };
  return { ok: true, url };
}

/**
 * A superset of what the URL parser reads as the `https:` scheme (after `trim()`, leading C0 controls and spaces
 * are dropped and tabs and newlines ignored): stated in the schema so that its JSON Schema refuses `http://`.
 */
// eslint-disable-next-line no-control-regex -- the C0 controls the URL parser drops
const HTTPS_SCHEME = /^\s*[\x00-\x20]*[hH][\t\n\r]*[tT][\t\n\r]*[tT][\t\n\r]*[pP][\t\n\r]*[sS][\t\n\r]*:/;

const urlField = (opts: { localHttp: boolean }) => {
  const field = z
    .string({ error: "url is required" })
    .superRefine((input, ctx) => {
      const r = parseWebhookUrl(input, opts);
      if (!r.ok) ctx.addIssue({ code: "custom", message: r.error, input });
    })
    // Implied by the rule above (at most URL_MAX_LENGTH UTF-16 units; an https: scheme): for the JSON Schema.
    .max(URL_MAX_LENGTH, `url must be at most ${URL_MAX_LENGTH} characters`);
  return (opts.localHttp ? field : field.regex(HTTPS_SCHEME, "Webhook URL must use HTTPS")).transform(
    (input) => new URL(input.trim()).href,
  );
};

/**
 * `url` of a webhook body (payment and Vault webhooks): parseWebhookUrl's rules and messages, a non-string
 * being `url is required`; the output is the normalized URL (`href`). Where it points is checked after the
 * schema (checkWebhookTarget: DNS). The documented rule (HTTPS only); local mode reads with localWebhookUrlField.
 * @example webhookUrlField.parse(" https://Shop.example/hooks ") // "https://shop.example/hooks"
 */
export const webhookUrlField = urlField({ localHttp: false });

/** webhookUrlField in local mode (webhookUrlPolicy `localHttp`): `http://` to this machine is accepted too. */
export const localWebhookUrlField = urlField({ localHttp: true });

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
