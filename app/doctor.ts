import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPublicClient, formatEther, getAddress, http, keccak256, type Abi, type PublicClient } from "viem";
import { walletFactoryAbi } from "../abis/WalletFactory.js";
import { expectedFactoryCode } from "../chains/factory-code.js";
import { providerLabel } from "../chains/rpc-pool.js";
import type { ActiveChain } from "../chains/runtime.js";
import type { AppDeps } from "../core/deps.js";
import { firstLine } from "../core/log.js";
import { boxOf, openField, SEALED_FIELDS, type SealedField } from "../core/sealed-fields.js";
import { indexerProgress } from "../db/indexer-status.js";
import { nativePriceStates } from "../modules/pricing/index.js";
import { serviceSigners, signerRunways, SWEEP_GAS_PER_PAYMENT_BOUND } from "../modules/settlement/index.js";
import { createDeps } from "./deps.js";
import { checkServeConfig, formatServeCheck } from "./roles.js";

// `npm run cli -- doctor`: a production configuration checked end to end, one line per check with what to do. `fail`
// makes the exit code non-zero; `warn` is worth reading but does not stop a start (a database not migrated yet: serve
// migrates it; an indexer that has not run yet). `npm run serve` runs the same checks at start and refuses to start
// on the fatal ones (a contract of another release, a provider of another chain, a settler the factory refuses).

export type CheckStatus = "ok" | "warn" | "fail";
export type DoctorCheck = {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about it (fail, warn). */
  fix?: string;
  /** Serve refuses to start on it. */
  fatal?: boolean;
};

type Env = Record<string, string | undefined>;

/** Sweeps a settler's balance should pay for before the service takes money (no spending history yet). */
export const MIN_SWEEPS_FUNDED = 20n;
/** Blocks behind the chain's head the indexer may be. */
export const DOCTOR_MAX_INDEXER_LAG = 50;

const MIGRATIONS_JOURNAL = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "db", "migrations", "meta", "_journal.json");

/**
 * Every check of the configuration `env`, in order: configuration, database, each chain (providers, contracts,
 * settler, fee recipient), prices, secrets, webhook egress, indexer. Never throws: a check that cannot run fails.
 *
 * @example
 * const checks = await runDoctor(process.env);
 * process.exitCode = checks.some((c) => c.status === "fail") ? 1 : 0;
 */
export async function runDoctor(env: Env): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const add = (c: DoctorCheck) => checks.push(c);

  const config = checkServeConfig(env);
  if (config.missing.length || config.invalid.length) {
    add({
      name: "configuration",
      status: "fail",
      fatal: true,
      detail: formatServeCheck(config).replaceAll("\n", "; "),
      fix: "see docs/configuration.md",
    });
    return checks;
  }
  add({ name: "configuration", status: "ok", detail: `roles ${config.roles.join(", ")}` });

  let deps: AppDeps;
  try {
    deps = createDeps({ env });
  } catch (e) {
    add({ name: "configuration", status: "fail", fatal: true, detail: firstLine(e) });
    return checks;
  }
  try {
    const dbOk = await checkDatabase(deps, add);
    for (const chain of deps.chains) await checkChain(deps, chain, add);
    await checkPrices(deps, add);
    if (dbOk) await checkSecrets(deps, add);
    add(
      env.HASH_SECRET
        ? { name: "HASH_SECRET", status: "ok", detail: "set" }
        : {
            name: "HASH_SECRET",
            status: "fail",
            detail: "not set: payment ids and API keys are hashed with it",
            fix: "set HASH_SECRET (openssl rand -hex 32) and keep it",
          },
    );
    add(
      env.WEBHOOK_ALLOW_PRIVATE === "true"
        ? {
            name: "webhook egress",
            status: "fail",
            detail: "WEBHOOK_ALLOW_PRIVATE=true: merchants' webhook URLs may reach this network's private addresses",
            fix: "unset WEBHOOK_ALLOW_PRIVATE in production (docs/webhooks.md)",
          }
        : { name: "webhook egress", status: "ok", detail: "public addresses only" },
    );
    if (dbOk) await checkIndexer(deps, add);
  } finally {
    await deps.db.close().catch(() => {});
  }
  return checks;
}

async function checkDatabase(deps: AppDeps, add: (c: DoctorCheck) => void): Promise<boolean> {
  try {
    await deps.db.pool.query("SELECT 1");
  } catch (e) {
    // Not fatal for serve: a database that starts after the service (containers) is waited for.
    add({ name: "database", status: "fail", detail: `not reachable: ${firstLine(e)}`, fix: "check DATABASE_URL" });
    return false;
  }
  const known = (JSON.parse(fs.readFileSync(MIGRATIONS_JOURNAL, "utf8")) as { entries: { tag: string }[] }).entries.map((e) => e.tag);
  const applied = await deps.db.pool
    .query<{ tag: string }>(`SELECT tag FROM "${deps.db.schema}"."__migrations"`)
    .then((r) => r.rows.map((x) => x.tag))
    .catch(() => [] as string[]);
  const unknown = applied.filter((t) => !known.includes(t));
  const pending = known.filter((t) => !applied.includes(t));
  if (unknown.length)
    add({
      name: "database",
      status: "fail",
      fatal: true,
      detail: `schema ${deps.db.schema} has ${unknown.length} migration(s) this release does not know (${unknown.at(-1)}): a newer release ran on it`,
      fix: "run the release that migrated it",
    });
  else if (pending.length)
    add({
      name: "database",
      status: "warn",
      detail: `reachable; ${pending.length} migration(s) to apply`,
      fix: "npm run serve applies them at start",
    });
  else add({ name: "database", status: "ok", detail: `reachable, schema ${deps.db.schema} migrated (${applied.length})` });
  return true;
}

