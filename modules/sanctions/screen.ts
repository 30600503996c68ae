import { zeroAddress } from "viem";
import type { ActiveChain } from "../../chains/runtime.js";
import type { AppDeps } from "../../core/deps.js";
import { firstLine } from "../../core/log.js";
import type { PaymentRow } from "../payments/index.js";
import { bridgePayers, nativePaymentSenders, tokenPaymentSenders, type Senders } from "./senders.js";
import { sourcesFor, SourceUnavailable } from "./sources.js";

// Sanctions screening before money moves (docs/sanctions.md). The settler screens a payment's senders before
// `paid -> deploying_wallet` (modules/settlement/reserve.ts) and again just before it signs the sweep of a
// `deploying_wallet` or `withdraw_request` payment (modules/settlement/send.ts), and the senders of a recovery of
// unexpected funds before it signs it (modules/settlement/recover.ts, modules/sanctions/recovery.ts); the vault sweeper
// screens a group's deposits before sweeping (modules/vault/sweep.ts, modules/sanctions/vault.ts). What a result
// leads to is admit.ts's (payments) and recovery.ts's.

type Deps = Pick<AppDeps, "db" | "config" | "clients" | "now">;

export type Screening =
  /** No source flags a sender (or nothing to screen: no source configured, every sender released by the operator). */
  | { status: "clear"; screened: string[] }
  /** `address` (lowercase) is flagged by `source` (`oracle:0x…` or `list:<path>`). */
  | { status: "sanctioned"; address: string; source: string; kind: "oracle" | "list" }
  /** No source flags a sender, but one could not answer. */
  | { status: "unavailable"; reason: string }
  /** No source flags a known sender, but some native coin's sender could not be identified (or its history read). */
  | { status: "unidentified"; reason: string };

/** What each address's screening says: flagged by the first source that flags it; else unavailable if a source failed. */
const EVM_ADDRESS = /^0x[0-9a-f]{40}$/;

export async function screenAddresses(deps: Deps, chain: ActiveChain, addresses: string[]): Promise<Map<string, Screening>> {
  const unique = [...new Set(addresses.map((a) => a.toLowerCase()))];
  const out = new Map<string, Screening>(unique.map((a) => [a, { status: "clear", screened: [a] }]));
  if (!unique.length) return out;
  const failures: string[] = [];
  for (const source of sourcesFor(deps, chain)) {
    // An on-chain oracle screens EVM addresses; a Solana payer of a cross-chain order is screened by the address lists.
    const open = unique.filter((a) => out.get(a)!.status !== "sanctioned" && (source.kind !== "oracle" || EVM_ADDRESS.test(a)));
    if (!open.length) break;
    try {
      for (const a of await source.check(open)) out.set(a, { status: "sanctioned", address: a, source: source.name, kind: source.kind });
    } catch (e) {
      if (!(e instanceof SourceUnavailable)) throw e;
      failures.push(e.message);
    }
  }
  if (failures.length)
    for (const a of unique) if (out.get(a)!.status !== "sanctioned") out.set(a, { status: "unavailable", reason: failures.join("; ") });
  return out;
}

/**
 * A subject's screening from its senders': the first flagged sender; else unavailable if any is; else unidentified
 * if some coin has no identified sender (`unidentified`: what could not be attributed); else clear.
 */
export function combine(senders: string[], byAddress: Map<string, Screening>, unidentified: string[] = []): Screening {
  const results = senders.map((a) => byAddress.get(a.toLowerCase())!);
  return (
    results.find((r) => r.status === "sanctioned") ??
    results.find((r) => r.status === "unavailable") ??
    (unidentified.length
      ? { status: "unidentified", reason: `sender not identified: ${unidentified.join("; ")}` }
      : { status: "clear", screened: senders.map((a) => a.toLowerCase()) })
  );
}

/**
 * What the operator released for each subject (docs/sanctions.md, `release`): the addresses of the released holds of
 * its payment (a released address is not screened again for that payment, its recoveries included; other senders
 * are), and whether it accepted the subject's unidentified native senders (a released hold with the zero address:
 * the native-coin search is skipped for that subject).
 */
export type Released = { addresses: Set<string>; unidentified: boolean };

export async function releasedFor(deps: Pick<AppDeps, "db">, subjects: { paymentId: string; recoveryId?: string }[]): Promise<Released[]> {
  if (!subjects.length) return [];
  const { rows } = await deps.db.pool.query<{ payment_id: string; recovery_id: string | null; subject: string; address: string }>(
    `SELECT payment_id, recovery_id, subject, address FROM sanctions_holds WHERE payment_id = ANY($1::uuid[]) AND status = 'released'`,
    [[...new Set(subjects.map((s) => s.paymentId))]],
  );
  return subjects.map((s) => {
    const own = rows.filter((r) => r.payment_id === s.paymentId);
    return {
      addresses: new Set(own.filter((r) => r.address !== zeroAddress).map((r) => r.address)),
      unidentified: own.some((r) => r.address === zeroAddress && (s.recoveryId ? r.recovery_id === s.recoveryId : r.subject === "payment")),
    };
  });
}

/**
 * The screening of each payment (keyed by id): its senders (modules/sanctions/senders.ts), less the addresses the
 * operator released for it, against the chain's sources. A native payment whose senders cannot all be identified (or
 * whose history cannot be read) is `unidentified` unless the operator accepted that. Never throws for an RPC failure.
 */
export async function screenPayments(deps: Deps, chain: ActiveChain, payments: PaymentRow[]): Promise<Map<string, Screening>> {
  const out = new Map<string, Screening>();
  if (!payments.length) return out;
  if (!sourcesFor(deps, chain).length) {
    for (const p of payments) out.set(p.id, { status: "clear", screened: [] });
    return out;
  }
  const released = await releasedFor(
    deps,
    payments.map((p) => ({ paymentId: p.id })),
  );
  const found = await tokenPaymentSenders(deps, chain, payments);
  const payers = await bridgePayers(
    deps,
    payments.map((p) => p.id),
  );
  const senders = new Map<string, Senders>();
  for (const [i, p] of payments.entries()) {
    let own = found.get(p.id);
    if (!own && p.token_address.toLowerCase() === zeroAddress) {
      if (released[i]!.unidentified) own = { senders: [], unidentified: [] };
      else
        try {
          own = await nativePaymentSenders(deps, chain, p);
        } catch (e) {
          own = { senders: [], unidentified: [`senders not readable: ${firstLine(e)}`] };
        }
    }
    const all = [...(own?.senders ?? []), ...(payers.get(p.id) ?? [])].filter((a) => !released[i]!.addresses.has(a));
    senders.set(p.id, { senders: [...new Set(all)], unidentified: released[i]!.unidentified ? [] : (own?.unidentified ?? []) });
  }
  const byAddress = await screenAddresses(
    deps,
    chain,
    [...senders.values()].flatMap((s) => s.senders),
  );
  for (const [id, s] of senders) out.set(id, combine(s.senders, byAddress, s.unidentified));
  return out;
}
