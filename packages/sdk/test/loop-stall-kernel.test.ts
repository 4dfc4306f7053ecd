/**
 * Issue: the event-loop stall warning was unreliable (armed late, lost on a histogram reset, or
 * lost when the run ended before the report timer). A tool that busy-waits 300 ms while its lease
 * is held must give exactly one warning naming the tool, the execution and the measured block,
 * every time: 5 rounds with the kernel in process (the run can finish in microtasks right after
 * the block) and 3 over loopback HTTP, plus one round with other executions' steps in progress.
 * Prints the warning latency (end of the block → warning logged).
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, Toolbox, tool } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const SECRET = "stall-secret-0123456789abcdef";
const BLOCK_MS = 300;

interface Warning {
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
  readonly at: number;
}

const warnings: Warning[] = [];
let blockEndedAt = 0;
const latencies: number[] = [];

class Work extends Toolbox {
  @tool("busy_wait") async busyWait() {
    const until = performance.now() + BLOCK_MS;
    while (performance.now() < until) {
      // A synchronous tool body holding the event loop.
    }
    blockEndedAt = performance.now();
    return "done";
  }

  @tool("sleepy", { input: z.object({ ms: z.number() }) }) async sleepy(args: { ms: number }) {
    await new Promise((resolve) => setTimeout(resolve, args.ms));
    return "slept";
  }
}

const work = new Work();
const logger = {
  warn: (message: string, fields?: Record<string, unknown>) =>
    warnings.push({ message, fields, at: performance.now() }),
  error: () => {},
};

let kernel: DevKernel | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await kernel?.close();
  kernel = undefined;
});

const agentHandler = async (input: { sleep?: number }) =>
  input.sleep === undefined ? work.busyWait() : work.sleepy({ ms: input.sleep });

const stallWarningsFor = (executionId: string) =>
  warnings.filter(
    (w) => w.message.includes("event loop was blocked") && w.fields?.executionId === executionId,
  );

async function runRound(client: Client, label: string): Promise<Warning> {
  const from = warnings.length;
  const created = await client.create("staller", {});
  const done = await client.waitForTerminal(created.id, { timeoutMs: 20_000, pollMs: 20 });
  expect(done.status).toBe("completed");
  // The warning is written by then (in process) or within a few timer turns (HTTP).
  for (let i = 0; i < 100 && stallWarningsFor(created.id).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 150)); // a duplicate would show up by now
  // Only the block of the tool is asserted on: a busy CI machine may add stalls of its own (a
  // descheduled process looks the same), which are printed, not counted.
  const mine = stallWarningsFor(created.id).filter((w) => w.fields?.step === "busy_wait");
  const others = warnings
    .slice(from)
    .filter((w) => w.message.includes("event loop was blocked") && !mine.includes(w));
  if (others.length > 0)
    console.log(
      `${label}: unrelated stalls on this machine: ${others.map((o) => JSON.stringify(o.fields)).join(", ")}`,
    );
  expect(mine, label).toHaveLength(1);
  const w = mine[0] as Warning;
  expect(w.fields?.step, label).toBe("busy_wait");
  expect(w.message).toContain('step "busy_wait"');
  expect(w.message).toContain(created.id);
  expect(w.fields?.blockedMs as number, label).toBeGreaterThanOrEqual(BLOCK_MS - 30);
  latencies.push(w.at - blockEndedAt);
  return w;
}

describe("event-loop stall warning against the dev kernel", () => {
  it("refuses a threshold that is not a positive number", () => {
    const base = { secret: SECRET, baseUrl: "http://127.0.0.1:9", env: {} };
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new Agent("x", () => 1, { ...base, loopStallWarnMs: bad })).toThrow(/loopStallWarnMs/);
    }
    expect(new Agent("x", () => 1, { ...base, loopStallWarnMs: false }).id).toBe("x");
  });

  it("warns exactly once per 300 ms block, naming tool, execution and block (in process, 5 rounds)", async () => {
    let agent!: Agent<{ sleep?: number }, string>;
    kernel = await startDevKernel({ dispatch: { pollMs: 10, fetch: (request) => agent.fetch(request) } });
    const k = kernel;
    const kernelFetch: typeof fetch = (input, init) => k.fetch(new Request(input, init));
    agent = new Agent("staller", agentHandler, {
      secret: SECRET,
      baseUrl: "http://kernel.test",
      fetch: kernelFetch,
      env: {},
      logger,
    });
    closers.push(() => agent.close());
    kernel.registerAgent({ id: "staller", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    const client = new Client({ baseUrl: "http://kernel.test", fetch: kernelFetch, apiKey: "" });
    for (let round = 1; round <= 5; round++) await runRound(client, `in-process round ${round}`);
  }, 120_000);

  it("warns exactly once per block over loopback HTTP (3 rounds), and once with other runs in progress", async () => {
    kernel = await startDevKernel({ dispatch: { pollMs: 10 } });
    const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
    const agent = new Agent("staller", agentHandler, { secret: SECRET, baseUrl, env: {}, logger });
    const server = await agent.serve({ port: 0 });
    closers.push(() => server.close());
    kernel.registerAgent({ id: "staller", webhookUrl: server.url, secret: SECRET });
    const client = new Client({ baseUrl, apiKey: "" });
    for (let round = 1; round <= 3; round++) await runRound(client, `loopback round ${round}`);

    // Two executions wait in a tool (their steps are in progress) while a third one blocks.
    const sleepers = await Promise.all([
      client.create("staller", { sleep: 1500 }),
      client.create("staller", { sleep: 1500 }),
    ]);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const steps = await Promise.all(sleepers.map((s) => client.listSteps(s.id)));
      if (steps.every((list) => list.some((st) => st.status === "executing"))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const blamed = await runRound(client, "with other runs in progress");
    for (const s of sleepers) {
      // The same stall is not reported a second time for a run that was only waiting.
      const sameStall = stallWarningsFor(s.id).filter((w) => Math.abs(w.at - blamed.at) < 50);
      expect(sameStall, "a waiting run is not blamed").toHaveLength(0);
      expect((await client.waitForTerminal(s.id, { timeoutMs: 20_000, pollMs: 20 })).status).toBe(
        "completed",
      );
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(
      `stall warning latency (end of block → warning), ${sorted.length} rounds: ` +
        `median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`,
    );
  }, 120_000);
});
