import { NOT_AN_AGENT } from "../../modules/agents/index.js";
import { NO_PAYOUT_ADDRESS, NOTHING_TO_WITHDRAW } from "../../modules/agents/index.js";
import { BAD_JSON, fail, NOT_JSON, TOO_LARGE, TOO_MANY, UNAUTHORIZED, type Operation } from "./operation.js";

// The agent's own account (api/routes/agent.ts; docs/agents.md): terms and balances, referred merchants, markup and
// payout address, withdrawals. API key of the agent's account; plain `{error}` bodies; one budget for every route.

const NOT_AGENT = fail(403, NOT_AN_AGENT);
const RATE_LIMIT = "60 requests a minute per merchant (every /v1/agent route together)";
const INVALID_BODY = fail(400, "Invalid request body");
const UNKNOWN_FIELD = fail(400, "Unknown field: color");

export const AGENT_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/v1/agent",
    tag: "Agents",
    summary: "The agent: terms, settings and balances",
    description:
      "Balances per chain and currency: earned as markup and as a share of platform fees, withdrawn, and available. Fees of Gas Tank payments are in the `usd` currency (chain `0`).",
    auth: "key",
    extension: true,
    responses: [{ status: 200, description: "The agent", schema: "AgentWithBalances" }],
    errors: { shape: "plain", list: [UNAUTHORIZED, NOT_AGENT, TOO_MANY] },
    rateLimit: RATE_LIMIT,
  },
  {
    method: "patch",
    path: "/v1/agent",
    tag: "Agents",
    summary: "Set the markup and the payout address",
    description:
      "Changes only the fields sent. The markup is at most the operator's cap (`markupCapBps`; the message names it) and applies to payments created from then on.",
    auth: "key",
    extension: true,
    body: {
      schema: "UpdateAgentRequest",
      required: true,
      example: { markupBps: 50, payoutAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72" },
    },
    responses: [{ status: 200, description: "The agent, updated", schema: "Agent" }],
    errors: {
      shape: "plain",
      list: [
        INVALID_BODY,
        BAD_JSON,
        UNKNOWN_FIELD,
        fail(400, "markupBps must be a whole number of basis points between 0 and 100"),
        fail(400, "payoutAddress must be an EVM address"),
        UNAUTHORIZED,
        NOT_AGENT,
        TOO_LARGE,
        NOT_JSON,
        TOO_MANY,
      ],
    },
    rateLimit: RATE_LIMIT,
  },
  {
    method: "get",
    path: "/v1/agent/merchants",
    tag: "Agents",
    summary: "Referred merchants",
    description: "The merchants the agent referred, oldest first, with their completed payments and volume since they were referred.",
    auth: "key",
    extension: true,
    responses: [{ status: 200, description: "The merchants", schema: "ReferredMerchantList" }],
    errors: { shape: "plain", list: [UNAUTHORIZED, NOT_AGENT, TOO_MANY] },
    rateLimit: RATE_LIMIT,
  },
  {
    method: "get",
    path: "/v1/agent/withdrawals",
    tag: "Agents",
    summary: "Withdrawals",
    description: "The agent's withdrawals, newest first (the latest 100).",
    auth: "key",
    extension: true,
    responses: [{ status: 200, description: "The withdrawals", schema: "AgentWithdrawalList" }],
    errors: { shape: "plain", list: [UNAUTHORIZED, NOT_AGENT, TOO_MANY] },
    rateLimit: RATE_LIMIT,
  },
  {
    method: "post",
    path: "/v1/agent/withdrawals",
    tag: "Agents",
    summary: "Withdraw a balance",
    description:
      'The whole available balance of one currency, to the payout address: `{chainId, token}` what was earned in that token on that chain; `{chainId, token, balance: "usd"}` the USD balance, paid in that chain\'s 6-decimal USDT or USDC. Sent on-chain by the service afterwards (`status` follows it). Two requests at once make one withdrawal and one 409.',
    auth: "key",
    extension: true,
    body: {
      schema: "AgentWithdrawalRequest",
      required: true,
      example: { chainId: "137", token: "0xc2132D05D31c914a87C6611C10748AEb04B58e8F" },
    },
    responses: [{ status: 201, description: "Requested", schema: "AgentWithdrawal" }],
    errors: {
      shape: "plain",
      list: [
        INVALID_BODY,
        BAD_JSON,
        UNKNOWN_FIELD,
        fail(400, "chainId must be a chain id string"),
        fail(400, "Unsupported network"),
        fail(400, "Invalid Token address format"),
        fail(400, 'balance must be "token" or "usd"'),
        fail(400, "Unsupported token"),
        fail(400, "The USD balance is paid in a 6-decimal stablecoin of the chain"),
        UNAUTHORIZED,
        NOT_AGENT,
        fail(409, NO_PAYOUT_ADDRESS),
        fail(409, NOTHING_TO_WITHDRAW),
        TOO_LARGE,
        NOT_JSON,
        TOO_MANY,
      ],
    },
    rateLimit: RATE_LIMIT,
  },
];
