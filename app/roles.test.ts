import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEV_HASH_SECRET } from "../core/config.js";
import { checkServeConfig, formatServeCheck } from "./roles.js";

const FACTORY = "0x1000000000000000000000000000000000000001";
const KEY = `0x${"11".repeat(32)}`;
/** A complete production environment serving chain 137. */
const full = (over: Record<string, string | undefined> = {}) => ({
  DATABASE_URL: "postgres://u:p@db.example:5432/chainpay",
  HASH_SECRET: "a-real-secret",
  SECRET_KEY: "22".repeat(32),
  SETTLER_PRIVATE_KEY: KEY,
  TREASURY_ADDRESS: FACTORY,
  RPC_URL_137: "https://polygon-rpc.example",
  FACTORY_ADDRESS_137: FACTORY,
  ...over,
});

describe("checkServeConfig: roles", () => {
  it("runs every role by default", () => {
    expect(checkServeConfig(full())).toEqual({ roles: ["api", "processors", "indexer"], missing: [], invalid: [] });
  });

  it("takes a comma list, ignoring spaces and repeats", () => {
    expect(checkServeConfig(full({ ROLES: " api, processors,api " })).roles).toEqual(["api", "processors"]);
  });

  it("names an unknown role", () => {
    const c = checkServeConfig(full({ ROLES: "api,worker" }));
    expect(c.roles).toEqual(["api"]);
    expect(c.invalid).toEqual(['ROLES (unknown role "worker"; roles are api, processors, indexer)']);
  });
});

