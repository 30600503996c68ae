import {
  AMOUNT_MESSAGE,
  AMOUNTS_MESSAGE,
  BPS_MESSAGE,
  CHAIN_MESSAGE,
  DUPLICATE_TOKEN,
  NOT_AN_OBJECT,
  precisionMessage,
  TOKEN_MESSAGE,
  TOO_MANY_AMOUNTS,
  UNSUPPORTED_NETWORK,
  UNSUPPORTED_TOKEN,
} from "../../modules/merchants/index.js";
import { BAD_JSON, fail, NOT_JSON, TOO_LARGE, UNAUTHORIZED, type Operation } from "./operation.js";

// The merchant's own settings beyond the spec (api/routes/settings.ts; docs/payments.md "Underpayment tolerance"). API key;
// plain `{error}` bodies.

export const SETTINGS_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/v1/settings/underpayment-tolerance",
    tag: "Extensions",
    summary: "The underpayment tolerance",
    description:
      "How short a payment may arrive and still count as paid: `bps` of the amount due and/or an absolute amount per chain and token (the larger applies). Default `{bps: 0, amounts: []}`: the full amount is due, as the specification has it.",
    auth: "key",
    extension: true,
    responses: [{ status: 200, description: "The setting", schema: "UnderpaymentTolerance" }],
    errors: { shape: "plain", list: [UNAUTHORIZED] },
  },
  {
    method: "put",
    path: "/v1/settings/underpayment-tolerance",
    tag: "Extensions",
    summary: "Set the underpayment tolerance",
    description:
      "Replaces the whole setting (`amounts` omitted: none). `bps` is at most 500 (5 %); an absolute amount needs a token of the chain's registry. Applies to payments created from then on: a payment keeps the tolerance it was created with. A payment accepted short records the shortfall, sent as `underpayment` in its webhooks.",
    auth: "key",
    extension: true,
    body: {
      schema: "UnderpaymentToleranceRequest",
      required: true,
      example: { bps: 50, amounts: [{ chainId: "137", token: "0xc2132D05D31c914a87C6611C10748AEb04B58e8F", amount: "1" }] },
    },
    responses: [{ status: 200, description: "The setting, replaced", schema: "UnderpaymentTolerance" }],
    errors: {
      shape: "plain",
      list: [
        fail(400, NOT_AN_OBJECT),
        BAD_JSON,
        fail(400, "Unknown field: color"),
        fail(400, BPS_MESSAGE),
        fail(400, AMOUNTS_MESSAGE),
        fail(400, TOO_MANY_AMOUNTS),
        fail(400, CHAIN_MESSAGE),
        fail(400, TOKEN_MESSAGE),
        fail(400, AMOUNT_MESSAGE),
        fail(400, UNSUPPORTED_NETWORK),
        fail(400, UNSUPPORTED_TOKEN),
        fail(400, precisionMessage("USDT", 6)),
        fail(400, DUPLICATE_TOKEN),
        UNAUTHORIZED,
        TOO_LARGE,
        NOT_JSON,
      ],
    },
  },
];
