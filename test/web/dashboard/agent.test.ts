import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createAgent, findAgent } from "../../../modules/agents/index.js";
import { createMerchant } from "../../../modules/merchants/index.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { dashboardWith, FormClient, ODD_STATUS, signedIn, unescapeHtml } from "./forms.js";

// Agents in the dashboard over HTTP on the test stack (docs/agents.md): sign-up with a referral code (from the
// agent's link, or typed), the Agent screen for agent accounts only, its markup and payout address forms, a
// withdrawal with nothing to withdraw, and each agent seeing only the merchants it referred. Earnings and paid
// withdrawals on-chain are test/modules/agents/agents.test.ts's.

let svc: TestService;
let origin: string;
beforeAll(async () => {
  svc = await startTestService({ processors: false });
  origin = new URL(svc.url).origin;
});
afterAll(() => svc?.stop());

const PAGE = "/dashboard/agent";
const email = () => `m${randomUUID()}@shop.example`;
const merchantByEmail = async (address: string) =>
  (await svc.deps.db.pool.query<{ id: string; agent_id: string | null }>(`SELECT id, agent_id FROM merchants WHERE email = $1`, [address]))
    .rows[0];
const rowsOf = (html: string, testId: string) => html.match(new RegExp(`data-testid="${testId}"`, "g"))?.length ?? 0;
const navHasAgent = (html: string) => html.includes(`href="${PAGE}"`);

/** A signed-in merchant made an agent (the operator's createAgent), in `browser` (default: a new one of the service). */
async function agentSignedIn(name: string, browser?: FormClient) {
  const m = await signedIn(svc, name, { browser });
  const agent = await createAgent(svc.deps.db, m.id, { markupCapBps: 100, platformShareBps: 3000 });
  return { ...m, agent };
}

describe("sign-up with a referral code", () => {
  it("the agent's link fills the code in, and signing up with it makes the merchant referred", async () => {
    const a = await agentSignedIn("Agent Link");
    const screen = await a.browser.get(PAGE);
    const link = `${svc.deps.config.appUrl}/dashboard/signup?ref=${a.agent.referralCode}`;
    expect(unescapeHtml(screen.html)).toContain(link);

    const b = new FormClient(origin);
    const form = await b.get(`/dashboard/signup?ref=${a.agent.referralCode}`);
    expect(form.status).toBe(200);
    expect(form.html).toMatch(new RegExp(`name="referralCode"[^>]*value="${a.agent.referralCode}"`));

    const address = email();
    const up = await b.post("/dashboard/signup", {
      _csrf: FormClient.csrfOf(form.html),
      name: "Referred Shop",
      email: address,
      password: "correct horse battery",
      referralCode: a.agent.referralCode.toLowerCase(),
    });
    expect(up.status, up.html.slice(0, 300)).toBe(303);
    expect(up.location).toBe("/dashboard/api-keys");
    expect((await merchantByEmail(address))?.agent_id).toBe(a.id);
    // Without a code: not referred.
    const plain = email();
    const none = await new FormClient(origin).submit("/dashboard/signup", "/dashboard/signup", {
      name: "Plain Shop",
      email: plain,
      password: "correct horse battery",
      referralCode: "",
    });
    expect(none.status).toBe(303);
    expect((await merchantByEmail(plain))?.agent_id).toBeNull();
  });

  it("an unknown code is refused on the form, with what was typed, and creates no account", async () => {
    const address = email();
    const res = await new FormClient(origin).submit("/dashboard/signup?ref=NOSUCHCODE", "/dashboard/signup", {
      name: "Lost Shop",
      email: address,
      password: "correct horse battery",
      referralCode: "NOSUCHCODE",
    });
    expect(res.status).toBe(400);
    expect(res.html).toContain("Unknown referral code");
    expect(res.html).toContain('value="Lost Shop"');
    expect(res.html).toMatch(/name="referralCode"[^>]*value="NOSUCHCODE"/);
    expect(await merchantByEmail(address)).toBeUndefined();
  });
});

