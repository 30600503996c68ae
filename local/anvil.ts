import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { guardChild, stopChild } from "./child.js";
import { freePort } from "./ports.js";

const require = createRequire(import.meta.url);

/**
 * The Anvil binary: foundry's npm distribution (`@foundry-rs/anvil-linux-amd64`, the platform
 * package the `@foundry-rs/anvil` wrapper would pick; the other platforms' packages are not in the
 * registry this project installs from). `ANVIL_BIN` points at another build.
 */
export function anvilBinary(): string {
  if (process.env.ANVIL_BIN) return process.env.ANVIL_BIN;
  const pkg = require.resolve(`@foundry-rs/anvil-linux-amd64/package.json`);
  return path.join(path.dirname(pkg), "bin", "anvil");
}

export type AnvilOptions = {
  chainId: number;
  port?: number;
  /** Interval mining in seconds; Ponder stalls on automine with several chains. 0 = automine. */
  blockTime?: number;
  forkUrl?: string;
  /** Anvil's own state dump/load file, so a restarted dev stack keeps its chain. */
  stateFile?: string;
  /** Another mnemonic for its unlocked accounts (a test's remote signer holds keys no other test uses). */
  mnemonic?: string;
  /**
   * The EVM hardfork (`--hardfork`, Anvil's latest when unset). `berlin`: a chain without EIP-1559, whose blocks have no
   * base fee and whose pool refuses type-2 transactions (test/chains/fee-market.test.ts).
   */
  hardfork?: string;
};

export type Anvil = { chainId: number; port: number; rpcUrl: string; process: ChildProcess; stop(): Promise<void> };

export async function startAnvil(opts: AnvilOptions): Promise<Anvil> {
  const port = opts.port ?? (await freePort());
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(opts.chainId),
    "--silent",
    // Fixed mnemonic: deterministic accounts and contract addresses on every start.
    "--mnemonic",
    opts.mnemonic ?? "test test test test test test test test test test test junk",
    "--accounts",
    "10",
    "--balance",
    "1000000",
  ];
  if (opts.blockTime && opts.blockTime > 0) args.push("--block-time", String(opts.blockTime));
  if (opts.forkUrl) args.push("--fork-url", opts.forkUrl);
  if (opts.stateFile) args.push("--state", opts.stateFile);
  if (opts.hardfork) args.push("--hardfork", opts.hardfork);
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d.toString()));
  const rpcUrl = `http://127.0.0.1:${port}`;
  guardChild(child);
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil (chain ${opts.chainId}) exited: ${stderr}`);
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`anvil (chain ${opts.chainId}) did not start on port ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    chainId: opts.chainId,
    port,
    rpcUrl,
    process: child,
    stop: () => stopChild(child, 3000),
  };
}
