import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("loadConfig: bridge cancel limits", () => {
  it("bounds the execution fee in USD (default 5); the old one-value ceiling is refused at start, naming its replacements", () => {
    expect(loadConfig({}).BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD).toBe("5");
    expect(loadConfig({ BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD: "0.25" }).BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD).toBe("0.25");
    expect(() => loadConfig({ BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD: "five" })).toThrow(/must be a decimal number of USD/);
    expect(() => loadConfig({ BRIDGE_CANCEL_MAX_VALUE_WEI: "50000000000000000" })).toThrow(
      "BRIDGE_CANCEL_MAX_VALUE_WEI was replaced: a cancel now carries deBridge's messaging fee read on chain plus at most " +
        "BRIDGE_CANCEL_MAX_EXECUTION_FEE_USD (default 5); BRIDGE_CANCEL_MAX_VALUE_WEI_<chainId> sets a ceiling per chain",
    );
  });
});
