import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHAINS, chainInfo, SUPPORTED_CHAIN_IDS } from "./registry.js";
import { activeChains, findToken } from "./runtime.js";

describe("registry: the spec's networks and tokens", () => {
  it("has exactly the eight chain ids of the spec", () => {
    expect([...SUPPORTED_CHAIN_IDS].sort((a, b) => a - b)).toEqual([1, 56, 137, 8453, 42161, 777177, 777178, 11155111]);
  });

  it("lists each chain's tokens with the spec's decimals", () => {
    const table = Object.fromEntries(
      CHAINS.map((c) => [
        c.chainId,
        [c.native && `${c.native.symbol}:18`, ...c.tokens.map((t) => `${t.symbol}:${t.decimals}`)].filter(Boolean),
      ]),
    );
    expect(table).toEqual({
      1: ["ETH:18", "USDT:6", "USDC:6", "CPAY:18"],
      137: ["MATIC:18", "USDT0:6", "USDC:6"],
      56: ["BNB:18", "USDT:18", "USDC:18", "XRP:18", "TRX:6"],
      8453: ["ETH:18", "USDC:6"],
      42161: ["ETH:18", "USDT:6", "USDC:6"],
      777178: ["USDT:6", "USDC:6"],
      11155111: ["ETH:18", "USDT:6", "USDC:6"],
      777177: ["USDT:6", "USDC:6"],
    });
  });

  it("prices USDT0 as USDT on the oracle and covers only 1, 137, 56, 8453 in the price index", () => {
    expect(chainInfo(137)!.tokens.find((t) => t.symbol === "USDT0")!.oracleSymbol).toBe("USDT");
    expect(
      CHAINS.filter((c) => c.priceIndexed)
        .map((c) => c.chainId)
        .sort((a, b) => a - b),
    ).toEqual([1, 56, 137, 8453]);
  });

  it("prices every chain as EIP-1559; the operator's cap keeps the rule's type", () => {
    expect(new Set(CHAINS.map((c) => c.fees.type))).toEqual(new Set(["eip1559"]));
    expect(chainInfo(137)!.fees).toEqual({
      type: "eip1559",
      minPriorityFeeGwei: 30,
      maxFeePerGasGwei: 5_000,
      blockTimeMs: 2_000,
      replaceAfterBlocks: 5,
    });
    const [c] = activeChains({ RPC_URL_56: "http://bsc", MAX_FEE_PER_GAS_GWEI_56: "20" });
    expect(c!.fees).toMatchObject({ type: "eip1559", maxFeePerGasGwei: 20 });
  });
});

describe("runtime: which chains this process serves", () => {
  it("serves only chains with RPC_URL_<chainId>", () => {
    expect(activeChains({})).toEqual([]);
    const chains = activeChains({ RPC_URL_1: "http://eth", RPC_URL_56: "http://bsc" });
    expect(chains.map((c) => c.chainId)).toEqual([1, 56]);
    // Well-known addresses where the registry has them; the service token has none until configured.
    expect(chains[0]!.tokens.map((t) => t.symbol)).toEqual(["USDT", "USDC"]);
    expect(findToken(chains[1]!, "0x55d398326f99059ff775485246999027b3197955")?.decimals).toBe(18);
    expect(findToken(chains[0]!, "0x0000000000000000000000000000000000000000")?.symbol).toBe("ETH");
  });

  it("takes addresses from the environment first, then the deployments file", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "deployments-")), "d.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        chains: {
          "777177": {
            chainId: 777177,
            factory: "0x1000000000000000000000000000000000000001",
            tokens: { USDT: "0x2000000000000000000000000000000000000002", USDC: "0x3000000000000000000000000000000000000003" },
            startBlock: 7,
          },
        },
      }),
    );
    const [c] = activeChains({
      RPC_URL_777177: "http://local",
      DEPLOYMENTS_FILE: file,
      TOKEN_ADDRESS_777177_USDC: "0x4000000000000000000000000000000000000004",
    });
    expect(c!.factory).toBe("0x1000000000000000000000000000000000000001");
    expect(c!.startBlock).toBe(7);
    expect(c!.tokens.map((t) => [t.symbol, t.address])).toEqual([
      ["USDT", "0x2000000000000000000000000000000000000002"],
      ["USDC", "0x4000000000000000000000000000000000000004"],
    ]);
  });

  it("DLN's DlnSource and DlnDestination are the bridge defaults on its chains; the environment overrides; `none` turns one off", () => {
    const env = {
      RPC_URL_1: "http://e",
      RPC_URL_56: "http://b",
      RPC_URL_137: "http://p",
      RPC_URL_8453: "http://base",
      RPC_URL_42161: "http://a",
    };
    for (const c of activeChains(env)) {
      expect([c.chainId, c.bridgeSource, c.bridgeDestination]).toEqual([
        c.chainId,
        "0xeF4fB24aD0916217251F553c0596F8Edc630EB66",
        "0xE7351Fd770A37282b91D153Ee690B63579D6dd7f",
      ]);
    }
    const [polygon] = activeChains({
      RPC_URL_137: "http://p",
      BRIDGE_DESTINATION_ADDRESS_137: "0x5000000000000000000000000000000000000005",
      BRIDGE_SOURCE_ADDRESS_137: "none",
    });
    expect([polygon!.bridgeSource, polygon!.bridgeDestination]).toEqual([undefined, "0x5000000000000000000000000000000000000005"]);
    expect(
      activeChains({ RPC_URL_137: "http://p", BRIDGE_CANCEL_MAX_VALUE_WEI_137: "600000000000000000" })[0]!.bridgeCancelMaxValueWei,
    ).toBe(6n * 10n ** 17n);
    expect(() => activeChains({ RPC_URL_137: "http://p", BRIDGE_CANCEL_MAX_VALUE_WEI_137: "0.6" })).toThrow(
      'BRIDGE_CANCEL_MAX_VALUE_WEI_137 must be an integer number of wei, got "0.6"',
    );
    // Service chains are not DLN chains: no default.
    const [service] = activeChains({ RPC_URL_777177: "http://local", DEPLOYMENTS_FILE: "/nonexistent/deployments.json" });
    expect([service!.bridgeSource, service!.bridgeDestination]).toEqual([undefined, undefined]);
  });
});