describe("checkServeConfig: what is required", () => {
  it("names every missing variable at once", () => {
    const c = checkServeConfig({ RPC_URL_137: "https://polygon-rpc.example", RPC_URL_8453: "https://base-rpc.example" });
    expect(c.missing).toEqual([
      "DATABASE_URL",
      "HASH_SECRET",
      "SECRET_KEY",
      "SETTLER_PRIVATE_KEY",
      "TREASURY_ADDRESS",
      "FACTORY_ADDRESS_137 (chain 137)",
      "FACTORY_ADDRESS_8453 (chain 8453)",
    ]);
    expect(formatServeCheck(c)).toBe(
      "Missing configuration: DATABASE_URL, HASH_SECRET, SECRET_KEY, SETTLER_PRIVATE_KEY, TREASURY_ADDRESS, FACTORY_ADDRESS_137 (chain 137), FACTORY_ADDRESS_8453 (chain 8453)",
    );
  });

  it("needs at least one chain", () => {
    expect(checkServeConfig(full({ RPC_URL_137: undefined })).missing).toEqual(["RPC_URL_<chainId> (no chain to serve)"]);
  });

  it("asks each role only for what it uses", () => {
    const bare = { DATABASE_URL: "postgres://db", RPC_URL_137: "https://rpc.example", FACTORY_ADDRESS_137: FACTORY };
    expect(checkServeConfig({ ...bare, ROLES: "indexer" }).missing).toEqual([]);
    expect(checkServeConfig({ ...bare, ROLES: "api" }).missing).toEqual(["HASH_SECRET", "SECRET_KEY", "TREASURY_ADDRESS"]);
    expect(checkServeConfig({ ...bare, ROLES: "processors" }).missing).toEqual([
      "HASH_SECRET",
      "SECRET_KEY",
      "SETTLER_PRIVATE_KEY",
      "TREASURY_ADDRESS",
    ]);
    expect(checkServeConfig({ ...bare, ROLES: "processors", SETTLER_PRIVATE_KEY: KEY, FEE_RECIPIENT: FACTORY }).missing).toEqual([
      "HASH_SECRET",
      "SECRET_KEY",
    ]);
    expect(checkServeConfig({ ROLES: "indexer", RPC_URL_137: "https://rpc.example", FACTORY_ADDRESS_137: FACTORY }).missing).toEqual([
      "DATABASE_URL",
    ]);
  });

  it("takes a remote signer instead of the settler's key, and asks for both of its settings", () => {
    const remote = full({ SETTLER_PRIVATE_KEY: undefined, SIGNER_URL: "https://signer.internal:9000", SIGNER_ADDRESS: FACTORY });
    expect(checkServeConfig(remote)).toMatchObject({ missing: [], invalid: [] });
    expect(checkServeConfig(full({ SETTLER_PRIVATE_KEY: undefined, SIGNER_URL: "https://signer.internal:9000" })).missing).toEqual([
      "SIGNER_ADDRESS",
    ]);
    expect(checkServeConfig({ ...remote, SIGNER_URL: "signer:9000", SIGNER_ADDRESS: "0x12" }).invalid).toEqual([
      "SIGNER_URL (not an http(s) URL)",
      "SIGNER_ADDRESS (not an address)",
    ]);
  });

  it("refuses a SECRET_KEY that is not 32 bytes (api and processors only)", () => {
    expect(checkServeConfig(full({ SECRET_KEY: "too-short" })).invalid).toEqual([
      "SECRET_KEY (not 32 bytes as 64 hex characters or base64)",
    ]);
    expect(checkServeConfig(full({ SECRET_KEY: "too-short", ROLES: "indexer" })).invalid).toEqual([]);
  });

  it("refuses the development HASH_SECRET", () => {
    expect(checkServeConfig(full({ HASH_SECRET: DEV_HASH_SECRET })).invalid).toEqual(["HASH_SECRET (the development default)"]);
    expect(checkServeConfig(full({ HASH_SECRET: DEV_HASH_SECRET, ROLES: "processors" })).invalid).toEqual([
      "HASH_SECRET (the development default)",
    ]);
    expect(checkServeConfig(full({ HASH_SECRET: DEV_HASH_SECRET, ROLES: "indexer" })).invalid).toEqual([]);
  });

  it("takes a factory from the deployments file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "serve-check-"));
    const file = path.join(dir, "deployments.json");
    fs.writeFileSync(file, JSON.stringify({ chains: { "137": { chainId: 137, factory: FACTORY, tokens: {}, startBlock: 5 } } }));
    try {
      expect(checkServeConfig(full({ FACTORY_ADDRESS_137: undefined, DEPLOYMENTS_FILE: file }))).toMatchObject({
        missing: [],
        invalid: [],
      });
      const c = checkServeConfig(full({ FACTORY_ADDRESS_137: undefined, DEPLOYMENTS_FILE: path.join(dir, "absent.json") }));
      expect(c.missing).toEqual(["FACTORY_ADDRESS_137 (chain 137)"]);
      expect(c.invalid).toEqual(["DEPLOYMENTS_FILE (no such file)"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("checkServeConfig: prices of a mainnet chain's native coin", () => {
  it("wants a Chainlink feed for it (the registry's, or PRICE_FEED_<chainId>_<SYMBOL>) or the price pusher, naming what is missing", () => {
    expect(checkServeConfig(full()).missing).toEqual([]); // the registry's MATIC/USD feed on 137
    const missing = [
      "PRICE_FEED_137_MATIC or PRICE_PUSHER_PRIVATE_KEY with PRICE_API_URL (chain 137: a Chainlink feed for MATIC, or the price pusher)",
    ];
    expect(checkServeConfig(full({ PRICE_FEED_137_MATIC: "none" })).missing).toEqual(missing);
    // The pusher needs a source: a key alone would push nothing.
    expect(checkServeConfig(full({ PRICE_FEED_137_MATIC: "none", PRICE_PUSHER_PRIVATE_KEY: `0x${"11".repeat(32)}` })).missing).toEqual(
      missing,
    );
    expect(
      checkServeConfig(
        full({
          PRICE_FEED_137_MATIC: "none",
          PRICE_PUSHER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
          PRICE_API_URL: "https://api.coingecko.com/api/v3",
        }),
      ).missing,
    ).toEqual([]);
    expect(checkServeConfig(full({ PRICE_FEED_137_MATIC: `${FACTORY}:60` })).missing).toEqual([]);
    // A local twin (the local stack's LOCAL_CHAINS) is priced by its deployment.
    expect(checkServeConfig(full({ PRICE_FEED_137_MATIC: "none", LOCAL_CHAINS: "137,777177" })).missing).toEqual([]);
  });
});

describe("checkServeConfig: unusable values", () => {
  it("names each broken value without printing it", () => {
    const c = checkServeConfig(
      full({
        SETTLER_PRIVATE_KEY: "0xsecret",
        FACTORY_ADDRESS_137: "0x123",
        TOKEN_ADDRESS_777177_USDT: "nope",
        START_BLOCK_137: "-1",
        RPC_URL_5: "https://goerli.example",
        RPC_URL_8453: "wss://base.example",
        APP_SCHEMA: "App",
        PORT: "http",
        SETTLER_INTERVAL_MS: "1.5",
      }),
    );
    expect(c.invalid.sort()).toEqual(
      [
        "SETTLER_PRIVATE_KEY (not a 0x-prefixed 32-byte hex key)",
        "FACTORY_ADDRESS_137 (not an address)",
        "TOKEN_ADDRESS_777177_USDT (not an address)",
        "START_BLOCK_137 (not a block number)",
        "RPC_URL_5 (chain 5 is not in the registry)",
        "RPC_URL_8453 (not a comma-separated list of http(s) URLs)",
        "APP_SCHEMA (not a lowercase SQL identifier)",
        "PORT (not a port number)",
        "SETTLER_INTERVAL_MS (not a whole number)",
      ].sort(),
    );
    expect(formatServeCheck(c)).not.toContain("0xsecret");
  });
});
