/**
 * offload() inside a tool keeps the main thread free: the offloaded computation takes 2.5 s, yet
 * heartbeats keep flowing every lease / 3 the whole time and no gap between them comes near the
 * 2.5 s a blocked event loop would leave, so the dispatch is never reclaimed.
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, execution, offload, Toolbox, tool } from "@rebuno/sdk";
import { afterEach, expect, it } from "vitest";

const fixture = new URL("./fixtures/crunch.mjs", import.meta.url);
const SECRET = "offload-secret-0123456789abcdef";
const ORIGIN = "http://kernel.test";

let kernel: DevKernel | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  await kernel?.close();
});

// #region offload
class Reports extends Toolbox {
  @tool({ input: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] } })
  async build(args: { ms: number }) {
    return offload(fixture, "crunch", { ms: args.ms });
  }
}
// #endregion

/** When the crunch began and ended on the main thread, around the offloaded call. */
const crunchWindow = { start: 0, end: 0 };

it("heartbeats keep flowing while a tool crunches on a worker for longer than the lease", async () => {
  const heartbeats: number[] = [];
  const reports = new Reports();
  kernel = await startDevKernel({
    dispatch: {
      // 3 s rather than 1 s: a main-thread stall of a few hundred ms on a loaded machine must not
      // expire the lease, while a loop blocked for the whole 2.5 s crunch would still show below.
      leaseTimeoutSeconds: 3,
      pollMs: 10,
      reapIntervalMs: 50,
      fetch: (r) => (agent as Agent).fetch(r),
    },
  });
  const k = kernel;
  const kernelFetch: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    if (request.url.endsWith("/heartbeat")) heartbeats.push(Date.now());
    return k.fetch(request);
  };
  agent = new Agent(
    "reports",
    async () => {
      crunchWindow.start = Date.now();
      const report = await reports.build({ ms: 2500 });
      crunchWindow.end = Date.now();
      return { report, attempt: execution().dispatchAttempt };
    },
    {
      secret: SECRET,
      baseUrl: ORIGIN,
      fetch: kernelFetch,
      logger: { warn: () => {}, error: () => {} },
      env: {},
    },
  );
  kernel.registerAgent({ id: "reports", webhookUrl: "http://agent.test/webhook", secret: SECRET });
  const client = new Client({ baseUrl: ORIGIN, fetch: kernelFetch, apiKey: "" });
  const created = await client.create("reports", {});
  const done = await client.waitForTerminal(created.id, { timeoutMs: 15_000, pollMs: 20 });
  expect(done.status).toBe("completed");
  // One attempt: the lease never expired.
  expect(done.output).toEqual({ report: { spun: 2500, x: true }, attempt: 1 });
  // Heartbeats went out during the crunch (every ~1 s, lease / 3): an event loop blocked by the
  // work would send none from its start to its end, a gap of at least 2.5 s. The bound leaves
  // ~1 s for main-thread stalls on a loaded machine.
  const { start, end } = crunchWindow;
  expect(end - start).toBeGreaterThanOrEqual(2500);
  const marks = [start, ...heartbeats.filter((t) => t > start && t < end), end];
  expect(marks.length).toBeGreaterThanOrEqual(4);
  const gaps = marks.slice(1).map((t, i) => t - (marks[i] as number));
  expect(Math.max(...gaps)).toBeLessThan(2000);
});
