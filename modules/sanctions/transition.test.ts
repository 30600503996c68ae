import { describe, expect, it } from "vitest";
import { HOLD_MOVES, RETURN_MOVES, transitionHold, transitionReturn } from "./transition.js";

/** A client that answers the status machine's statements: the row's status, then the update, then the audit insert. */
function fakeClient(status: string) {
  const statements: { text: string; values: unknown[] }[] = [];
  return {
    statements,
    query: async (text: string, values: unknown[]) => {
      statements.push({ text, values });
      if (text.startsWith("SELECT status")) return { rows: [{ status }] };
      if (text.startsWith("UPDATE")) return { rows: [{ id: values[0], status: values[1] }] };
      return { rows: [] };
    },
  };
}

describe("sanctions moves", () => {
  it("a hold is decided once; only a rejected one's funds may still be returned", () => {
    expect(HOLD_MOVES).toEqual({
      held: ["released", "rejected", "dropped", "returned"],
      released: [],
      rejected: ["returned"],
      dropped: [],
      returned: [],
    });
  });

  it("a return: signed -> sent -> mined -> completed | reverted, dropped before it mines, re-orged back to sent", () => {
    expect(RETURN_MOVES).toEqual({
      signed: ["sent", "mined", "dropped"],
      sent: ["mined", "dropped"],
      mined: ["sent", "reverted", "completed"],
      completed: [],
      reverted: [],
      dropped: [],
    });
  });

  it("a hold's move writes status, resolved_at and its audit row in sanctions_hold_events", async () => {
    const c = fakeClient("held");
    const at = new Date(5_000);
    const row = await transitionHold(c as never, "h1", {
      from: ["held"],
      to: "rejected",
      set: { resolvedAt: at },
      reason: "r",
      now: 5_000,
    });
    expect(row).toEqual({ id: "h1", status: "rejected" });
    // The same columns as before: the status and resolved_at (sanctions_holds has no updated_at).
    expect(c.statements[1]!.text.startsWith("UPDATE sanctions_holds ")).toBe(true);
    expect(c.statements[1]!.text).toContain(`"resolved_at" = $3 WHERE id = $1`);
    expect(c.statements[1]!.text).not.toContain("updated_at");
    expect(c.statements[1]!.values).toEqual(["h1", "rejected", at]);
    expect(c.statements[2]!.text).toMatch(/^INSERT INTO sanctions_hold_events \(hold_id, from_status, to_status/);
    expect(c.statements[2]!.values.slice(0, 4)).toEqual(["h1", "held", "rejected", "r"]);
  });

  it("an illegal move throws; a row in another status than `from` is left alone", async () => {
    await expect(transitionHold(fakeClient("released") as never, "h", { from: ["released"], to: "returned", now: 0 })).rejects.toThrow(
      "illegal sanctions_holds transition released -> returned",
    );
    await expect(transitionReturn(fakeClient("completed") as never, "r", { from: ["completed"], to: "sent", now: 0 })).rejects.toThrow(
      "illegal sanctions_returns transition completed -> sent",
    );
    const c = fakeClient("sent");
    expect(await transitionReturn(c as never, "r", { from: ["signed"], to: "sent", now: 0 })).toBeNull();
    expect(c.statements).toHaveLength(1);
  });
});
