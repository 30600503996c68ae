// A dispatcher replica in its own process, so a test can kill it mid-delivery (SIGKILL).
// Env: the service's (DATABASE_URL, APP_SCHEMA, WEBHOOK_ALLOW_PRIVATE) + WEBHOOK_TEST_CA_FILE.
import fs from "node:fs";
import { createDeps } from "../../../../app/deps.js";
import { createWebhookDispatcher } from "../../../../modules/webhooks/index.js";

const deps = createDeps({ env: process.env });
const dispatcher = createWebhookDispatcher({ tls: { ca: fs.readFileSync(process.env.WEBHOOK_TEST_CA_FILE!, "utf8") } });
const stats = await dispatcher.run(deps);
console.log(JSON.stringify(stats));
await dispatcher.close();
await deps.db.close();
