import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { putWebhookConfig } from "../../../modules/webhooks/index.js";
import { startProcessors } from "../../../processors/runner.js";
import { webhookDispatcher } from "../../../processors/webhook-dispatcher.js";
import { createTestDeps, type TestDeps } from "../../helpers/deps.js";
import { enqueuePayment, merchantWithKey } from "./helpers/fixtures.js";
import { startReceiver, type Receiver } from "./helpers/receiver.js";

const run = promisify(execFile);
let deps: TestDeps;
let receiver: Receiver;

beforeAll(async () => {
  deps = await createTestDeps();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await deps?.cleanup();
});

const cli = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], { env: { ...process.env, ...deps.env } });
  return JSON.parse(stdout);
};

it("the processor delivers through the runner; the CLI lists deliveries and resends one", async () => {
  const m = await merchantWithKey(deps);
  const cfg = await putWebhookConfig(deps, m.merchant.id, { url: receiver.url, events: ["payment.awaiting_gas"] }, m.apiKey, deps.now());
  expect(cfg.created).toBe(true);
  receiver.setResponder(() => ({ status: 410, body: "gone" }));
  const { paymentId } = await enqueuePayment(deps, m.merchant.id, "payment.awaiting_gas", {
    estimatedFeeUsdt: "1",
    gasTankBalance: "0",
    requiredTopUp: "1",
  });

  const processor = webhookDispatcher({ tls: { ca: receiver.ca }, log: () => {} });
  const runner = startProcessors(deps, [processor], () => {});
  try {
    await receiver.waitFor(1);
    await runner.runOnce("webhook-dispatcher");
    const listed = await cli("webhook", "list", "--merchant", m.merchant.id);
    expect(listed.deliveries).toEqual([
      expect.objectContaining({ paymentId, status: "failed", httpStatus: 410, attempts: 1, response: "gone" }),
    ]);

    receiver.setResponder(() => ({ status: 200, body: "ok" }));
    const resent = await cli("webhook", "resend", "--delivery", listed.deliveries[0].id);
    expect(resent).toMatchObject({ id: listed.deliveries[0].id, status: "pending", maxAttempts: 2 });
    await receiver.waitFor(2);
    await runner.runOnce("webhook-dispatcher");
    const after = await cli("webhook", "list", "--merchant", m.merchant.id, "--status", "success");
    expect(after.deliveries).toEqual([expect.objectContaining({ paymentId, status: "success", httpStatus: 200, attempts: 2 })]);
  } finally {
    await runner.stop();
    await processor.close();
  }
  await expect(cli("webhook", "resend", "--delivery", "00000000-0000-0000-0000-000000000000")).rejects.toThrow(/Delivery not found/);
});
