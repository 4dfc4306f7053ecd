/**
 * Delivery faults at the agent's webhook endpoint, against the real dev kernel and a real SDK
 * agent: the endpoint is down (connection refused) while the kernel dispatches, then comes back
 * (the kernel backs off and redelivers; the run completes, its body once); and the endpoint stays
 * down (the kernel's attempts are exhausted and the execution fails with the recorded cause).
 * Two agents race one execution: the first is partitioned mid at_most_once body, the kernel
 * redelivers to the second; the first's stale writes are refused and its webhook, replayed late and
 * out of order, runs nothing. Duplicates are proven by packages/sdk/test/delivery.test.ts.
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { createAgentTransport } from "@rebuno/kernel-transport";
import { KernelError, LeaseSuperseded, ToolError } from "@rebuno/protocol";
import { Agent, defineTool, execution } from "@rebuno/sdk";
import { freePort } from "@rebuno/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { recordFault } from "./lib/results.js";

const SECRET = "delivery-faults-secret-0123456789";
const quiet = { warn: () => {}, error: () => {} };
let kernel: DevKernel | undefined;
let agent: Agent | undefined;
let rival: Agent | undefined;
afterEach(async () => {
  await rival?.close();
  await agent?.close();
  rival = undefined;
  await kernel?.close();
  agent = kernel = undefined;
});

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
      test: "verify/faults/delivery.test.ts",
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
    const causes = failed.map(
      (e) => e.payload as { error_class?: unknown; error?: unknown; next_attempt_at?: unknown },
    );
    recordFault({
      id: "delivery-endpoint-down-for-good",
      group: "Outages",
      fault: `agent webhook endpoint refusing connections for good (maxAttempts ${maxAttempts})`,
      promise:
        "dispatch exhausted after the configured attempts; the execution fails with reason dispatch_exhausted and each failed delivery is an event with its cause",
      test: "verify/faults/delivery.test.ts",
      counts: {
        status: done.status,
        reason: done.failureReason ?? "",
        failedDeliveryEvents: failed.length,
        lastCause: `${String(causes.at(-1)?.error_class)}: ${String(causes.at(-1)?.error)}`,
        eventTypes: [...new Set(events.map((e) => e.type))].join(" "),
      },
    });
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("dispatch_exhausted");
    expect(failed).toHaveLength(maxAttempts);
    // Each failed delivery names why (a class and a sentence), so an operator can tell a refused
    // connection from a 5xx; only the last one has no next attempt.
    for (const cause of causes) {
      expect(typeof cause.error_class).toBe("string");
      expect(typeof cause.error).toBe("string");
    }
    expect(causes.map((c) => c.next_attempt_at === undefined)).toEqual([false, false, true]);
  });
});

describe("two agents racing one execution", () => {
  it("the superseded attempt's writes are refused by the kernel; the at_most_once body runs once", async () => {
    let bodyRuns = 0;
    let releaseFirst!: () => void;
    const firstGate = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstLease: { dispatchId: string; attempt: number } | undefined;
    const once = defineTool({
      name: "charge",
      input: { type: "object" },
      idempotency: "at_most_once",
      execute: async () => {
        bodyRuns++;
        const ctx = execution();
        if (ctx.dispatchAttempt === 1) await firstGate;
        return `charged by attempt ${ctx.dispatchAttempt}`;
      },
    });
    const handler = async () => {
      const ctx = execution();
      if (ctx.dispatchAttempt === 1) firstLease = { dispatchId: ctx.dispatchId, attempt: 1 };
      try {
        return await once({});
      } catch (error) {
        // The newer attempt finds the older attempt's at_most_once step in doubt: it reconciles
        // (here: reports it) instead of running the body again.
        if (ToolError.isInstance(error)) return `in doubt: ${error.message}`;
        throw error;
      }
    };
    const urls: string[] = [];
    let firstWebhook: { body: string; signature: string } | undefined;
    kernel = await startDevKernel({
      dispatch: {
        leaseTimeoutSeconds: 1,
        pollMs: 10,
        reapIntervalMs: 50,
        maxAttempts: 5,
        // Attempt 1 goes to the first agent, later attempts to its rival (over real sockets).
        fetch: async (request) => {
          const text = await request.clone().text();
          const body = JSON.parse(text) as { dispatch_attempt: number };
          if (body.dispatch_attempt === 1) {
            firstWebhook = { body: text, signature: request.headers.get("rebuno-signature") ?? "" };
          }
          const target = urls[body.dispatch_attempt === 1 ? 0 : 1]!;
          return fetch(new Request(target, request));
        },
      },
    });
    const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
    // The first agent's heartbeats are lost (a partition): its lease expires mid-body.
    const partitioned: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.headers.get("rebuno-dispatch-attempt") === "1" && request.url.endsWith("/heartbeat")) {
        throw new TypeError("fetch failed");
      }
      return fetch(request);
    };
    agent = new Agent("racer", handler, { secret: SECRET, baseUrl: url, fetch: partitioned, logger: quiet });
    rival = new Agent("racer", handler, { secret: SECRET, baseUrl: url, logger: quiet });
    urls.push((await agent.serve({ host: "127.0.0.1", port: 0 })).url);
    urls.push((await rival.serve({ host: "127.0.0.1", port: 0 })).url);
    kernel.registerAgent({ id: "racer", webhookUrl: urls[0]!, secret: SECRET });
    const client = new Client({ baseUrl: url });
    const { id } = await client.create("racer", {});
    const done = await client.waitForTerminal(id, { timeoutMs: 60_000 });
    // The stale attempt writes with its old lease: the kernel refuses each write.
    const stale = createAgentTransport({
      baseUrl: url,
      agentId: "racer",
      secret: SECRET,
      retry: { attempts: 1 },
    });
    const lease = { dispatchId: firstLease!.dispatchId, attempt: 1, timeoutMs: 1000 };
    const refusals = await Promise.all([
      stale.completeExecution(id, lease, { output: "stale" }).then(
        () => "accepted",
        (e: unknown) => (KernelError.isInstance(e) ? `${e.name} (${e.status})` : String(e)),
      ),
      stale.heartbeat(id, lease).then(
        () => "accepted",
        (e: unknown) => (LeaseSuperseded.isInstance(e) ? "LeaseSuperseded" : String(e)),
      ),
    ]);
    releaseFirst();
    await agent.join();
    // Reordered and late: attempt 1's webhook reaches the rival after attempt 2 finished.
    const late = await fetch(urls[1]!, {
      method: "POST",
      headers: { "content-type": "application/json", "rebuno-signature": firstWebhook!.signature },
      body: firstWebhook!.body,
    });
    const lateAnswer = `${late.status} ${JSON.stringify(await late.json())}`;
    await rival.join();
    const after = await client.get(id);
    recordFault({
      id: "delivery-racing-agents",
      group: "Delivery",
      fault:
        "two agents (separate servers) racing one execution: the first partitioned mid at_most_once body, the kernel redelivers to the second; attempt 1's webhook replayed late, after attempt 2",
      promise:
        "the superseded attempt's writes are refused by the kernel (typed: Terminated or LeaseSuperseded); the late, reordered webhook is acknowledged and runs nothing; the at_most_once body runs once; the execution ends once",
      test: "verify/faults/delivery.test.ts",
      counts: {
        status: done.status,
        output: String(done.output),
        bodyRuns,
        staleWrites: refusals.join(" "),
        lateWebhook: lateAnswer,
      },
    });
    expect(done.status).toBe("completed");
    // Completing is refused as terminal (the newer attempt already completed it) or superseded.
    expect(refusals[0]).toMatch(/^(Terminated|LeaseSuperseded)/);
    expect(refusals[1]).toBe("LeaseSuperseded");
    expect(late.status).toBe(200);
    expect(bodyRuns).toBe(1);
    expect(after.status).toBe("completed");
    expect(after.output).toEqual(done.output);
  });
});
