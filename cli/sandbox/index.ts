import { parseArgs } from "node:util";
import { SandboxUsageError, sandboxChains, targetOf } from "./env.js";
import { signingSetup } from "./keys.js";
import { listen } from "./listen.js";
import { resendEvent } from "./resend.js";
import { SCENARIOS } from "./scenarios.js";
import { trigger } from "./trigger.js";

// The local sandbox for integrators (docs/integration.md), as `stripe listen` / `trigger`
// / `events resend` are: it talks to the API with the merchant's key, and only `trigger` touches a chain (local
// Anvil only). cli/index.ts hands these commands here.

export const SANDBOX_COMMANDS = ["listen", "trigger", "resend"];

const COMMON = "[--api-url <url>] [--api-key <key>]";
export const SANDBOX_USAGE = `  listen --forward-to <url> [--events <type,...|prefix.*>] [--from-start] [--secret <whsec_…>] [--interval <ms>] ${COMMON}
      (the merchant's events from GET /v1/events, POSTed to <url> signed like real deliveries; one JSON line each)
  trigger <${Object.keys(SCENARIOS).join("|")}> [--chain <chainId>] [--token <symbol>] [--amount <decimal>] [--payout <address>] [--timeout <s>] ${COMMON}
      (creates a payment and pays it on the local Anvil chain)
  resend <eventId> [--forward-to <url> [--secret <whsec_…>]] ${COMMON}
      (to <url> from the feed; without it, redelivered to the merchant's webhook)
  Sandbox defaults: the API and key of the running \`npm start\` (its demo merchant), or CHAINPAY_API_URL / CHAINPAY_API_KEY;
  signing: --secret or CHAINPAY_WEBHOOK_SECRET, else the merchant's webhook secret (database), else a session secret.`;

const print = (line: Record<string, unknown>) => process.stdout.write(JSON.stringify(line) + "\n");

/** Runs one sandbox command (`argv` from the command name on); JSON on stdout, progress on stderr. */
export async function runSandbox(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values: v, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      "forward-to": { type: "string" },
      events: { type: "string" },
      "from-start": { type: "boolean" },
      secret: { type: "string" },
      interval: { type: "string" },
      "api-url": { type: "string" },
      "api-key": { type: "string" },
      chain: { type: "string" },
      token: { type: "string" },
      amount: { type: "string" },
      payout: { type: "string" },
      timeout: { type: "string" },
    },
  });
  const target = targetOf(v);
  switch (command) {
    case "listen": {
      const forwardTo = v["forward-to"];
      if (!forwardTo) throw new SandboxUsageError("--forward-to is required");
      const intervalMs = v.interval ? Number(v.interval) : 1_000;
      if (!Number.isInteger(intervalMs) || intervalMs < 100)
        throw new SandboxUsageError("--interval must be an integer of at least 100 (ms)");
      const stop = new AbortController();
      for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => stop.abort());
      await listen(target, {
        forwardTo,
        events: v.events,
        fromStart: v["from-start"] === true,
        intervalMs,
        signing: await signingSetup(v, target),
        print,
        signal: stop.signal,
      });
      return;
    }
    case "trigger": {
      const scenario = positionals[0];
      if (!scenario) throw new SandboxUsageError(`trigger needs a scenario: ${Object.keys(SCENARIOS).join(", ")}`);
      const timeoutMs = (v.timeout ? Number(v.timeout) : 180) * 1000;
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new SandboxUsageError("--timeout must be a number of seconds");
      const out = await trigger(target, scenario, {
        chains: sandboxChains(),
        chainId: v.chain,
        token: v.token,
        amount: v.amount,
        payout: v.payout,
        timeoutMs,
        log: (line) => process.stderr.write(JSON.stringify(line) + "\n"),
      });
      console.log(JSON.stringify(out, null, 2));
      return;
    }
    case "resend": {
      const eventId = positionals[0];
      if (!eventId) throw new SandboxUsageError("resend needs an event id (the `id` of GET /v1/events, the webhook-id)");
      const forwardTo = v["forward-to"];
      const signing = forwardTo ? await signingSetup(v, target) : undefined;
      const out = await resendEvent(target, eventId, { forwardTo, signing });
      console.log(JSON.stringify(signing?.sessionSecret ? { ...out, sessionSecret: signing.sessionSecret } : out, null, 2));
      return;
    }
    default:
      throw new SandboxUsageError(`unknown sandbox command ${command}`);
  }
}

export { SandboxUsageError };
