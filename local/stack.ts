import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { factoryMismatch } from "../chains/factory-check.js";
import { createPublicClient, http } from "viem";
import { chainInfo } from "../chains/registry.js";
import { activeChains, type Deployments } from "../chains/runtime.js";
import { SOLANA } from "../chains/solana.js";
import { LOCAL_ROLES, localRoleEnv } from "./accounts.js";
import { startAnvil, type Anvil } from "./anvil.js";
import { DLN_ROUTER } from "./bridge/abi.js";
import { startBridgeStandIn } from "./bridge/server.js";
import { SolanaOrderBook } from "./bridge/solana-orders.js";
import { startSolver } from "./bridge/solver.js";
import { deployLocalChain, deploySanctionsOracle } from "./deploy.js";
import { startPonder, ponderSchemaName, type PonderProcess } from "./ponder.js";
import { startEmbeddedPostgres, type LocalPostgres } from "./postgres.js";
import { LOCAL_SOLANA } from "./solana/accounts.js";
import type { LocalSolana } from "./solana/svm.js";

export type StackOptions = {
  dataDir: string;
  /** Wipe the data dir first (tests). */
  fresh?: boolean;
  /** Local chain ids to run on Anvil (default 137 and 777177). */
  chainIds?: number[];
  /** Interval mining, seconds (fractions allowed). */
  blockTime?: number;
  /** Use this Postgres instead of the embedded one. */
  databaseUrl?: string;
  /** Keep chain and database state across restarts (dev stack). */
  persistent?: boolean;
  ponder?: boolean;
  viewsSchema?: string;
  /** SECRET_KEY handed to the service (hex); default: a random key for this stack alone (tests). */
  secretKey?: string;
  log?: (msg: string) => void;
};

export type Stack = {
  databaseUrl: string;
  chains: { chainId: number; rpcUrl: string }[];
  deployments: Deployments;
  /** Environment for the service (API, processors, Ponder, CLI) to talk to this stack. */
  env: Record<string, string>;
  ponder?: PonderProcess;
  /**
   * The local Solana (with the bridge stand-in): litesvm in this process and its JSON-RPC front at `rpcUrl`
   * (SOLANA_RPC_URL). `svm.onTransaction` sees each transaction that lands (docs/solana.md).
   */
  solana?: { svm: LocalSolana; rpcUrl: string };
  stop(): Promise<void>;
};

