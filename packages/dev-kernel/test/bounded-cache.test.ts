// The SQLite store's row caches are bounded by count and by the JSON text their rows hold
// (src/store/bounded-cache.ts): a row carries up to a request body of text, so a count alone would
// let 1 024 large rows hold gigabytes.
import { describe, expect, test } from "vitest";
import { BoundedCache, rowCache } from "../src/store/bounded-cache.js";
import { EXECUTIONS } from "../src/store/sqlite-rows.js";
import type { ExecutionRow } from "../src/store/types.js";

describe("BoundedCache", () => {
  test("forgets its oldest entries beyond LIMIT; a re-set entry becomes the newest", () => {
    const cache = new BoundedCache<number>();
    for (let i = 0; i <= BoundedCache.LIMIT; i++) cache.set(`k${i}`, i);
    expect(cache.size).toBe(BoundedCache.LIMIT);
    expect(cache.has("k0")).toBe(false);
    cache.set("k1", 1); // now the newest: k2 goes next
    cache.set("extra", 0);
    expect([cache.has("k1"), cache.has("k2")]).toEqual([true, false]);
  });

  test("with a weight: evicts the oldest until the total fits; a value heavier than the whole budget is not kept", () => {
    const cache = new BoundedCache<string>((v) => v.length, 10);
    cache.set("a", "xxxx");
    cache.set("b", "xxxx");
    cache.set("c", "xxxx"); // 12 > 10: a goes
    expect([...cache.keys()]).toEqual(["b", "c"]);
    cache.set("b", "x"); // replacing b subtracts its old weight: 1 + 4
    cache.set("d", "xxxx"); // 9
    expect([...cache.keys()]).toEqual(["c", "b", "d"]);
    cache.delete("c");
    cache.set("e", "xxxxx"); // 1 + 4 + 5 = 10: all fit
    expect([...cache.keys()]).toEqual(["b", "d", "e"]);
    cache.set("huge", "x".repeat(11));
    expect(cache.size).toBe(0);
    cache.clear();
    cache.set("f", "x".repeat(10));
    expect([...cache.keys()]).toEqual(["f"]);
  });

  test("a row cache weighs the JSON texts of its rows: large executions push the others out", () => {
    const cache = rowCache(EXECUTIONS);
    const row = (id: string, chars: number): ExecutionRow =>
      ({
        id,
        agentId: "a",
        inputJson: `"${"x".repeat(chars)}"`,
        status: "pending",
        createdAt: 0,
        updatedAt: 0,
      }) as ExecutionRow;
    for (let i = 0; i < 100; i++) cache.set(`small${i}`, row(`small${i}`, 10));
    expect(cache.size).toBe(100);
    // Inputs of a little over 1 Mi characters fit the 4 Mi budget three at a time, oldest out first.
    for (let i = 0; i < 5; i++) cache.set(`large${i}`, row(`large${i}`, 1024 * 1024));
    expect([...cache.keys()].filter((k) => k.startsWith("large"))).toEqual(["large2", "large3", "large4"]);
    expect([...cache.keys()].some((k) => k.startsWith("small"))).toBe(false);
    cache.set("missing", null); // "known not to exist" weighs nothing
    expect(cache.get("missing")).toBeNull();
  });
});
