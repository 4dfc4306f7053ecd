/**
 * Webhook delivery semantics against the real dev kernel: duplicate deliveries run once, and a
 * superseded run stops without any of its writes landing.
 */

import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { webhookSignature } from "@rebuno/protocol";
import { Agent, execution, Toolbox, tool } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";

const ORIGIN = "http://kernel.test";
const SECRET = "delivery-secret-0123456789abcdef";
const quiet = { warn: () => {}, error: () => {} };

let kernel: DevKernel | undefined;
let agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
  await kernel?.close();
  kernel = undefined;
});

describe("webhook delivery", () => {
  it("runs a duplicated delivery once, also when the duplicate arrives after completion", async () => {
    let handlerRuns = 0;
    let bodyRuns = 0;
    class Once extends Toolbox {
      @tool async work() {
        bodyRuns++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return "done";
      }
    }
    const box = new Once();
    const captured: { body: string; signature: string }[] = [];
    const answers: string[] = [];
    let agent!: Agent;
    kernel = await startDevKernel({
      dispatch: {
        pollMs: 10,
        // Deliver every webhook twice, back to back, as an at-least-once network might.
        fetch: async (request) => {
          const body = await request.clone().text();
          captured.push({ body, signature: request.headers.get("rebuno-signature") ?? "" });
          const first = await agent.fetch(request);
          const second = await agent.fetch(
            new Request(request.url, { method: "POST", headers: request.headers, body }),
          );
          const ack = (await second.json()) as { status?: string };
          answers.push(`${first.status}`, `${second.status} ${ack.status}`);
          return first;
        },
      },
    });
    const k = kernel;
    const kernelFetch: typeof fetch = (input, init) => k.fetch(new Request(input, init));
    agent = new Agent(
      "dup",
      async () => {
        handlerRuns++;
        return box.work();
      },
      { secret: SECRET, baseUrl: ORIGIN, fetch: kernelFetch, logger: quiet, env: {} },
    );
    agents.push(agent);
    kernel.registerAgent({ id: "dup", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: ORIGIN, fetch: kernelFetch, apiKey: "" });
    const created = await client.create("dup", {});
    const done = await client.waitForTerminal(created.id, { timeoutMs: 10_000, pollMs: 10 });
    expect(done.status).toBe("completed");
    expect(answers.slice(0, 2)).toEqual(["200", "200 duplicate"]);
    // A late duplicate (same execution, dispatch and attempt) is acknowledged and ignored.
    const late = captured[0];
    const res = await agent.fetch(
      new Request("http://agent.test/webhook", {
        method: "POST",
        headers: { "content-type": "application/json", "rebuno-signature": late?.signature ?? "" },
        body: late?.body ?? "",
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "duplicate" });
    // A (forged-late) newer attempt for the now-completed execution is accepted but skipped (F41).
    const newer = JSON.stringify({ ...JSON.parse(late?.body ?? "{}"), dispatch_attempt: 99 });
    const skipped = await agent.fetch(
      new Request("http://agent.test/webhook", {
        method: "POST",
        headers: { "content-type": "application/json", "rebuno-signature": webhookSignature(SECRET, newer) },
        body: newer,
      }),
    );
    expect(await skipped.json()).toEqual({ status: "accepted" });
    await agent.join();
    expect(handlerRuns).toBe(1);
    expect(bodyRuns).toBe(1);
  });

  it("stops a superseded run: its signal aborts and none of its writes land", async () => {
    let releaseFirst!: () => void;
    const firstGate = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const signals: AbortSignal[] = [];
    const sentAfterRelease: string[] = [];
    let released = false;
    class Slow extends Toolbox {
      @tool async work() {
        const ctx = execution();
        signals.push(ctx.signal);
        if (ctx.dispatchAttempt === 1) {
          await firstGate;
          return "from attempt 1";
        }
        return "from attempt 2";
      }
    }
    const box = new Slow();
    let agent!: Agent;
    kernel = await startDevKernel({
      dispatch: { leaseTimeoutSeconds: 1, pollMs: 10, reapIntervalMs: 50, fetch: (r) => agent.fetch(r) },
    });
    const k = kernel;
    // Attempt 1's heartbeats are lost (a partition), so its lease expires and the kernel
    // redelivers attempt 2 to the same agent process.
    const kernelFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const attempt = request.headers.get("rebuno-dispatch-attempt");
      if (released && attempt === "1") sentAfterRelease.push(new URL(request.url).pathname);
      if (attempt === "1" && request.url.endsWith("/heartbeat")) throw new TypeError("fetch failed");
      return k.fetch(request);
    };
    agent = new Agent("sup", () => box.work(), {
      secret: SECRET,
      baseUrl: ORIGIN,
      fetch: kernelFetch,
      logger: quiet,
      env: {},
    });
    agents.push(agent);
    kernel.registerAgent({ id: "sup", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: ORIGIN, fetch: kernelFetch, apiKey: "" });
    const created = await client.create("sup", {});
    const done = await client.waitForTerminal(created.id, { timeoutMs: 15_000, pollMs: 20 });
    expect(done.status).toBe("completed");
    expect(done.output).toBe("from attempt 2");
    expect(signals).toHaveLength(2);
    expect(signals[0]?.aborted).toBe(true);
    // Let the stale body finish: its outcome must not be written (refused before sending).
    released = true;
    releaseFirst();
    await agent.join();
    expect(sentAfterRelease).toEqual([]);
    const steps = await client.listSteps(created.id);
    expect(steps.map((s) => [s.status, s.result])).toEqual([["succeeded", "from attempt 2"]]);
  });

  it("close() aborts in-flight runs and waits for them to unwind, writing nothing", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let seen: AbortSignal | undefined;
    let unwound = false;
    class Waits extends Toolbox {
      @tool async wait() {
        seen = execution().signal;
        started();
        await new Promise((resolve) => seen?.addEventListener("abort", resolve, { once: true }));
        unwound = true;
        return "never recorded";
      }
    }
    const box = new Waits();
    let agent!: Agent;
    kernel = await startDevKernel({ dispatch: { pollMs: 10, fetch: (r) => agent.fetch(r) } });
    const k = kernel;
    const kernelFetch: typeof fetch = (input, init) => k.fetch(new Request(input, init));
    agent = new Agent("closing", () => box.wait(), {
      secret: SECRET,
      baseUrl: ORIGIN,
      fetch: kernelFetch,
      logger: quiet,
      env: {},
    });
    kernel.registerAgent({ id: "closing", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: ORIGIN, fetch: kernelFetch, apiKey: "" });
    const created = await client.create("closing", {});
    await running;
    await agent.close();
    expect(seen?.aborted).toBe(true);
    expect(unwound).toBe(true);
    const [stepRow] = await client.listSteps(created.id);
    expect(stepRow?.status).toBe("executing");
    expect((await client.get(created.id)).status).toBe("running");
    // A closed agent refuses new deliveries.
    const late = JSON.stringify({
      execution_id: created.id,
      dispatch_id: "d-after-close",
      dispatch_attempt: 1,
      lease_timeout_seconds: 60,
    });
    const res = await agent.fetch(
      new Request("http://agent.test/webhook", {
        method: "POST",
        headers: { "content-type": "application/json", "rebuno-signature": webhookSignature(SECRET, late) },
        body: late,
      }),
    );
    expect(res.status).toBe(503);
    expect(agent.rejectedWebhooks.agent_closing).toBe(1);
  });
});