/** Starts Postgres (or uses databaseUrl), one Anvil per chain id, deploys contracts, and Ponder. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  if (opts.fresh) fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const chainIds = opts.chainIds ?? [137, 777177];
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    let pg: LocalPostgres | undefined;
    let databaseUrl = opts.databaseUrl;
    if (!databaseUrl) {
      pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "postgres"), persistent: opts.persistent ?? false });
      stops.push(() => pg!.stop());
      databaseUrl = pg.url;
      log(`postgres    ${databaseUrl}`);
    }

    const deploymentsFile = path.join(dataDir, "deployments.json");
    const previous: Deployments = fs.existsSync(deploymentsFile) ? JSON.parse(fs.readFileSync(deploymentsFile, "utf8")) : { chains: {} };
    const deployments: Deployments = { chains: {} };
    const anvils: Anvil[] = [];
    for (const chainId of chainIds) {
      const forkUrl = process.env[`ANVIL_FORK_URL_${chainId}`];
      const anvil = await startAnvil({
        chainId,
        blockTime: opts.blockTime ?? 1,
        forkUrl,
        stateFile: opts.persistent ? path.join(dataDir, `anvil-${chainId}.json`) : undefined,
      });
      anvils.push(anvil);
      stops.push(() => anvil.stop());
      const pub = createPublicClient({ transport: http(anvil.rpcUrl) });
      const prev = previous.chains[String(chainId)];
      // A factory of an earlier release derives other addresses (chains/factory-check.ts), or state from before the
      // bridge contracts: deploy this release's.
      // The bridge: this release's stand-in of DLN has the pre-swap router at DLN's DeBridgeRouter address, and on DLN's
      // chains its destination at DlnDestination's address instead of in the deployments.
      const dln = chainInfo(chainId)?.dln;
      const kept =
        prev &&
        prev.bridgeSource &&
        (prev.bridgeDestination || (dln && (await pub.getCode({ address: dln.destination }))?.length)) &&
        (await pub.getCode({ address: DLN_ROUTER }))?.length &&
        (await pub.getCode({ address: prev.factory }))?.length &&
        !(await factoryMismatch(pub, prev.factory).catch((e) => String(e)))
          ? prev
          : undefined;
      deployments.chains[String(chainId)] = kept ?? (await deployLocalChain({ chainId, rpcUrl: anvil.rpcUrl }));
      // State kept from before the sanctions oracle existed: deploy it alone.
      if (kept && !kept.sanctionsOracle) kept.sanctionsOracle = await deploySanctionsOracle({ chainId, rpcUrl: anvil.rpcUrl });
      // State kept from before deployments listed their Chainlink feeds: a local chain has none of the registry's.
      if (kept && kept.priceFeeds === undefined) Object.assign(kept, { priceFeeds: {}, sequencerFeed: null });
      log(`chain ${String(chainId).padEnd(7)}${anvil.rpcUrl}${forkUrl ? ` (fork of ${forkUrl})` : ""}${kept ? " (state kept)" : ""}`);
    }
    fs.writeFileSync(deploymentsFile, JSON.stringify(deployments, null, 2));

    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      DEPLOYMENTS_FILE: deploymentsFile,
      LOCAL_CHAINS: chainIds.join(","),
      PONDER_VIEWS_SCHEMA: opts.viewsSchema ?? "chain",
      ...localRoleEnv(),
    };
    for (const a of anvils) env[`RPC_URL_${a.chainId}`] = a.rpcUrl;

    // Two or more chains with the bridge: the DLN stand-in and its solver (local/bridge/), for cross-chain payments.
    // Its skip list (POST /local/solver/skip/{receiver}) lets a test leave an order unfilled.
    const bridgeChains = activeChains(env).filter((c) => c.bridgeSource && c.bridgeDestination);
    let bridgeUrl: string | undefined;
    let solana: Stack["solana"];
    if (bridgeChains.length >= 2) {
      // Solana as a bridge source: litesvm in this process with USDC at Circle's mint address, behind a JSON-RPC
      // front. Loaded here only (a native module). In memory: a restart starts it afresh.
      const [{ createLocalSolana }, { startSolanaRpc }] = await Promise.all([import("./solana/svm.js"), import("./solana/rpc-server.js")]);
      const svm = createLocalSolana();
      const front = await startSolanaRpc({ svm });
      stops.push(() => front.close());
      solana = { svm, rpcUrl: front.url };
      // The give side of orders from Solana (the escrow key's USDC account; no DLN Solana program), shared by the
      // stand-in (create-tx, status, order-ids by signature) and the solver (fills them, pays the escrow out).
      const solanaOrders = await SolanaOrderBook.create(svm);
      stops.push(async () => solanaOrders.close());

      const skipReceivers = new Set<string>();
      const standIn = await startBridgeStandIn({ chains: bridgeChains, skipReceivers, solana: solanaOrders });
      stops.push(() => standIn.close());
      const solver = startSolver({
        chains: bridgeChains,
        account: LOCAL_ROLES.bridgeSolver,
        skip: (o) => skipReceivers.has(o.receiver.toLowerCase()),
        solana: { book: solanaOrders, beneficiary: LOCAL_SOLANA.solver.address },
      });
      stops.push(() => solver.stop());
      bridgeUrl = standIn.url;
      log(
        `bridge      ${standIn.url} (DLN stand-in; solver ${LOCAL_ROLES.bridgeSolver.address}, on Solana ${LOCAL_SOLANA.solver.address})`,
      );
      log(`solana      ${front.url} (litesvm stand-in; USDC at ${SOLANA.usdc.mint}; not kept across restarts)`);
    }

    let ponder: PonderProcess | undefined;
    if (opts.ponder !== false) {
      // A fresh chain needs a fresh Ponder schema: the deployment block's hash tells chains apart.
      const chainKey = (
        await Promise.all(
          anvils.map(async (a) => {
            const b = await createPublicClient({ transport: http(a.rpcUrl) }).getBlock({
              blockNumber: BigInt(deployments.chains[String(a.chainId)]!.startBlock),
            });
            return `${a.chainId}:${b.hash}`;
          }),
        )
      ).join(",");
      ponder = await startPonder({
        env,
        schema: ponderSchemaName(chainKey + JSON.stringify(deployments)),
        viewsSchema: env.PONDER_VIEWS_SCHEMA!,
        logFile: path.join(dataDir, "ponder.log"),
      });
      stops.push(() => ponder!.stop());
      log(`indexer     ${ponder.url} (schema ${ponder.schema}, views ${env.PONDER_VIEWS_SCHEMA}; log ${path.join(dataDir, "ponder.log")})`);
    }
    // The service's key sealing webhook secrets at rest; the indexer never gets it.
    const serviceEnv = {
      ...env,
      ...(bridgeUrl ? { BRIDGE_API_URL: bridgeUrl } : {}),
      ...(solana ? { SOLANA_RPC_URL: solana.rpcUrl, SOLANA_CLUSTER: "localnet" } : {}),
      SECRET_KEY: opts.secretKey ?? randomBytes(32).toString("hex"),
    };
    return {
      databaseUrl,
      chains: anvils.map((a) => ({ chainId: a.chainId, rpcUrl: a.rpcUrl })),
      deployments,
      env: serviceEnv,
      ponder,
      solana,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
