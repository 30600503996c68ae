import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_LOGIN, demoKeyFile, ensureDemoMerchant } from "../../local/demo-merchant.js";
import { signUpForm } from "../../flows/sign-up.js";
import { loginForm, setMerchantPassword } from "../../modules/merchants/index.js";
import { startTestService, type TestService } from "../helpers/service.js";

// The demo merchant `npm start` seeds and prints (scripts/start.ts): its printed login works on the dashboard's login
// route, its key on the API, and a data dir of an earlier start (password `demo`, a key file gone or stale) is brought
// back to that.

let svc: TestService;
let dataDir: string;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpay-demo-"));
});
afterAll(async () => {
  await svc?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

let ips = 0;
const login = (password: string) =>
  svc.http("POST", "/auth/login", {
    body: { email: DEMO_LOGIN.email, password },
    headers: { "x-forwarded-for": `198.18.77.${++ips}` },
  });

describe("the demo merchant of npm start", () => {
  it("has a login the service's own rules accept: sign-up's (12 to 200 characters) and the login form's", () => {
    expect(signUpForm.safeParse({ name: "Demo Merchant", ...DEMO_LOGIN }).success).toBe(true);
    expect(loginForm.safeParse(DEMO_LOGIN).success).toBe(true);
  });

  it("logs in with the printed e-mail and password, and its kept key answers the API", async () => {
    const demo = await ensureDemoMerchant(svc.deps, dataDir);
    expect(demo).toMatchObject({ email: "demo@example.com", password: DEMO_LOGIN.password, apiKey: expect.stringMatching(/^cp_/) });
    expect(fs.readFileSync(demoKeyFile(dataDir), "utf8").trim()).toBe(demo.apiKey);
    expect((fs.statSync(demoKeyFile(dataDir)).mode & 0o777).toString(8)).toBe("600");

    const res = await login(DEMO_LOGIN.password);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ success: true, merchantId: demo.merchantId });
    expect(res.headers.getSetCookie().some((c) => c.startsWith("cp_session="))).toBe(true);
    expect((await svc.http("GET", "/balance", { apiKey: demo.apiKey })).status).toBe(200);

    // A second start: the same account and key.
    expect(await ensureDemoMerchant(svc.deps, dataDir)).toEqual(demo);
  });

  it("an earlier start's account (password `demo`, key file lost, then a stale key) gets the printed login and a working key", async () => {
    const before = await ensureDemoMerchant(svc.deps, dataDir);
    await setMerchantPassword(svc.deps.db, before.merchantId, "demo");
    expect((await login(DEMO_LOGIN.password)).status).toBe(401);
    fs.rmSync(demoKeyFile(dataDir));

    const after = await ensureDemoMerchant(svc.deps, dataDir);
    expect(after.merchantId).toBe(before.merchantId);
    expect(after.apiKey).not.toBe(before.apiKey);
    expect((await login("demo")).status).toBe(401);
    expect((await login(DEMO_LOGIN.password)).status).toBe(200);
    expect((await svc.http("GET", "/balance", { apiKey: after.apiKey })).status).toBe(200);

    // A key file naming no live key of this merchant (a database made afresh under the same data dir): replaced.
    fs.writeFileSync(demoKeyFile(dataDir), "cp_live_notakey\n");
    const again = await ensureDemoMerchant(svc.deps, dataDir);
    expect(again.apiKey).not.toBe("cp_live_notakey");
    expect((await svc.http("GET", "/balance", { apiKey: again.apiKey })).status).toBe(200);
  });
});
