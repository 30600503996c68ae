import { INVALID_KEY, MAX_KEY_LENGTH } from "../../modules/idempotency/index.js";
import { IN_PROGRESS, OTHER_ENDPOINT, otherRequest } from "../../modules/idempotency/index.js";
import { fail, type Failure, type Operation } from "./operation.js";

// The `Idempotency-Key` header (api/middleware/idempotency.ts, docs/payments.md "Idempotency keys") in the OpenAPI document: a
// parameter and its failures on every POST that takes an API key.

/** Whether the operation honours the header. */
export const takesIdempotencyKey = (op: Operation) => op.method === "post" && op.auth === "key";

export const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Extension (docs/payments.md, Idempotency keys): a key of the caller's choosing for this operation. The first final response (2xx, or " +
    "4xx other than 401, 408, 409, 415 and 429) is kept for 24 hours per API key and key, with its headers; a retry with the same " +
    "key and the same body gets it again, with the header `Idempotent-Replayed: true`. The same key with another body or " +
    "endpoint is 409; while the first request still runs, a second one is 409 with `Retry-After: 1`. After a 5xx the key stays " +
    "bound to the request: its retry runs again (a payment the first attempt created is returned, not created twice).",
  schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: "^[\\x20-\\x7e]+$" },
  example: "5f0c6a1e-8e0b-4c36-9d4e-2f7b8a1c9d10",
};

export const IDEMPOTENCY_FAILURES: Failure[] = [
  fail(400, INVALID_KEY),
  fail(409, otherRequest("body")),
  fail(409, OTHER_ENDPOINT),
  fail(409, IN_PROGRESS),
];
