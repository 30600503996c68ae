// The webhook dispatcher processor alone, through the processors' runner, in its own process, so a test
// can SIGKILL it mid-batch. Env: the service's (DATABASE_URL, APP_SCHEMA, SECRET_KEY, WEBHOOK_ALLOW_PRIVATE)
// plus WEBHOOK_TEST_CA_FILE (the receiver's certificate) and CLOCK_OFFSET_MS (moves this process's clock,
// as the tests' clocks do: a restarted replica "later" than a killed one's lease). SIGTERM stops it in order.
import fs from "node:fs";
import { createDeps } from "../../../../app/deps.js";
import { startProcessors } from "../../../../processors/runner.js";
import { webhookDispatcher } from "../../../../processors/webhook-dispatcher.js";

const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const deps = createDeps({ env: process.env, now: () => Date.now() + offset });
const log = (m: string) => console.error(m);
const dispatcher = webhookDispatcher({ tls: { ca: fs.readFileSync(process.env.WEBHOOK_TEST_CA_FILE!, "utf8") }, log });
const runner = startProcessors(deps, [dispatcher], log);

process.once("SIGTERM", async () => {
  await runner.stop();
  await deps.db.close();
  process.exit(0);
});