async function checkChain(deps: AppDeps, chain: ActiveChain, add: (c: DoctorCheck) => void) {
  const id = chain.chainId;
  // Each provider on its own: one answering for another chain would index and pay there.
  let usable: PublicClient | undefined;
  for (const [i, url] of chain.rpcUrls.entries()) {
    const host = providerLabel(url, i);
    const client = createPublicClient({ transport: http(url, { retryCount: 0, timeout: 10_000 }) }) as PublicClient;
    try {
      const answered = await client.getChainId();
      if (answered !== id)
        add({
          name: `chain ${id} rpc ${host}`,
          status: "fail",
          fatal: true,
          detail: `answers for chain ${answered}`,
          fix: `fix RPC_URL_${id}`,
        });
      else {
        add({ name: `chain ${id} rpc ${host}`, status: "ok", detail: `chain ${id}, block ${await client.getBlockNumber()}` });
        usable ??= client;
      }
    } catch (e) {
      add({ name: `chain ${id} rpc ${host}`, status: "fail", detail: `no answer: ${firstLine(e)}`, fix: `check RPC_URL_${id}` });
    }
  }
  if (!usable) return;
  if (!chain.factory) return; // checkServeConfig already named it
  const factory = chain.factory;
  const expected = expectedFactoryCode(factory);
  const [factoryCode, implementationCode] = await Promise.all([
    usable.getCode({ address: factory }),
    usable.getCode({ address: expected.implementation }),
  ]);
  if (!factoryCode || factoryCode === "0x") {
    add({
      name: `chain ${id} factory`,
      status: "fail",
      fatal: true,
      detail: `no contract at ${factory}`,
      fix: `npm run cli -- deploy --chain ${id} … (docs/real-chain.md#deploying-the-contracts)`,
    });
    return;
  }
  if (keccak256(factoryCode) !== expected.factoryCodeHash || keccak256(implementationCode ?? "0x") !== expected.implementationCodeHash) {
    add({
      name: `chain ${id} factory`,
      status: "fail",
      fatal: true,
      detail: `${factory} (or its implementation ${expected.implementation}) is not this release's code`,
      fix: 'deploy this release\'s factory (docs/operations.md, "Upgrading the factory")',
    });
    return;
  }
  add({ name: `chain ${id} factory`, status: "ok", detail: `${factory}, implementation ${expected.implementation}: code hashes match` });

  const read = <T>(functionName: string, args: unknown[]) =>
    usable.readContract({ address: factory, abi: walletFactoryAbi as Abi, functionName, args }) as Promise<T>;
  const settler = serviceSigners(deps.config).find((s) => s.roles.includes("settler"));
  if (settler) {
    if (!(await read<boolean>("isSettler", [settler.address])))
      add({
        name: `chain ${id} settler`,
        status: "fail",
        fatal: true,
        detail: `${settler.address} is not a settler of ${factory}: every sweep would revert`,
        fix: `the factory's owner calls setSettler(${settler.address}, true)`,
      });
    else {
      // The runway needs the service's tables (its spending history); before the first start, the balance alone.
      const runway = await signerRunways({ ...deps, chains: [chain] })
        .then((r) => r.find((x) => x.signer === settler.address))
        .catch(() => undefined);
      const fees = await usable.estimateFeesPerGas().catch(() => null);
      const perSweep = SWEEP_GAS_PER_PAYMENT_BOUND * (fees?.maxFeePerGas ?? fees?.gasPrice ?? 0n);
      const balance = runway?.balanceWei ?? (await usable.getBalance({ address: settler.address }).catch(() => null));
      const floor = perSweep * MIN_SWEEPS_FUNDED;
      if (balance === null) add({ name: `chain ${id} settler`, status: "fail", detail: `${settler.address}: balance unreadable` });
      else if (balance < floor || balance === 0n)
        add({
          name: `chain ${id} settler`,
          status: "fail",
          detail: `${settler.address} holds ${formatEther(balance)}: less than ${MIN_SWEEPS_FUNDED} sweeps at today's fees (${formatEther(floor)})`,
          fix: `send it native coin on chain ${id}`,
        });
      else
        add({
          name: `chain ${id} settler`,
          status: "ok",
          detail: `${settler.address} authorised, holds ${formatEther(balance)}${runway?.runwayBlocks != null ? ` (${runway.runwayBlocks} blocks of runway)` : ` (${balance / (perSweep || 1n)} sweeps at today's fees)`}`,
        });
    }
  }
  const feeRecipient = deps.config.FEE_RECIPIENT;
  if (feeRecipient) {
    const listed = await read<boolean>("isFeeRecipient", [getAddress(feeRecipient)]);
    add(
      listed
        ? { name: `chain ${id} fee recipient`, status: "ok", detail: `${getAddress(feeRecipient)} allow-listed` }
        : {
            name: `chain ${id} fee recipient`,
            status: "fail",
            detail: `${getAddress(feeRecipient)} is not allow-listed on ${factory}: sweeps with a fee would revert`,
            fix: `the factory's owner calls setFeeRecipient(${getAddress(feeRecipient)}, true)`,
          },
    );
  }
}

async function checkPrices(deps: AppDeps, add: (c: DoctorCheck) => void) {
  for (const p of await nativePriceStates(deps)) {
    const name = `chain ${p.chainId} price ${p.symbol}`;
    if (p.status === "ok") {
      const age = p.updatedAt ? ` set ${Math.max(0, Math.round((deps.now() - p.updatedAt.getTime()) / 1000))} s ago` : "";
      add({ name, status: "ok", detail: `${p.priceUsd} USD from ${p.source}${age}` });
    } else
      add({
        name,
        status: "fail",
        detail: p.status === "none" ? "no source prices it" : `unavailable: ${p.error}`,
        fix: "a Chainlink feed (PRICE_FEED_<chainId>_<SYMBOL>) or the price pusher (docs/real-chain.md#prices-on-a-real-network)",
      });
  }
}

/** SECRET_KEY opens what is stored sealed: one value of each sealed column is opened (none stored yet: nothing to open). */
async function checkSecrets(deps: AppDeps, add: (c: DoctorCheck) => void) {
  let box;
  try {
    box = boxOf(deps.config);
  } catch (e) {
    add({ name: "SECRET_KEY", status: "fail", fatal: true, detail: firstLine(e), fix: "set SECRET_KEY (docs/configuration.md)" });
    return;
  }
  let opened = 0;
  for (const f of SEALED_FIELDS) {
    const { rows } = await deps.db.pool
      .query<{ owner: string; value: string }>(
        `SELECT ${f.owner}::text AS owner, ${f.column} AS value FROM ${f.table} WHERE ${f.column} IS NOT NULL ORDER BY ${f.owner} LIMIT 1`,
      )
      .catch(() => ({ rows: [] as { owner: string; value: string }[] }));
    for (const r of rows) {
      try {
        openField(box, f.field as SealedField, r.owner, r.value);
        opened++;
      } catch {
        add({
          name: "SECRET_KEY",
          status: "fail",
          fatal: true,
          detail: `does not open ${f.field}: the key is not the one that sealed it`,
          fix: "set SECRET_KEY to the key in use (and SECRET_KEY_PREVIOUS while rotating: docs/configuration.md)",
        });
        return;
      }
    }
  }
  add({ name: "SECRET_KEY", status: "ok", detail: opened ? `opens the stored secrets (${opened} checked)` : "set (no secret stored yet)" });
}

async function checkIndexer(deps: AppDeps, add: (c: DoctorCheck) => void) {
  const progress = await indexerProgress(deps.db).catch(() => null);
  if (!progress) {
    add({
      name: "indexer",
      status: "warn",
      detail: "has not published its views yet",
      fix: "run the indexer role (ROLES=indexer, or all)",
    });
    return;
  }
  for (const chain of deps.chains) {
    const p = progress.find((x) => x.chainId === chain.chainId);
    const head = await deps.clients
      .get(chain.chainId)
      ?.getBlockNumber()
      .catch(() => null);
    if (!p || head == null) {
      add({ name: `chain ${chain.chainId} indexer`, status: "warn", detail: p ? "chain head unreadable" : "not indexed yet" });
      continue;
    }
    const lag = Number(head) - p.indexedBlock;
    add(
      lag > DOCTOR_MAX_INDEXER_LAG
        ? {
            name: `chain ${chain.chainId} indexer`,
            status: "fail",
            detail: `${lag} blocks behind the head`,
            fix: "see the indexer's log; GET /api/health",
          }
        : { name: `chain ${chain.chainId} indexer`, status: "ok", detail: `block ${p.indexedBlock}, ${Math.max(0, lag)} behind` },
    );
  }
}

/** The report a person reads: one line per check, then what to do. */
export function formatDoctor(checks: DoctorCheck[]): string {
  const mark = { ok: "ok  ", warn: "warn", fail: "FAIL" } as const;
  const lines = checks.map((c) => `${mark[c.status]}  ${c.name}: ${c.detail}${c.fix && c.status !== "ok" ? `\n      -> ${c.fix}` : ""}`);
  const failed = checks.filter((c) => c.status === "fail").length;
  lines.push("", failed ? `${failed} check(s) failed.` : "All checks passed.");
  return lines.join("\n");
}
