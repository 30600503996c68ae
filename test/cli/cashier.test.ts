import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../helpers/service.js";

// `cashier create` of the CLI hashes the PIN under the server's HASH_SECRET as the server reads it (core/config.ts):
// in production without HASH_SECRET it refuses instead of hashing under the public development secret, under
// which the PIN could never sign in on the production POS.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
});
afterAll(() => svc?.stop());

/** Runs the CLI against the test database with `env` on top; never rejects. */
async function cli(env: Record<string, string | undefined>, ...args: string[]) {
  const merged: Record<string, string | undefined> = { ...process.env, ...svc.deps.env, ...env };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], { env: merged });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const pinHashes = async (merchantId: string) =>
  (await svc.deps.db.pool.query(`SELECT code, pin_hash FROM cashiers WHERE merchant_id = $1`, [merchantId])).rows;

describe("cli cashier create", () => {
  it("refuses in production without HASH_SECRET, and hashes under the HASH_SECRET given", { timeout: 60_000 }, async () => {
    const m = await svc.newMerchant();
    const args = ["cashier", "create", "--merchant", m.id, "--name", "Alice", "--code", "ALICE", "--pin", "20481024"];

    const refused = await cli({ NODE_ENV: "production", HASH_SECRET: undefined }, ...args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("HASH_SECRET must be set in production");
    expect(await pinHashes(m.id)).toEqual([]);

    const secret = "a-production-hash-secret-of-the-operator";
    // The stack exports BRIDGE_API_URL, which production pairs with a bridge authority key: not what this checks.
    const ok = await cli({ NODE_ENV: "production", HASH_SECRET: secret, BRIDGE_API_URL: undefined }, ...args);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ code: "ALICE", pin: "20481024" });
    const expected = createHmac("sha256", secret).update(`${m.id}:20481024`).digest("hex");
    expect(await pinHashes(m.id)).toEqual([{ code: "ALICE", pin_hash: expected }]);
  });
});
