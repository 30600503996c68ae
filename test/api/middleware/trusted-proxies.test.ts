import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { clockedApi, newIp, readResponse } from "../../helpers/clocked-api.js";

// Review of issue 10: X-Forwarded-For was believed from any private peer, so on a LAN or behind Kubernetes
// SNAT a client could rotate the header past every per-address limit. Now only TRUSTED_PROXIES are believed.
const t = clockedApi({ TRUSTED_PROXIES: "none" });

const login = async (ip: string) =>
  readResponse(
    await fetch(`${t.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": ip },
      body: JSON.stringify({ email: `nobody.${randomUUID()}@example.com`, password: "x" }),
    }),
  );

describe("TRUSTED_PROXIES=none", () => {
  it("a forged X-Forwarded-For does not make a new address: 20 failed logins from the socket's address, then 429", async () => {
    for (let i = 0; i < 20; i++) {
      expect((await login(newIp())).status).toBe(401);
      t.clock.advance(3000);
    }
    expect((await login(newIp())).status).toBe(429);
  });
});
