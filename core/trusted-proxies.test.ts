import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { isTrustedProxy, parseTrustedProxies } from "./trusted-proxies.js";

const trusts = (setting: string, ip: string) => isTrustedProxy(parseTrustedProxies(setting), ipaddr.process(ip));

describe("TRUSTED_PROXIES", () => {
  it("named ranges", () => {
    expect(trusts("loopback", "127.0.0.1")).toBe(true);
    expect(trusts("loopback", "10.0.0.1")).toBe(false);
    expect(trusts("private", "10.0.0.1")).toBe(true);
    expect(trusts("private", "::ffff:192.168.1.1")).toBe(true);
    expect(trusts("none", "127.0.0.1")).toBe(false);
  });

  it("CIDRs, by family", () => {
    expect(trusts("203.0.113.0/24, 2001:db8::/32", "203.0.113.9")).toBe(true);
    expect(trusts("203.0.113.0/24, 2001:db8::/32", "2001:db8::1")).toBe(true);
    expect(trusts("203.0.113.0/24", "198.51.100.1")).toBe(false);
  });

  it("refuses anything else at start", () => {
    for (const bad of ["everyone", "10.0.0.0", "10.0.0.0/33", "loopback,private"]) expect(() => parseTrustedProxies(bad), bad).toThrow();
  });
});