describe("the Agent screen", () => {
  it("is in the navigation of an agent and shows its terms; a non-agent gets the not-found page", async () => {
    const a = await agentSignedIn("Agent Screen");
    const page = await a.browser.get(PAGE);
    expect(page.status).toBe(200);
    expect(navHasAgent(page.html)).toBe(true);
    expect(page.html).toContain(a.agent.referralCode);
    expect(page.html).toMatch(/data-testid="agent-markup"[^>]*>0 bps/);
    expect(page.html).toContain("at most 100 bps");
    expect(page.html).toContain("30% of your referred merchants");
    expect(page.html).toContain("No earnings yet");
    expect(page.html).toContain("No withdrawals yet.");
    expect(page.html).toContain("No referred merchants yet");
    expect(navHasAgent((await a.browser.get("/dashboard/payments")).html)).toBe(true);

    const m = await signedIn(svc, "Not An Agent");
    expect(navHasAgent((await m.browser.get("/dashboard/payments")).html)).toBe(false);
    const refused = await m.browser.get(PAGE);
    expect(refused.status).toBe(404);
    expect(refused.html).toContain("Not an agent account");
    const posted = await m.browser.submit("/dashboard/payments", `${PAGE}/markup`, { markupBps: "10" });
    expect(posted.status).toBe(404);
    expect(posted.html).toContain("Not an agent account");
  });

  it("sets the markup within the cap and refuses one above it, with the module's message", async () => {
    const a = await agentSignedIn("Agent Markup");
    const above = await a.browser.submit(PAGE, `${PAGE}/markup`, { markupBps: "101" });
    expect(above.status).toBe(400);
    expect(above.html).toContain("markupBps must be a whole number of basis points between 0 and 100");
    expect(above.html).toMatch(/name="markupBps"[^>]*value="101"/);
    const junk = await a.browser.submit(PAGE, `${PAGE}/markup`, { markupBps: "1.5" });
    expect(junk.status).toBe(400);
    expect((await findAgent(svc.deps.db.pool, a.id))?.markupBps).toBe(0);

    const set = await a.browser.submit(PAGE, `${PAGE}/markup`, { markupBps: "50" });
    expect(set.status).toBe(303);
    expect(set.location).toBe(PAGE);
    const shown = await a.browser.follow(set);
    expect(shown.html).toContain("Markup set to 50 bps (0.5%) for new payments.");
    expect(shown.html).toMatch(/data-testid="agent-markup"[^>]*>50 bps/);
    expect((await findAgent(svc.deps.db.pool, a.id))?.markupBps).toBe(50);
    // The notice was a one-time flash.
    expect((await a.browser.get(PAGE)).html).not.toContain("Markup set to");
  });

  it("takes the status of a refused form from the mounting app's error mapping", async () => {
    const a = await agentSignedIn("Agent Status", dashboardWith(svc.deps));
    const above = await a.browser.submit(PAGE, `${PAGE}/markup`, { markupBps: "500" });
    expect(above.status).toBe(ODD_STATUS.invalid);
    const none = await a.browser.submit(PAGE, `${PAGE}/withdrawals`, { chainId: "1", token: "0x0", balance: "token" });
    expect(none.status).toBe(ODD_STATUS.invalid);
  });

  it("sets the payout address, checksummed, and refuses what is not an address", async () => {
    const a = await agentSignedIn("Agent Payout");
    const bad = await a.browser.submit(PAGE, `${PAGE}/payout-address`, { payoutAddress: "not an address" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("payoutAddress must be an EVM address");
    expect(bad.html).toContain('value="not an address"');

    const address = privateKeyToAccount(generatePrivateKey()).address;
    const set = await a.browser.submit(PAGE, `${PAGE}/payout-address`, { payoutAddress: address.toLowerCase() });
    expect(set.status).toBe(303);
    const shown = await a.browser.follow(set);
    expect(shown.html).toContain(`Withdrawals are now sent to ${getAddress(address)}.`);
    expect(shown.html).toMatch(new RegExp(`data-testid="agent-payout"[^>]*>${getAddress(address)}<`));
    expect((await findAgent(svc.deps.db.pool, a.id))?.payoutAddress).toBe(getAddress(address));
  });

  it("a withdrawal with nothing available is refused with the module's message and records nothing", async () => {
    const a = await agentSignedIn("Agent Withdraw");
    const chain = svc.deps.chains[0]!;
    const usdt = chain.tokens.find((t) => t.decimals === 6 && /^(USDT|USDC)/.test(t.symbol))!;
    const token = { chainId: String(chain.chainId), token: usdt.address, balance: "token" };

    const noAddress = await a.browser.submit(PAGE, `${PAGE}/withdrawals`, token);
    expect(noAddress.status).toBe(409);
    expect(noAddress.html).toContain("Set a payout address first");

    await a.browser.submit(PAGE, `${PAGE}/payout-address`, { payoutAddress: privateKeyToAccount(generatePrivateKey()).address });
    const empty = await a.browser.submit(PAGE, `${PAGE}/withdrawals`, token);
    expect(empty.status).toBe(409);
    expect(empty.html).toContain("Nothing to withdraw");
    // The USD balance, in the stablecoin picked in the form's select.
    const usd = await a.browser.submit(PAGE, `${PAGE}/withdrawals`, { stablecoin: `${chain.chainId}:${usdt.address}`, balance: "usd" });
    expect(usd.status).toBe(409);
    expect(usd.html).toContain("Nothing to withdraw");
    expect(usd.html).toContain("No withdrawals yet.");
    const { rows } = await svc.deps.db.pool.query(`SELECT count(*)::int AS n FROM agent_withdrawals WHERE agent_id = $1`, [a.id]);
    expect(rows[0].n).toBe(0);
  });

  it("shows why a withdrawal waits", async () => {
    const a = await agentSignedIn("Agent Waiting");
    const chain = svc.deps.chains[0]!;
    const why = "the payout wallet 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 holds 0 USDT, the withdrawal is 0.16";
    await svc.deps.db.pool.query(
      `INSERT INTO agent_withdrawals (agent_id, chain_id, currency, token_address, decimals, symbol, units, to_address, error, attempts, next_attempt_at)
       VALUES ($1, $2, 'usd', $3, 6, 'USDT', 160000, $4, $5, 2, now() + interval '10 seconds')`,
      [a.id, chain.chainId, chain.tokens[0]!.address, privateKeyToAccount(generatePrivateKey()).address, why],
    );
    const page = (await a.browser.get(PAGE)).html;
    expect(page).toMatch(/data-testid="withdrawal-status"[^>]*>requested</);
    expect(page).toContain(`Waiting: ${why}`);
  });

  it("lists only the agent's own referred merchants", async () => {
    const a = await agentSignedIn("Agent One");
    const b = await agentSignedIn("Agent Two");
    const tag = randomUUID().slice(0, 8);
    await createMerchant(svc.deps.db, { name: `Shop of One ${tag}`, agentId: a.id });
    await createMerchant(svc.deps.db, { name: `Shop of Two ${tag}`, agentId: b.id });

    const pageA = (await a.browser.get(PAGE)).html;
    expect(rowsOf(pageA, "referred-row")).toBe(1);
    expect(pageA).toContain(`Shop of One ${tag}`);
    expect(pageA).not.toContain(`Shop of Two ${tag}`);
    const pageB = (await b.browser.get(PAGE)).html;
    expect(rowsOf(pageB, "referred-row")).toBe(1);
    expect(pageB).toContain(`Shop of Two ${tag}`);
    expect(pageB).not.toContain(`Shop of One ${tag}`);
  });
});
