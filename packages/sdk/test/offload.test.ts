/** offload(): CPU-bound work on a worker thread while the event loop keeps running. */
import { offload } from "@rebuno/sdk";
import { describe, expect, it } from "vitest";

const fixture = new URL("./fixtures/crunch.mjs", import.meta.url);

describe("offload", () => {
  it("runs a self-contained function and returns its JSON result", async () => {
    const out = await offload((n: number) => {
      let h = 0;
      for (let i = 0; i < n; i++) h = (h * 31 + i) | 0;
      return { h, n };
    }, 1000);
    expect(out).toEqual({ h: expect.any(Number), n: 1000 });
  });

  it("keeps the main loop (and so heartbeat timers) running while the worker crunches", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    try {
      const out = await offload(fixture, "crunch", { ms: 1500 });
      expect(out).toEqual({ spun: 1500, x: true });
    } finally {
      clearInterval(timer);
    }
    // 1.5 s of crunching at a 50 ms cadence: a blocked loop would show ~1 tick.
    expect(ticks).toBeGreaterThan(15);
  });

  it("propagates worker errors and rejects non-JSON results", async () => {
    await expect(offload(fixture, "fails", {})).rejects.toThrow("bad range");
    await expect(offload(fixture, "notJson", {})).rejects.toThrow(/result\.when/);
    await expect(offload(fixture, "missing", {})).rejects.toThrow(/no exported function missing/);
  });

  it("stops the worker when the signal aborts", async () => {
    const controller = new AbortController();
    const pending = offload(fixture, "crunch", { ms: 10_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 100);
    const started = Date.now();
    await expect(pending).rejects.toThrow("stop");
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
