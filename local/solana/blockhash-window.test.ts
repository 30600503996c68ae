import { describe, expect, it } from "vitest";
import { BlockhashWindow } from "./blockhash-window.js";

/** A window on a fake clock: `tick(ms)` moves time, `made` lists the slots a blockhash was made for. */
function fakeWindow(opts: { slotMs?: number; size?: number; startSlot?: number } = {}) {
  let now = 1_700_000_000_000;
  const made: number[] = [];
  const w = new BlockhashWindow("hash-0", (slot) => (made.push(slot), `hash-${slot}`), { now: () => now, ...opts });
  return { w, made, tick: (ms: number) => void (now += ms) };
}

describe("BlockhashWindow", () => {
  it("derives slots from the clock, 400 ms each, and makes a blockhash only when a new slot is looked at", () => {
    const { w, made, tick } = fakeWindow();
    expect(w.slot()).toBe(0);
    tick(399);
    expect(w.latest()).toEqual({ blockhash: "hash-0", slot: 0, lastValidBlockHeight: 150 });
    tick(1);
    expect(w.slot()).toBe(1);
    tick(400 * 1000); // 1000 slots nobody looked at: one blockhash, not a thousand
    expect(w.latest()).toEqual({ blockhash: "hash-1001", slot: 1001, lastValidBlockHeight: 1151 });
    expect(made).toEqual([1, 1001]);
  });

  it("accepts a blockhash for 150 slots after the slot it was made in, then refuses it", () => {
    const { w, tick } = fakeWindow();
    tick(400);
    const { blockhash } = w.latest(); // hash-1, valid through slot 151
    expect(w.lastValidBlockHeight(blockhash)).toBe(151);
    tick(400 * 149); // slot 150
    expect(w.isRecent(blockhash)).toBe(true);
    expect(w.isRecent("hash-0")).toBe(true); // made in slot 0, valid through 150
    tick(400); // slot 151
    expect(w.isRecent(blockhash)).toBe(true);
    expect(w.isRecent("hash-0")).toBe(false);
    tick(400); // slot 152
    expect(w.isRecent(blockhash)).toBe(false);
    expect(w.lastValidBlockHeight(blockhash)).toBeUndefined();
    expect(w.isRecent(w.latest().blockhash)).toBe(true);
  });

  it("refuses a blockhash it never made", () => {
    const { w } = fakeWindow();
    expect(w.isRecent("EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k")).toBe(false);
  });

  it("keeps only the blockhashes still in the window", () => {
    const { w, tick } = fakeWindow({ size: 3 });
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      tick(400);
      seen.push(w.latest().blockhash);
    }
    // slot 10 now: made in slots 7..10 are recent (at + 3 ≥ 10)
    expect(seen.filter((h) => w.isRecent(h))).toEqual(["hash-7", "hash-8", "hash-9", "hash-10"]);
    expect((w as unknown as { made: Map<string, number> }).made.size).toBe(4);
  });

  it("moves time on with advance(), as a test or local_advanceSlots does", () => {
    const { w } = fakeWindow({ startSlot: 500 });
    const first = w.latest().blockhash;
    expect(w.advance(150)).toBe(650);
    expect(w.isRecent(first)).toBe(true);
    w.advance(1);
    expect(w.isRecent(first)).toBe(false);
    expect(w.latest().slot).toBe(651);
    expect(() => w.advance(-1)).toThrow(/whole number/);
  });

  it("never goes back when the clock does", () => {
    let now = 10_000;
    const w = new BlockhashWindow("a", (s) => `h${s}`, { now: () => now });
    now += 4000;
    expect(w.slot()).toBe(10);
    now -= 4000;
    expect(w.slot()).toBe(10);
  });
});
