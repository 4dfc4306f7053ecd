/**
 * offload() inside a tool keeps the lease alive: the dev kernel's lease is 1 s, the offloaded
 * computation takes 2.5 s, and heartbeats keep flowing from the main thread the whole time, so
 * the dispatch is never reclaimed.
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

it("heartbeats keep flowing while a tool crunches on a worker for longer than the lease", async () => {
  const heartbeats: number[] = [];
  const reports = new Reports();
  kernel = await startDevKernel({
    dispatch: {
      leaseTimeoutSeconds: 1,
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
    async () => ({ report: await reports.build({ ms: 2500 }), attempt: execution().dispatchAttempt }),
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
  // One attempt: the lease never expired although the work took 2.5 leases.
  expect(done.output).toEqual({ report: { spun: 2500, x: true }, attempt: 1 });
  // Every ~333 ms (lease / 3) during 2.5 s of crunching.
  expect(heartbeats.length).toBeGreaterThanOrEqual(5);
  const gaps = heartbeats.slice(1).map((t, i) => t - (heartbeats[i] as number));
  expect(Math.max(...gaps)).toBeLessThan(1000);
});
