import { describe, expect, it } from "vitest";
import { checkDeliveryMove, DELIVERY_MOVES, deliveriesMoveQuery, transitionDeliveries, type DeliveryStatus } from "./transition.js";

const STATUSES: DeliveryStatus[] = ["pending", "success", "failed"];

describe("DELIVERY_MOVES", () => {
  it("names only delivery statuses, none moving to itself", () => {
    expect(Object.keys(DELIVERY_MOVES).sort()).toEqual([...STATUSES].sort());
    for (const [from, tos] of Object.entries(DELIVERY_MOVES)) {
      for (const to of tos) expect(STATUSES).toContain(to);
      expect(tos).not.toContain(from);
    }
  });

  it("allows what the code does: attempts, a deleted webhook, a manual resend", () => {
    expect(() => checkDeliveryMove(["pending", "failed"], { sql: "r.status", among: ["success", "pending", "failed"] })).not.toThrow();
    expect(() => checkDeliveryMove(["pending"], "failed")).not.toThrow();
    expect(() => checkDeliveryMove(["pending", "success", "failed"], "pending")).not.toThrow();
  });

  it("throws on an illegal move, before any statement", async () => {
    expect(() => checkDeliveryMove(["success"], "failed")).toThrow("illegal webhook_deliveries transition success -> failed");
    expect(() => checkDeliveryMove(["pending", "success"], { sql: "x", among: ["pending", "failed"] })).toThrow(/success -> failed/);
    const client = { query: () => Promise.reject(new Error("no statement expected")) };
    await expect(
      transitionDeliveries(client as never, { where: "true", from: ["success"], to: "failed", reason: "r", at: 0, params: [] }),
    ).rejects.toThrow(/illegal/);
  });
});

describe("deliveriesMoveQuery", () => {
  it("one statement: the caller's parameters first, `from` in the WHERE under the lock, the audit rows of real changes", () => {
    const { text, values } = deliveriesMoveQuery({
      where: "d.merchant_id = $1",
      from: ["pending"],
      to: "failed",
      set: "next_attempt_at = $2",
      reason: "gone",
      at: 1_000,
      params: ["m", "t"],
    });
    expect(values).toEqual(["m", "t", "failed", "gone", new Date(1_000), ["pending"], ["failed"]]);
    expect(text).toMatch(
      /SELECT d\.id AS locked_id, d\.status AS locked_status FROM webhook_deliveries d\s+WHERE \(d\.merchant_id = \$1\) AND d\.status = ANY\(\$6::text\[\]\)\s+FOR UPDATE OF d/,
    );
    expect(text).toMatch(/UPDATE webhook_deliveries d SET status = \$3::text, next_attempt_at = \$2/);
    expect(text).toMatch(/AND \$3::text = ANY\(\$7::text\[\]\)/);
    expect(text).toMatch(/INSERT INTO webhook_delivery_events .* FROM moved WHERE moved_from <> moved_to/s);
    expect(text.trim().endsWith("SELECT * FROM moved")).toBe(true);
  });

  it("a status per row: the expression and its statuses, joined sources, SQL reason, data and time", () => {
    const { text, values } = deliveriesMoveQuery({
      with: "r AS (SELECT 1)",
      using: "r",
      where: "d.id = r.id",
      from: ["pending", "failed"],
      to: { sql: "r.status", among: ["success", "pending", "failed"] },
      reason: { sql: "'attempt ' || r.attempt" },
      data: { sql: "jsonb_build_object('a', r.attempt)" },
      at: { sql: "r.at" },
      select: "SELECT moved_id FROM moved",
      params: ["[]"],
    });
    expect(values).toEqual(["[]", ["pending", "failed"], ["success", "pending", "failed"]]);
    expect(text).toMatch(/^WITH r AS \(SELECT 1\),/);
    expect(text).toMatch(/FROM webhook_deliveries d, r\s/);
    expect(text).toMatch(/FROM locked, r\s/);
    expect(text).toMatch(/SET status = \(r\.status\)/);
    expect(text).toMatch(/\('attempt ' \|\| r\.attempt\) AS moved_reason/);
    expect(text).toMatch(/\(r\.at\) AS moved_at/);
    expect(text.trim().endsWith("SELECT moved_id FROM moved")).toBe(true);
  });
});
