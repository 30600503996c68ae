import { describe, expect, it } from "vitest";
import { payoutFundingWarning } from "../modules/agents/index.js";
import { ANVIL_KEYS, LOCAL_ROLES, localRoleEnv } from "./accounts.js";

describe("the local stack's roles", () => {
  it("pay agents from the wallet their shares arrive in, so npm start's withdrawals are funded", () => {
    expect(payoutFundingWarning(localRoleEnv())).toBeNull();
  });
});

describe("payoutFundingWarning", () => {
  const settler = ANVIL_KEYS[1];
  const treasury = LOCAL_ROLES.treasury.address;

  it("is silent when the payout wallet is the fee recipient and the treasury, or the settler receiving both by default", () => {
    expect(payoutFundingWarning({ SETTLER_PRIVATE_KEY: settler })).toBeNull();
    expect(
      payoutFundingWarning({ SETTLER_PRIVATE_KEY: settler, AGENT_PAYOUT_PRIVATE_KEY: ANVIL_KEYS[2], FEE_RECIPIENT: treasury }),
    ).toBeNull();
    expect(payoutFundingWarning({})).toBeNull();
  });

  it("names what the payout wallet does not receive", () => {
    // The configuration npm start had: fees to the treasury, withdrawals from the settler.
    expect(payoutFundingWarning({ SETTLER_PRIVATE_KEY: settler, FEE_RECIPIENT: treasury, TREASURY_ADDRESS: treasury })).toBe(
      `agent withdrawals are paid from ${LOCAL_ROLES.settler.address}, which does not receive the token fees (FEE_RECIPIENT) and Gas Tank fees (TREASURY_ADDRESS): keep it funded with the tokens agents withdraw and with gas, or withdrawals wait (GET /api/health says so)`,
    );
    expect(
      payoutFundingWarning({
        SETTLER_PRIVATE_KEY: settler,
        AGENT_PAYOUT_PRIVATE_KEY: ANVIL_KEYS[2],
        FEE_RECIPIENT: treasury,
        TREASURY_ADDRESS: LOCAL_ROLES.deployer.address,
      }),
    ).toMatch(/does not receive the Gas Tank fees \(TREASURY_ADDRESS\)/);
  });
});
