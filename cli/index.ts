import path from "node:path";
import { parseArgs } from "node:util";
import { createDb } from "../db/client.js";
import { migrate } from "../db/migrate.js";
import {
  createApiKey,
  createMerchant,
  listMerchants,
  setMerchantType,
  type MerchantType,
  listApiKeys,
  revokeApiKey,
} from "../modules/merchants/index.js";
import {
  attachMerchant,
  createAgent,
  requireAgent,
  setAgentTerms,
  agentBalances,
  referredMerchants,
  listWithdrawals,
} from "../modules/agents/index.js";
import { rollApiKey } from "../flows/roll-api-key.js";
import { createTerminal, deleteTerminal, listTerminals, createCashier, deleteCashier, listCashiers } from "../modules/terminals/index.js";
import { loadConfig } from "../core/config.js";
import { DATA_DIR, readStackInfo } from "../local/stack-info.js";
import { withdrawPayment, cancelPayment } from "../modules/payments/index.js";
import { recoverFunds } from "../flows/payment-views.js";
import { publicClients } from "../chains/clients.js";
import { activeChains } from "../chains/runtime.js";
import { cliListDeliveries, cliResendDelivery } from "./webhooks.js";
import {
  cliSanctionsList,
  cliSanctionsReject,
  cliSanctionsRelease,
  cliSanctionsReturn,
  factoryOwner,
  SANCTIONS_USAGE,
} from "./sanctions.js";
import { LOCAL_ROLES } from "../local/accounts.js";
import { runSandbox, SANDBOX_COMMANDS, SANDBOX_USAGE, SandboxUsageError } from "./sandbox/index.js";
import { cliTolerance, TOLERANCE_USAGE } from "./tolerance.js";
import { DEPLOY_USAGE, runDeployCli } from "./deploy/index.js";
import { listMerchantVaults, rebindVault, setVaultFee } from "../modules/vault/index.js";

const USAGE = `Usage: npm run cli -- <command> [options]

  merchant create --name <name> [--email <e>] [--password <p>] [--type direct|member|partner] [--fee-bps <25-100>]
  merchant list
  merchant fee --merchant <merchantId> --type direct|member|partner [--fee-bps <25-100>]   (direct 1%, member 0%, partner 0.25-1%)
${TOLERANCE_USAGE}
  agent create --merchant <merchantId> [--cap <markup cap bps>] [--share <platform fee share bps>]   (the account becomes an agent)
  agent attach --merchant <merchantId> --agent <agentId> [--replace]   (the merchant is referred by the agent)
  agent terms --agent <agentId> [--cap <bps>] [--share <bps>]
  agent show --agent <agentId>   (terms, balances, referred merchants, withdrawals)
  apikey create --merchant <merchantId> [--name <label>]
  apikey list --merchant <merchantId>
  apikey revoke --merchant <merchantId> --key <apiKeyId>
  apikey roll --merchant <merchantId> --key <apiKeyId> [--overlap none|1h|24h|7d]   (new key, same name; the vault moves to it)
  terminal create --merchant <merchantId> --code <CODE> --name <display name> [--payout <address>] [--chain <chainId> --token <address>]
      (--chain/--token: the token preselected on the POS; 0x0…0 = native coin)
  terminal list --merchant <merchantId>
  terminal delete --merchant <merchantId> --code <CODE>
  cashier create --merchant <merchantId> --name <name> --code <CODE> [--pin <8+ digits>]   (PIN drawn when omitted; shown once)
  cashier list --merchant <merchantId>
  cashier delete --merchant <merchantId> --code <CODE>
  payment withdraw --merchant <merchantId> --payment <paymentId>   (manual withdraw of a partial payment)
  payment cancel --merchant <merchantId> --payment <paymentId>   (cancel a pending payment that received nothing)
  payment recover --merchant <merchantId> --payment <paymentId> --token <address>   (unexpected funds to the payout; 0x0…0 = native coin)
  webhook list --merchant <merchantId> [--status pending|success|failed] [--limit <1-100>]
  webhook resend --delivery <deliveryId>
  vault list --merchant <merchantId>
  vault fee --public-id <publicId> --fee-bps <0-100> [--recipient <address>|default]   (registers a business's Vault fee)
  vault rebind --public-id <publicId> --api-key-id <apiKeyId>   (after the vault's key was revoked or rolled)
${SANCTIONS_USAGE}
${SANDBOX_USAGE}
${DEPLOY_USAGE}
  doctor   (checks the production configuration in the environment end to end; exit 0 only when every check passes;
            scripts/cli.ts runs it)

DATABASE_URL (and APP_SCHEMA) select the database; without it, the running local stack's database is used.`;

