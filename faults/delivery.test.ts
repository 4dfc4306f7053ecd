/**
 * Delivery faults at the agent's webhook endpoint, against the real dev kernel and a real SDK
 * agent: the endpoint is down (connection refused) while the kernel dispatches, then comes back
 * (the kernel backs off and redelivers; the run completes, its body once); and the endpoint stays
 * down (the kernel's attempts are exhausted and the execution fails with the recorded cause).
 * Duplicated, late and superseded deliveries are proven by packages/sdk/test/delivery.test.ts.
 */
import { createServer } from "node:net";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, defineTool } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { recordFault } from "./lib/results.js";

const SECRET = "delivery-faults-secret-0123456789";
const quiet = { warn: () => {}, error: () => {} };
let kernel: DevKernel | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  await kernel?.close();
  agent = kernel = undefined;
});

/** A loopback port nobody listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function eventTypes(client: Client, id: string): Promise<string[]> {
  return (await client.events(id)).map((e) => e.type);
}

/** Poll until `check` holds (bounded). */
async function until(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the agent's webhook endpoint down", () => {
  it("down, then back: the kernel backs off and redelivers; the run completes and its body ran once", async () => {
    kernel = await startDevKernel({
      dispatch: { pollMs: 20, backoffBaseMs: 100, backoffMaxMs: 400, maxAttempts: 30 },
    });
    const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
    const port = await freePort();
    kernel.registerAgent({ id: "flaky", webhookUrl: `http://127.0.0.1:${port}/webhook`, secret: SECRET });
    const client = new Client({ baseUrl: url });
    const { id } = await client.create("flaky", { n: 1 });
    // Let at least two deliveries fail against the closed port.
    await until(
      async () => (await eventTypes(client, id)).filter((t) => t === "dispatch.failed").length >= 2,
      "2 failed deliveries",
    );
    let runs = 0;
    const once = defineTool({
      name: "once",
      input: { type: "object" },
      idempotency: "at_most_once",
      execute: async () => ++runs,
    });
    agent = new Agent("flaky", async () => once({}), { secret: SECRET, baseUrl: url, logger: quiet });
    await agent.serve({ host: "127.0.0.1", port });
    const done = await client.waitForTerminal(id, { timeoutMs: 60_000 });
    const types = await eventTypes(client, id);
    const failedDeliveries = types.filter((t) => t === "dispatch.failed").length;
    recordFault({
      id: "delivery-endpoint-down-then-back",
      group: "Outages",
      fault: "agent webhook endpoint refusing connections, then serving again",
      promise: "the kernel backs off and redelivers; the execution completes; an at_most_once body runs once",
      test: "faults/delivery.test.ts",
      counts: { failedDeliveries, status: done.status, bodyRuns: runs },
    });
    expect(done.status).toBe("completed");
    expect(runs).toBe(1);
    expect(failedDeliveries).toBeGreaterThanOrEqual(2);
  });

  it("down for good: dispatch is exhausted and the execution fails with the recorded cause", async () => {
    const maxAttempts = 3;
    kernel = await startDevKernel({
      dispatch: { pollMs: 20, backoffBaseMs: 50, backoffMaxMs: 100, maxAttempts },
    });
    const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
    const port = await freePort();
    kernel.registerAgent({ id: "gone", webhookUrl: `http://127.0.0.1:${port}/webhook`, secret: SECRET });
    const client = new Client({ baseUrl: url });
    const { id } = await client.create("gone", {});
    const done = await client.waitForTerminal(id, { timeoutMs: 60_000 });
    const events = await client.events(id);
    const failed = events.filter((e) => e.type === "dispatch.failed");
    const causes = failed.map((e) => JSON.stringify(e.payload));
    recordFault({
      id: "delivery-endpoint-down-for-good",
      group: "Outages",
      fault: `agent webhook endpoint refusing connections for good (maxAttempts ${maxAttempts})`,
      promise:
        "dispatch exhausted after the configured attempts; the execution fails with reason dispatch_exhausted and each failed delivery is an event with its cause",
      test: "faults/delivery.test.ts",
      counts: {
        status: done.status,
        reason: done.failureReason ?? "",
        failedDeliveryEvents: failed.length,
        eventTypes: [...new Set(events.map((e) => e.type))].join(" "),
      },
    });
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("dispatch_exhausted");
    expect(failed).toHaveLength(maxAttempts);
    // Each failed delivery names why (connection refused), so an operator can tell it from a 5xx.
    for (const cause of causes) expect(cause).toMatch(/error/i);
  });
});
