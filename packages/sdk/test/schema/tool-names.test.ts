import { describe, expect, it } from "vitest";
import {
  assignToolNames,
  collectTools,
  sanitizeToolName,
  TOOL_NAME_PATTERN,
} from "../../src/schema/index.js";
import { makeTool } from "./fixtures.js";

describe("sanitizeToolName", () => {
  it("keeps valid names and repairs invalid ones", () => {
    expect(sanitizeToolName("lookup_order-2")).toBe("lookup_order-2");
    expect(sanitizeToolName("github/list issues.v2")).toBe("github_list_issues_v2");
    expect(sanitizeToolName("...")).toBe("tool");
    expect(sanitizeToolName("9lives", { leadingLetter: true })).toBe("_9lives");
  });

  it("shortens long names with a hash so distinct names stay distinct", () => {
    const a = sanitizeToolName(`${"x".repeat(70)}a`);
    const b = sanitizeToolName(`${"x".repeat(70)}b`);
    expect(a).toHaveLength(64);
    expect(a).toMatch(TOOL_NAME_PATTERN);
    expect(a).not.toBe(b);
    expect(sanitizeToolName(`${"x".repeat(70)}a`)).toBe(a);
  });
});

describe("assignToolNames / collectTools", () => {
  it("maps names in order and detects collisions", () => {
    expect([...assignToolNames(["a", "b.c"])]).toEqual([
      ["a", "a"],
      ["b.c", "b_c"],
    ]);
    expect(() => assignToolNames(["b.c", "b_c"])).toThrow(/'b.c' and 'b_c' both become 'b_c'/);
  });

  it("accepts arrays, iterables and toolbox-like objects; refuses junk and duplicates", () => {
    const t = makeTool("t", { type: "object", properties: {} }, () => 1);
    expect(collectTools([t])).toEqual([t]);
    expect(collectTools(new Set([t]))).toEqual([t]);
    expect(collectTools({ tools: [t] })).toEqual([t]);
    expect(() => collectTools([t, t])).toThrow(/duplicate tool name 't'/);
    expect(() => collectTools([{ name: "x" }] as never)).toThrow(/at index 0/);
    expect(() => collectTools({ tools: 5 } as never)).toThrow(/iterable/);
  });
});
