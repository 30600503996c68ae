import http from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { describe, expect, it } from "vitest";
import { validatePutWebhook } from "./config.js";
import { postWebhook } from "./deliver.js";
import {
  checkWebhookTarget,
  HTTP_LOOPBACK_ERROR,
  hostOf,
  isLoopbackHost,
  isPrivateAddress,
  parseWebhookUrl,
  PRIVATE_TARGET_ERROR,
  webhookUrlPolicy,
} from "./url-policy.js";
import { validateVaultWebhookInput } from "./vault-config.js";

// Issue 10, finding 7: IPv6 forms that embed an IPv4 address, and cloud metadata addresses, must be refused
// like the IPv4 address they reach, by every path that checks a webhook target (save, DNS, send).

describe("isPrivateAddress: IPv6 that embeds an IPv4 address is judged as that address", () => {
  it.each([
    ["::7f00:1", "IPv4-compatible loopback"],
    ["::127.0.0.1", "IPv4-compatible loopback, dotted"],
    ["::a9fe:a9fe", "IPv4-compatible 169.254.169.254"],
    ["::10.0.0.1", "IPv4-compatible private"],
    ["::ffff:0:7f00:1", "SIIT (IPv4-translated) loopback"],
    ["::ffff:0:10.0.0.1", "SIIT private, dotted"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "IPv4-mapped, uncompressed"],
    ["::FFFF:7F00:1", "IPv4-mapped, upper case"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    ["64:ff9b::7f00:1", "NAT64 of loopback"],
    ["64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254"],
    ["64:ff9b:1::a00:1", "local-use NAT64"],
    ["2002:7f00:1::1", "6to4 (blocked outright)"],
    ["2002:808:808::1", "6to4 of a public address (blocked outright)"],
    ["2001::1", "Teredo (blocked outright)"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ])("%s (%s) is refused", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    ["::ffff:8.8.8.8", "IPv4-mapped public"],
    ["64:ff9b::808:808", "NAT64 of a public address (DNS64 networks)"],
    ["2606:4700:4700::1111", "global unicast"],
    ["2a00:1450:4001:80b::200e", "global unicast"],
  ])("%s (%s) is public", (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe("isPrivateAddress: cloud metadata and non-global addresses", () => {
  it.each([
    ["168.63.129.16", "Azure WireServer (a public address)"],
    ["169.254.169.254", "AWS, GCP, Azure, OpenStack metadata"],
    ["169.254.170.2", "ECS task metadata"],
    ["100.100.100.200", "Alibaba Cloud metadata"],
    ["192.0.0.192", "Oracle Cloud metadata"],
    ["fd00:ec2::254", "AWS IPv6 metadata"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1%eth0", "link-local with a zone"],
    ["ff02::1", "multicast"],
    ["100::1", "discard"],
    ["4000::1", "outside global unicast 2000::/3"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation (RFC 9637)"],
    ["localhost", "not an IP literal"],
    ["0177.0.0.1", "not a plain IP literal"],
  ])("%s (%s) is refused", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
});

const refusedToSave = async (input: string) => {
  const parsed = parseWebhookUrl(input);
  if (!parsed.ok) throw new Error(parsed.error);
  return checkWebhookTarget(parsed.url, { allowPrivate: false, lookup: async () => [{ address: "93.184.216.34", family: 4 }] });
};

describe("URLs: the policy sees the host as WHATWG URL normalises it", () => {
  it.each([
    ["https://2130706433/hook", "127.0.0.1"],
    ["https://0177.0.0.1/hook", "127.0.0.1"],
    ["https://0x7f.1/hook", "127.0.0.1"],
    ["https://127.1/hook", "127.0.0.1"],
    ["https://0xa9.0xfe.0xa9.0xfe/latest", "169.254.169.254"],
    ["https://2852039166/latest", "169.254.169.254"],
    ["https://[::127.0.0.1]/hook", "::7f00:1"],
    ["https://[::ffff:0:127.0.0.1]/hook", "::ffff:0:7f00:1"],
    ["https://[0:0:0:0:0:ffff:127.0.0.1]/hook", "::ffff:7f00:1"],
    ["https://168.63.129.16/machine", "168.63.129.16"],
    ["https://[64:ff9b::169.254.169.254]/latest", "64:ff9b::a9fe:a9fe"],
  ])("%s -> %s, refused", async (input, host) => {
    const parsed = parseWebhookUrl(input);
    expect(parsed.ok && hostOf(parsed.url)).toBe(host);
    expect(await refusedToSave(input)).toEqual({ ok: false, error: PRIVATE_TARGET_ERROR });
  });

  it("a host name resolving to an IPv4-embedding IPv6 address is refused", async () => {
    for (const address of ["::7f00:1", "::ffff:0:7f00:1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe"]) {
      const lookup = async () => [
        { address: "2606:4700:4700::1111", family: 6 },
        { address, family: 6 },
      ];
      expect(await checkWebhookTarget(new URL("https://hooks.example/x"), { allowPrivate: false, lookup })).toEqual({
        ok: false,
        error: PRIVATE_TARGET_ERROR,
      });
    }
  });

  it("sending to such a literal is refused before any connection", async () => {
    const dispatcher = new Agent();
    try {
      for (const url of ["https://[::7f00:1]:9/hook", "https://[::ffff:0:7f00:1]:9/hook"]) {
        const o = await postWebhook({ url, body: "{}", headers: {} }, { dispatcher, allowPrivate: false });
        expect(o).toMatchObject({ ok: false, httpStatus: null, error: expect.stringMatching(/^blocked: /) });
      }
    } finally {
      await dispatcher.close();
    }
  });
});

// Issue 35: `http://localhost` webhooks in local development. Accepted only in local mode (WEBHOOK_ALLOW_PRIVATE, which
// `npm start` sets, outside NODE_ENV=production), and only to this machine; elsewhere the refusal points to `listen`.
describe("http:// to this machine: local mode only", () => {
  const HTTPS_ONLY = "Webhook URL must use HTTPS (http:// is not accepted)";
  const LOCAL = webhookUrlPolicy({ WEBHOOK_ALLOW_PRIVATE: true, NODE_ENV: "development" });

  it("local mode is WEBHOOK_ALLOW_PRIVATE outside production", () => {
    expect(LOCAL).toEqual({ allowPrivate: true, localHttp: true });
    expect(webhookUrlPolicy({ WEBHOOK_ALLOW_PRIVATE: true, NODE_ENV: "production" })).toEqual({ allowPrivate: true, localHttp: false });
    expect(webhookUrlPolicy({ WEBHOOK_ALLOW_PRIVATE: false, NODE_ENV: "development" })).toEqual({ allowPrivate: false, localHttp: false });
    expect(webhookUrlPolicy({ NODE_ENV: "test" })).toEqual({ allowPrivate: false, localHttp: false });
  });

  it.each(["localhost", "LOCALHOST.", "api.localhost", "127.0.0.1", "127.1.2.3", "[::1]", "::1", "::ffff:127.0.0.1"])(
    "%s is this machine",
    (h) => expect(isLoopbackHost(h)).toBe(true),
  );
  it.each(["localhost.shop.example", "mylocalhost", "10.0.0.1", "0.0.0.0", "::", "128.0.0.1", "shop.example", "169.254.169.254"])(
    "%s is not",
    (h) => expect(isLoopbackHost(h)).toBe(false),
  );

  it.each([
    "http://localhost:4242/webhooks",
    "http://127.0.0.1:4242/webhooks",
    "http://[::1]:4242/webhooks",
    "http://0x7f.1/webhooks",
    "http://shop.localhost/webhooks",
  ])("%s: accepted for both kinds of webhook in local mode, refused with the pointer to listen otherwise", async (url) => {
    expect(await validatePutWebhook({ url }, LOCAL)).toEqual({ url: new URL(url).href });
    expect(await validateVaultWebhookInput({ url, events: ["deposit.*"] }, LOCAL)).toEqual({
      url: new URL(url).href,
      events: ["deposit.*"],
    });
    for (const policy of [
      { allowPrivate: true, localHttp: false },
      { allowPrivate: false, localHttp: false },
    ]) {
      await expect(validatePutWebhook({ url }, policy)).rejects.toThrow(HTTP_LOOPBACK_ERROR);
      await expect(validateVaultWebhookInput({ url }, policy)).rejects.toThrow(HTTP_LOOPBACK_ERROR);
    }
    expect(parseWebhookUrl(url)).toEqual({ ok: false, error: HTTP_LOOPBACK_ERROR });
    expect(HTTP_LOOPBACK_ERROR).toContain("`npm run cli -- listen --forward-to <url>`");
  });

  it("local mode still refuses http:// elsewhere, credentials and other schemes; the other checks still run", async () => {
    for (const [url, error] of [
      ["http://shop.example/hooks", HTTPS_ONLY],
      ["http://10.0.0.1/hooks", HTTPS_ONLY],
      ["http://localhost.shop.example/hooks", HTTPS_ONLY],
      ["http://user:pw@localhost/hooks", "Webhook URL must not contain credentials"],
      ["ftp://localhost/hooks", "Webhook URL must use HTTPS"],
    ])
      await expect(validatePutWebhook({ url }, LOCAL), url).rejects.toThrow(error);
    await expect(validatePutWebhook({ url: "http://localhost/h", color: "red" }, LOCAL)).rejects.toThrow("Unknown field: color");
    await expect(validatePutWebhook({ url: "http://localhost/h", events: [] }, LOCAL)).rejects.toThrow(
      "events must contain at least one event",
    );
  });

  it("delivery: sent over http:// to this machine in local mode, blocked otherwise", async () => {
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push(body);
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dispatcher = new Agent();
    try {
      const { port } = server.address() as AddressInfo;
      const input = { url: `http://127.0.0.1:${port}/hooks`, body: '{"event":"payment.completed"}', headers: {} };
      expect(await postWebhook(input, { dispatcher, ...LOCAL })).toMatchObject({ ok: true, httpStatus: 200, response: "ok" });
      expect(received).toEqual(['{"event":"payment.completed"}']);
      for (const policy of [
        { allowPrivate: true, localHttp: false },
        { allowPrivate: false, localHttp: false },
      ])
        expect(await postWebhook(input, { dispatcher, ...policy })).toMatchObject({
          ok: false,
          httpStatus: null,
          error: "blocked: webhook URLs must use HTTPS",
        });
      // Local mode sends plain http:// nowhere but this machine.
      const elsewhere = { ...input, url: "http://shop.example/hooks" };
      expect(await postWebhook(elsewhere, { dispatcher, ...LOCAL })).toMatchObject({
        ok: false,
        error: "blocked: webhook URLs must use HTTPS",
      });
      expect(received).toHaveLength(1);
    } finally {
      await dispatcher.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
