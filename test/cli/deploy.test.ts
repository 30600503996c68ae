import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPublicClient, http, keccak256, type Address, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { priceOracleAbi } from "../../abis/PriceOracle.js";
import { walletFactoryAbi } from "../../abis/WalletFactory.js";
import { CREATE2_DEPLOYER, deploy, type DeployOptions } from "../../cli/deploy/index.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { ANVIL_KEYS } from "../../local/accounts.js";

// `npm run cli -- deploy` on fresh Anvils with mainnet chain ids, nothing deployed: the contracts go through the CREATE2
// deployment proxy (placed where the node lacks it), at the same addresses on both chains; a second run changes
// nothing; what is found is checked (another code at the address is refused); what the deployer can no longer do is
// left for the owner; the key is never a flag.
vi.setConfig({ testTimeout: 60_000 });

const deployer = privateKeyToAccount(ANVIL_KEYS[0]);
const owner = privateKeyToAccount(generatePrivateKey()).address;
const pusher = privateKeyToAccount(generatePrivateKey()).address;
const settler = privateKeyToAccount(ANVIL_KEYS[1]).address;
const feeRecipient = privateKeyToAccount(ANVIL_KEYS[2]).address;

let polygon: Anvil;
let base: Anvil;
let dir: string;
let file: string;
beforeAll(async () => {
  [polygon, base] = await Promise.all([startAnvil({ chainId: 137 }), startAnvil({ chainId: 8453 })]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "deploy-"));
  file = path.join(dir, "deployments.json");
  // Base's node here without the proxy (as a chain where it was never sent): deploy places it, on an Anvil.
  await client(base).request({ method: "anvil_setCode" as any, params: [CREATE2_DEPLOYER, "0x"] as any });
});
afterAll(async () => {
  await polygon?.stop();
  await base?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const client = (a: Anvil) => createPublicClient({ transport: http(a.rpcUrl) }) as PublicClient;
const opts = (a: Anvil, extra: Partial<DeployOptions> = {}): DeployOptions => ({
  chainId: a.chainId,
  rpcUrl: a.rpcUrl,
  account: deployer,
  owner,
  settler,
  feeRecipient,
  deploymentsFile: file,
  send: true,
  ...extra,
});
const txCount = async (a: Anvil) => client(a).getTransactionCount({ address: deployer.address });

describe("deploy", () => {
  it("a dry run sends nothing and says what it would do", async () => {
    const r = await deploy(opts(polygon, { send: false }));
    expect(r.changed).toBe(false);
    expect(r.steps.map((s) => [s.what, s.status])).toEqual([
      ["CREATE2 deployment proxy", "ok"],
      ["WalletFactory", "todo"],
      ["settler", "todo"],
      ["fee recipient", "todo"],
      ["factory owner", "todo"],
    ]);
    expect(await txCount(polygon)).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("places the same contracts at the same addresses on both chains, hands them over, writes the deployments file", async () => {
    const p = await deploy(opts(polygon));
    const b = await deploy(opts(base, { oracle: true, oracleOwner: pusher }));
    expect(b.steps[0]).toMatchObject({ what: "CREATE2 deployment proxy", status: "sent" });
    expect(p.deployment!.factory).toBe(b.deployment!.factory);
    expect(p.deployment!.implementation).toBe(b.deployment!.implementation);
    // Polygon has a Chainlink MATIC feed: no oracle of ours unless asked; Base got one, for the pusher's key.
    expect(p.deployment!.oracle).toBeUndefined();
    expect(b.deployment!.oracle).toMatch(/^0x/);
    for (const [a, d] of [
      [polygon, p.deployment!],
      [base, b.deployment!],
    ] as const) {
      const pub = client(a);
      const read = (functionName: string, args: unknown[] = []) =>
        pub.readContract({ address: d.factory, abi: walletFactoryAbi as any, functionName, args });
      expect(await read("owner")).toBe(owner);
      expect(await read("isSettler", [settler])).toBe(true);
      expect(await read("isFeeRecipient", [feeRecipient])).toBe(true);
      expect(await read("implementation")).toBe(d.implementation);
      // The indexer starts at the factory's block: no code the block before.
      expect(await pub.getCode({ address: d.factory, blockNumber: BigInt(d.startBlock) })).toMatch(/^0x.+/);
      expect(await pub.getCode({ address: d.factory, blockNumber: BigInt(d.startBlock - 1) })).toBeUndefined();
    }
    expect(await client(base).readContract({ address: b.deployment!.oracle!, abi: priceOracleAbi, functionName: "owner" })).toBe(pusher);
    const written = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(written.chains["137"]).toEqual(p.deployment);
    expect(written.chains["8453"]).toEqual(b.deployment);
    expect(b.env).toEqual(
      expect.arrayContaining([
        `FACTORY_ADDRESS_8453=${b.deployment!.factory}`,
        `ORACLE_ADDRESS_8453=${b.deployment!.oracle}`,
        `START_BLOCK_8453=${b.deployment!.startBlock}`,
      ]),
    );
  });

  it("run again, changes nothing: every step found in place, no transaction, the file as it was", async () => {
    const before = [await txCount(polygon), await txCount(base)];
    const text = fs.readFileSync(file, "utf8");
    for (const r of [await deploy(opts(polygon)), await deploy(opts(base, { oracle: true, oracleOwner: pusher }))]) {
      expect(r.changed).toBe(false);
      expect(r.steps.every((s) => s.status === "ok")).toBe(true);
    }
    expect([await txCount(polygon), await txCount(base)]).toEqual(before);
    expect(fs.readFileSync(file, "utf8")).toBe(text);
  });

  it("with the factory handed over, a new fee recipient is left for the owner to allow-list", async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const r = await deploy(opts(polygon, { feeRecipient: other }));
    expect(r.steps.find((s) => s.what === "fee recipient")).toEqual({
      what: "fee recipient",
      status: "owner",
      detail: `${owner} must call setFeeRecipient(${other}, true)`,
    });
    expect(r.deployment).toBeNull(); // not everything in place: the file is not rewritten
  });

  it("refuses another code at the factory's address, and a provider of another chain", async () => {
    const settler2 = privateKeyToAccount(generatePrivateKey()).address;
    const dry = await deploy(opts(polygon, { settler: settler2, send: false }));
    const address = dry.env.find((l) => l.startsWith("FACTORY_ADDRESS_137="))!.split("=")[1] as Address;
    await client(polygon).request({ method: "anvil_setCode" as any, params: [address, "0x6001600055"] as any });
    await expect(deploy(opts(polygon, { settler: settler2 }))).rejects.toThrow(
      `WalletFactory at ${address} has code hash ${keccak256("0x6001600055")}, not this release's`,
    );
    await expect(deploy(opts(polygon, { chainId: 8453 }))).rejects.toThrow(/answers for chain 137, not 8453/);
  });
});

describe("npm run cli -- deploy", () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ["--import", "tsx", path.resolve("cli/index.ts"), "deploy", ...args], {
      env: { PATH: process.env.PATH!, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
  const flags = ["--chain", "137", "--rpc", "", "--owner", owner, "--settler", settler];

  it("takes the deployer's key from the environment only", () => {
    flags[3] = polygon.rpcUrl;
    const noKey = cli(flags);
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toContain("set DEPLOYER_PRIVATE_KEY, or DEPLOYER_SIGNER_URL with DEPLOYER_ADDRESS (the key is never a flag)");
    const asFlag = cli([...flags, "--private-key", ANVIL_KEYS[0]]);
    expect(asFlag.status).toBe(1);
    expect(asFlag.stderr).toContain("Unknown option '--private-key'");
    const ok = cli(flags, { DEPLOYER_PRIVATE_KEY: ANVIL_KEYS[0] });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("ok    WalletFactory: ");
    expect(ok.stdout).toContain("Everything was already in place: nothing sent.");
  });

  it("signs with a remote signer (DEPLOYER_SIGNER_URL: eth_signTransaction) instead of a key", async () => {
    // An Anvil answers eth_signTransaction for the accounts it holds: here the chain's own node signs as the deployer.
    const arbitrum = await startAnvil({ chainId: 42161 });
    try {
      const r = cli(["--chain", "42161", "--rpc", arbitrum.rpcUrl, "--owner", owner, "--settler", settler, "--yes"], {
        DEPLOYER_SIGNER_URL: arbitrum.rpcUrl,
        DEPLOYER_ADDRESS: deployer.address,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain("sent  WalletFactory: deployed at ");
      const factory = r.stdout.match(/FACTORY_ADDRESS_42161=(0x[0-9a-fA-F]{40})/)![1] as Address;
      expect(factory).toBe(JSON.parse(fs.readFileSync(file, "utf8")).chains["137"].factory); // the same address again
      expect(await client(arbitrum).readContract({ address: factory, abi: walletFactoryAbi, functionName: "owner" })).toBe(owner);
    } finally {
      await arbitrum.stop();
    }
  });
});
