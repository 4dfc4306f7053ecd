/**
 * The pieces that let one transport run on every runtime: per-attempt headers that arrive as a
 * promise (what a WebCrypto signature is) on the undici engine too, and the timer-based
 * event-loop stall monitor used where node:perf_hooks is absent.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withConnectCode } from "../src/fetch-engine.js";
import { createHttpCore, isUnsentFailure } from "../src/index.js";
import { sharedLoopMonitor as timerMonitor } from "../src/loop-monitor-timer.js";
import { memoryLogger } from "./helpers/fixtures.js";
import { type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

let kernel: StubKernel;
beforeEach(async () => {
  kernel = await startStubKernel({ secret: undefined });
});
afterEach(() => kernel.close());

describe.each(["undici", "fetch"] as const)("asynchronous attempt headers over %s", (engine) => {
  const core = () =>
    createHttpCore({
      baseUrl: kernel.url,
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });

  it("sends once the headers resolve, with exactly those values", async () => {
    const c = core();
    expect(c.engine).toBe(engine);
    await c.request({
      method: "GET",
      path: "/v0/executions/x",
      attemptHeaders: async (ctx) => ({ "x-attempt": String(ctx.attempt), "x-target": ctx.target }),
    });
    expect(kernel.requests).toHaveLength(1);
    expect(kernel.requests[0]!.headers["x-attempt"]).toBe("1");
    expect(kernel.requests[0]!.headers["x-target"]).toBe("/v0/executions/x");
    await c.close();
  });

  it("a rejected header promise is the call's error, and nothing is sent", async () => {
    const c = core();
    const err = await c
      .request({
        method: "POST",
        path: "/v0/executions",
        body: "{}",
        attemptHeaders: () => Promise.reject(new ConfigurationError("no key")),
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(kernel.requests).toHaveLength(0);
    await c.close();
  });
});

describe("timer-based loop monitor (loop-monitor-timer.ts)", () => {
  it("reports a real event-loop block, and nothing once unsubscribed", async () => {
    const reports: number[] = [];
    const unsubscribe = timerMonitor.subscribe((ms) => reports.push(ms));
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      const until = performance.now() + 400;
      while (performance.now() < until) {
        // block the loop
      }
      const deadline = Date.now() + 10_000;
      while (!reports.some((ms) => ms >= 300) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(Math.max(...reports)).toBeGreaterThanOrEqual(300);
    } finally {
      unsubscribe();
    }
    const count = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reports.length).toBe(count);
  });
});

describe("connect failures known only by their message (Deno's fetch)", () => {
  // The shapes Deno 2 rejects with: TypeError("fetch failed") caused by an Error with no `code`.
  const deno = (inner: string) => new TypeError("fetch failed", { cause: new Error(inner) });

  it("a refused connection and a failed DNS lookup are unsent failures, as on Node and Bun", () => {
    const refused = deno(
      "error sending request for url (http://127.0.0.1:4/v0/executions): client error (Connect): tcp connect error: Connection refused (os error 111)",
    );
    const dns = deno(
      "error sending request for url (http://nope.invalid/): client error (Connect): dns error: failed to lookup address information: Name or service not known",
    );
    expect(isUnsentFailure(refused)).toBe(false); // what errors.ts saw before the mapping
    expect(isUnsentFailure(withConnectCode(refused))).toBe(true);
    expect(isUnsentFailure(withConnectCode(dns))).toBe(true);
    expect((withConnectCode(refused) as Error).cause).toBe(refused);
  });

  it("anything else stays as it was: ambiguous, never re-sent unless the call is idempotent", () => {
    const reset = deno(
      "error sending request for url (http://k/): connection closed before message completed",
    );
    expect(withConnectCode(reset)).toBe(reset);
    expect(isUnsentFailure(withConnectCode(reset))).toBe(false);
    const coded = Object.assign(new Error("connect ECONNRESET"), { code: "ECONNRESET" });
    expect(withConnectCode(coded)).toBe(coded);
  });
});
