import { describe, expect, it } from "vitest";
import { nestingDepth } from "./nesting.js";

describe("nestingDepth", () => {
  it("counts braces, brackets and parentheses", () => {
    expect(nestingDepth("{ payments(limit: 1) { data { id } } }")).toBe(3);
    expect(nestingDepth("{ a(x: [[[1]]]) }")).toBe(5);
    expect(nestingDepth("{ a".repeat(2000))).toBe(2000);
  });

  it("skips strings, block strings and comments", () => {
    expect(nestingDepth('{ a(x: "{{{{[[[(((") }')).toBe(2);
    expect(nestingDepth('{ a(x: "\\"{{{") }')).toBe(2);
    expect(nestingDepth('{ a(x: """ {{{{ " {{ """) }')).toBe(2);
    expect(nestingDepth("# {{{{{{\n{ a }")).toBe(1);
    // Review: an escaped \""" inside a block string does not end it (it hid the nesting that followed).
    expect(nestingDepth('{ a(x: """\\""" """, y: ' + "[".repeat(100) + "]".repeat(100) + ") }")).toBe(102);
  });
});