async function main() {
  const [group, action, ...rest] = process.argv.slice(2);
  // The integrator's sandbox (listen, trigger, resend: cli/sandbox) talks to the API, not to the database.
  if (group && SANDBOX_COMMANDS.includes(group)) return runSandbox(process.argv.slice(2));
  // Contracts on a chain: the deployer's key and nothing else from the environment; no database.
  if (group === "deploy") {
    process.exitCode = await runDeployCli(process.argv.slice(3));
    return;
  }

  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      type: { type: "string" },
      "fee-bps": { type: "string" },
      merchant: { type: "string" },
      code: { type: "string" },
      json: { type: "boolean" },
      delivery: { type: "string" },
      payment: { type: "string" },
      token: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      "public-id": { type: "string" },
      recipient: { type: "string" },
      "api-key-id": { type: "string" },
      payout: { type: "string" },
      chain: { type: "string" },
      pin: { type: "string" },
      key: { type: "string" },
      overlap: { type: "string" },
      agent: { type: "string" },
      cap: { type: "string" },
      share: { type: "string" },
      replace: { type: "boolean" },
      deposit: { type: "string" },
      recovery: { type: "string" },
      reason: { type: "string" },
      operator: { type: "string" },
      all: { type: "boolean" },
      bps: { type: "string" },
      amount: { type: "string" },
      to: { type: "string" },
      licence: { type: "string" },
      yes: { type: "boolean" },
    },
  });
  const url = process.env.DATABASE_URL ?? readStackInfo()?.databaseUrl;
  if (!group || !action) return fail(USAGE);
  if (!url) return fail("DATABASE_URL is not set and no local stack is running (npm start).");
  const db = createDb({ url });
  try {
    await migrate(db);
    const out = await run(db, group, action, values);
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await db.close();
  }
}

const need = (v: string | undefined, flag: string) => {
  if (!v) throw new UsageError(`--${flag} is required`);
  return v;
};
class UsageError extends Error {}

/** The chains with RPC URLs from the environment, or the running local stack's. */
function rpcChains() {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const c of readStackInfo()?.chains ?? []) env[`RPC_URL_${c.chainId}`] ??= c.rpcUrl;
  return activeChains(env);
}

