import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { logger } from "../../core/log.js";
import type { PaymentRow } from "../payments/index.js";
import { holdPayment } from "./hold-payment.js";
import { screenPayments } from "./screen.js";
import { clearWaits, recordWaits } from "./waits.js";

/**
 * The gate before settlement: screens `payments` (`paid` in reserve.ts; `deploying_wallet` and `withdraw_request` in
 * send.ts, just before signing) and returns the ids that may proceed. A flagged payment is moved to `sanctioned`
 * (holdPayment). One whose screening is unavailable or unidentified waits, with a backoff (waits.ts), under
 * SANCTIONS_FAIL_MODE=closed, or proceeds with a warning under `open`.
 */
export async function admitForSettlement(deps: AppDeps, chain: ActiveChain, payments: PaymentRow[]): Promise<Set<string>> {
  const admitted = new Set<string>();
  if (!payments.length) return admitted;
  const results = await screenPayments(deps, chain, payments);
  const waiting: { p: PaymentRow; kind: "unavailable" | "unidentified"; reason: string }[] = [];
  const done: string[] = [];
  for (const p of payments) {
    const r = results.get(p.id)!;
    if (r.status === "clear") {
      admitted.add(p.id);
      done.push(p.id);
    } else if (r.status === "sanctioned") await holdPayment(deps, p, r);
    else if (deps.config.SANCTIONS_FAIL_MODE === "open") {
      logger("sanctions").warn(
        { chainId: chain.chainId, paymentId: p.id, reason: r.reason },
        `sanctions screening ${r.status}; settling anyway (SANCTIONS_FAIL_MODE=open)`,
      );
      admitted.add(p.id);
      done.push(p.id);
    } else waiting.push({ p, kind: r.status, reason: r.reason });
  }
  await clearWaits(deps.db.pool, "payment", done);
  if (waiting.length) {
    await recordWaits(
      deps,
      "payment",
      waiting.map((w) => ({ id: w.p.id, paymentId: w.p.id, chainId: chain.chainId, kind: w.kind, reason: w.reason })),
    );
    for (const kind of ["unavailable", "unidentified"] as const) {
      const some = waiting.filter((w) => w.kind === kind);
      if (some.length)
        logger("sanctions").warn(
          { chainId: chain.chainId, paymentIds: some.slice(0, 20).map((w) => w.p.id), count: some.length, reason: some[0]!.reason },
          kind === "unavailable"
            ? "sanctions screening unavailable; payments wait (SANCTIONS_FAIL_MODE=closed)"
            : "payment senders not identified; payments wait for the operator (SANCTIONS_FAIL_MODE=closed; `sanctions list`)",
        );
    }
  }
  return admitted;
}
