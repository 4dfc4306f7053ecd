import { describe, expect, it } from "vitest";
import { createRateLimiter, rateLimitKey } from "../src/index.js";

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe("createRateLimiter (token bucket)", () => {
  it("starts full: max_calls immediate takes, then refuses", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    for (let i = 0; i < 3; i++) expect(rl.take("k", 3, 60_000)).toEqual({ ok: true });
    // 0 tokens left: wait = (1 - 0) * 60000 / 3
    expect(rl.take("k", 3, 60_000)).toEqual({ ok: false, waitMs: 20_000 });
  });

  it("refills continuously at max_calls / window", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    rl.take("k", 2, 1000);
    rl.take("k", 2, 1000);
    clock.advance(250); // +0.5 token
    expect(rl.take("k", 2, 1000)).toEqual({ ok: false, waitMs: 250 }); // (1 - 0.5) * 1000 / 2
    clock.advance(250); // 1 token
    expect(rl.take("k", 2, 1000)).toEqual({ ok: true });
    expect(rl.take("k", 2, 1000)).toEqual({ ok: false, waitMs: 500 });
  });

  it("refused calls take nothing; capacity caps the refill", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    rl.take("k", 1, 100);
    expect(rl.take("k", 1, 100)).toEqual({ ok: false, waitMs: 100 });
    expect(rl.take("k", 1, 100)).toEqual({ ok: false, waitMs: 100 });
    clock.advance(10_000); // far longer than the window: still only 1 token
    expect(rl.take("k", 1, 100)).toEqual({ ok: true });
    expect(rl.take("k", 1, 100).ok).toBe(false);
  });

  it("keys are independent", () => {
    const rl = createRateLimiter(fakeClock().now);
    expect(rl.take("a", 1, 1000).ok).toBe(true);
    expect(rl.take("b", 1, 1000).ok).toBe(true);
    expect(rl.take("a", 1, 1000).ok).toBe(false);
  });

  it("a clock stepping backwards does not drain or overfill", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    rl.take("k", 1, 1000);
    clock.advance(-5000);
    expect(rl.take("k", 1, 1000)).toEqual({ ok: false, waitMs: 1000 });
  });

  it("a lowered max_calls applies immediately", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    expect(rl.take("k", 10, 1000).ok).toBe(true); // 9 left
    expect(rl.take("k", 1, 1000)).toEqual({ ok: true }); // clamped to 1, took it
    expect(rl.take("k", 1, 1000).ok).toBe(false);
  });

  it("sweeping idle full buckets keeps behaviour unchanged", () => {
    const clock = fakeClock();
    const rl = createRateLimiter(clock.now);
    expect(rl.take("hot", 1, 1_000_000).ok).toBe(true);
    for (let i = 0; i < 3000; i++) rl.take(`cold-${i}`, 5, 10);
    expect(rl.take("hot", 1, 1_000_000).ok).toBe(false);
  });
});

describe("rateLimitKey (docs/protocol.md §9.5)", () => {
  it("per execution, agent and global", () => {
    expect(rateLimitKey("lookups", "execution", "ex1", "ag1")).toBe("lookups:exec:ex1");
    expect(rateLimitKey("lookups", "agent", "ex1", "ag1")).toBe("lookups:agent:ag1");
    expect(rateLimitKey("lookups", "global", "ex1", "ag1")).toBe("lookups:global");
  });
});