async function run(db: ReturnType<typeof createDb>, group: string, action: string, v: Record<string, string | boolean | undefined>) {
  const s = (k: string) => v[k] as string | undefined;
  switch (`${group} ${action}`) {
    case "merchant create":
      return createMerchant(db, {
        name: need(s("name"), "name"),
        email: s("email"),
        password: s("password"),
        type: s("type") as MerchantType | undefined,
        platformFeeBps: s("fee-bps") ? Number(s("fee-bps")) : undefined,
      }).then(({ passwordHash, ...m }) => m);
    case "merchant list":
      return (await listMerchants(db)).map(({ passwordHash, ...m }) => m);
    case "merchant fee":
      return setMerchantType(db, need(s("merchant"), "merchant"), {
        type: need(s("type"), "type") as MerchantType,
        platformFeeBps: s("fee-bps") ? Number(s("fee-bps")) : undefined,
      });
    case "merchant tolerance":
      return cliTolerance(db, stackChains(), {
        merchantId: need(s("merchant"), "merchant"),
        bps: s("bps"),
        chain: s("chain"),
        token: s("token"),
        amount: s("amount"),
      });
    case "agent create": {
      const config = loadConfig(process.env);
      return createAgent(db, need(s("merchant"), "merchant"), {
        markupCapBps: s("cap") ? Number(s("cap")) : config.AGENT_MARKUP_CAP_BPS,
        platformShareBps: s("share") ? Number(s("share")) : config.AGENT_PLATFORM_SHARE_BPS,
      });
    }
    case "agent attach":
      await attachMerchant(db, need(s("merchant"), "merchant"), need(s("agent"), "agent"), { replace: v.replace === true });
      return { merchantId: s("merchant"), agentId: s("agent") };
    case "agent terms":
      return setAgentTerms(db, need(s("agent"), "agent"), {
        markupCapBps: s("cap") ? Number(s("cap")) : undefined,
        platformShareBps: s("share") ? Number(s("share")) : undefined,
      });
    case "agent show": {
      const agent = await requireAgent(db.pool, need(s("agent"), "agent"));
      return {
        ...agent,
        balances: await agentBalances(db.pool, agent.agentId),
        merchants: await referredMerchants(db.pool, agent.agentId),
        withdrawals: await listWithdrawals({ db }, agent.agentId),
      };
    }
    case "apikey create": {
      const k = await createApiKey(db, need(s("merchant"), "merchant"), s("name"));
      return { id: k.id, merchantId: k.merchantId, name: k.name, apiKey: k.key, note: "shown once; store it now" };
    }
    case "apikey list":
    case "apikey revoke":
    case "apikey roll": {
      // SECRET_KEY (if set) tells which key a legacy webhook signs with.
      const config = { SECRET_KEY: process.env.SECRET_KEY, SECRET_KEY_PREVIOUS: process.env.SECRET_KEY_PREVIOUS };
      const deps = { db, now: Date.now, config };
      const merchant = need(s("merchant"), "merchant");
      if (action === "list") return listApiKeys(deps, merchant);
      if (action === "revoke") return revokeApiKey(deps, merchant, need(s("key"), "key"));
      const r = await rollApiKey(deps, merchant, need(s("key"), "key"), s("overlap") ?? "24h");
      return { ...r, note: "the new key is shown once; store it now" };
    }
    case "terminal create": {
      if (s("token") && !s("chain")) throw new UsageError("--token needs --chain");
      const defaultToken = s("chain") ? `${s("chain")}:${need(s("token"), "token")}` : undefined;
      const chains = defaultToken ? stackChains() : [];
      const settings = { payoutAddress: s("payout"), defaultToken };
      return createTerminal(db, need(s("merchant"), "merchant"), need(s("code"), "code"), need(s("name"), "name"), settings, chains);
    }
    case "cashier create": {
      // The server's HASH_SECRET, read as the server reads it: the PIN's hash must match what the POS computes, and
      // in production the public development secret is refused (a PIN hashed under it could never sign in).
      const { HASH_SECRET } = loadConfig(process.env);
      const config = { HASH_SECRET };
      const input = { name: need(s("name"), "name"), code: need(s("code"), "code"), pin: s("pin") };
      const { cashier, pin } = await createCashier({ db, config }, need(s("merchant"), "merchant"), input);
      return { ...cashier, pin, note: "the PIN is shown once; give it to the cashier now" };
    }
    case "cashier list":
      return listCashiers(db, need(s("merchant"), "merchant"));
    case "cashier delete":
      return deleteCashier(db, need(s("merchant"), "merchant"), { code: need(s("code"), "code") });
    case "terminal list":
      return listTerminals(db, need(s("merchant"), "merchant"));
    case "terminal delete":
      return deleteTerminal(db, need(s("merchant"), "merchant"), need(s("code"), "code"));
    case "payment withdraw":
      // The operator acts for the merchant: the same operation as the API, without a key.
      return withdrawPayment({ db, now: Date.now }, { merchantId: need(s("merchant"), "merchant") }, need(s("payment"), "payment"));
    case "payment cancel":
      // A native-coin payment's balance is read on chain (modules/payments/address-has-funds.ts).
      return cancelPayment(
        { db, now: Date.now, clients: publicClients(rpcChains()) },
        { merchantId: need(s("merchant"), "merchant") },
        need(s("payment"), "payment"),
      );
    case "payment recover": {
      const chains = rpcChains(); // native balances are read on chain
      return recoverFunds(
        // Prices (the recovery's fee) as the service reads them.
        { db, now: Date.now, chains, clients: publicClients(chains), config: loadConfig(process.env) },
        { merchantId: need(s("merchant"), "merchant") },
        need(s("payment"), "payment"),
        { token: need(s("token"), "token") },
      );
    }
    case "webhook list":
      return cliListDeliveries(db, need(s("merchant"), "merchant"), { status: s("status"), limit: s("limit") });
    case "webhook resend":
      return cliResendDelivery(db, need(s("delivery"), "delivery"));
    case "vault list":
      return listMerchantVaults(db, need(s("merchant"), "merchant"));
    case "vault fee": {
      // With the chains' RPCs (environment, or the running local stack), the answer says whether the recipient is allow-listed.
      const env: Record<string, string | undefined> = { ...process.env };
      for (const c of readStackInfo()?.chains ?? []) env[`RPC_URL_${c.chainId}`] ??= c.rpcUrl;
      const chains = activeChains(env);
      return setVaultFee(
        { db, now: Date.now, chains, clients: publicClients(chains), config: { FEE_RECIPIENT: process.env.FEE_RECIPIENT } },
        { publicId: need(s("public-id"), "public-id"), feeBps: need(s("fee-bps"), "fee-bps"), recipient: s("recipient") },
      );
    }
    case "vault rebind":
      return rebindVault(
        { db, now: Date.now },
        { publicId: need(s("public-id"), "public-id"), apiKeyId: need(s("api-key-id"), "api-key-id") },
      );
    case "sanctions list":
      return cliSanctionsList(db, { all: v.all === true, limit: s("limit") });
    case "sanctions release":
    case "sanctions reject": {
      const target = { paymentId: s("payment"), recoveryId: s("recovery"), depositId: s("deposit") };
      const opts = { reason: need(s("reason"), "reason"), operator: s("operator") };
      return action === "release" ? cliSanctionsRelease(db, target, opts) : cliSanctionsReject(db, target, opts);
    }
    case "sanctions return": {
      const target = { paymentId: s("payment"), recoveryId: s("recovery"), depositId: s("deposit") };
      // The local stack's factories are owned by its deployer; elsewhere the owner's key must be given.
      const owner = factoryOwner(process.env, readStackInfo() && !process.env.DATABASE_URL ? LOCAL_ROLES.deployer : undefined);
      return cliSanctionsReturn(
        db,
        stackChains(),
        owner,
        target,
        {
          to: need(s("to"), "to"),
          reason: need(s("reason"), "reason"),
          amount: s("amount"),
          licence: s("licence"),
          operator: s("operator"),
          yes: v.yes === true,
        },
        loadConfig(),
      );
    }
    default:
      throw new UsageError(USAGE);
  }
}

/** The served chains (environment, or the running local stack's RPCs and deployments), to check token settings against. */
function stackChains() {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const c of readStackInfo()?.chains ?? []) env[`RPC_URL_${c.chainId}`] ??= c.rpcUrl;
  env.DEPLOYMENTS_FILE ??= path.join(DATA_DIR, "deployments.json");
  return activeChains(env);
}

function fail(msg: string): never {
  console.error(msg);
  process.exit(2);
}

main().catch((e) => {
  if (e instanceof UsageError || e instanceof SandboxUsageError) fail(e.message);
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
