import { z } from "zod";
import { MAX_TOLERANCE_BPS } from "../../modules/merchants/index.js";
import { address, decimal } from "./schemas-common.js";

// Hand-written zod schema of the /v1/settings answers (modules/merchants/underpayment-tolerance.ts; docs/payments.md "Underpayment
// tolerance"). The request body is the module's own (underpaymentToleranceBody, in components.ts ROUTE_SCHEMAS).

export const UnderpaymentTolerance = z
  .object({
    bps: z
      .number()
      .int()
      .min(0)
      .max(MAX_TOLERANCE_BPS)
      .meta({ description: "Tolerance in basis points of the amount due, rounded down to the smallest unit", examples: [50] }),
    amounts: z
      .array(
        z.object({
          chainId: z
            .string()
            .regex(/^\d+$/)
            .meta({ description: "Network id, as a string", examples: ["137"] }),
          token: address.meta({ description: "Token address (the zero address: the native coin)" }),
          symbol: z.string().meta({ examples: ["USDT"] }),
          decimals: z.number().int(),
          amount: decimal.meta({ description: "Absolute tolerance in this token", examples: ["1"] }),
        }),
      )
      .meta({ description: "Absolute tolerances per chain and token, ordered by chain and address" }),
  })
  .meta({
    description:
      "A merchant's underpayment tolerance: a payment short by no more than the larger of the two (capped so the fees still arrive) counts as paid; fixed on each payment when it is created",
  });
