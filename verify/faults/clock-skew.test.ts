/**
 * Clock skew between agent and kernel. Agent requests are signed with `Rebuno-Timestamp`; the
 * kernel refuses timestamps more than 300 s from its own clock (either side) with 401 and a message
 * that names the cause, and the transport surfaces that as a typed `UnauthorizedError` at the call
 * site. An Agent whose first kernel call (the execution read) is refused logs that error and leaves
 * the dispatch (it neither hangs nor runs the handler). Inside the window, skew is harmless.
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { createAgentTransport } from "@rebuno/kernel-transport";
import { SIGNATURE_CLOCK_WINDOW_SECONDS, UnauthorizedError } from "@rebuno/protocol";
import { Agent, defineTool } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { recordFault } from "./lib/results.js";

const SECRET = "clock-skew-secret-0123456789abcd";
const WAIT_MS = 30_000;
let kernel: DevKernel | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  await kernel?.close();
  agent = kernel = undefined;
});

const echo = defineTool({
  name: "echo",
  input: { type: "object", properties: { v: { type: "number" } }, required: ["v"] },
  execute: async (a: { v: number }) => a.v,
});

/** A dev kernel whose clock is `skewSeconds` ahead of the agent's (negative: behind). */
async function skewedKernel(skewSeconds: number): Promise<string> {
  kernel = await startDevKernel({
    clock: () => Date.now() + skewSeconds * 1000,
    dispatch: { pollMs: 20, maxAttempts: 1 },
  });
  return kernel.listen({ host: "127.0.0.1", port: 0 });
}

/** Bounded wait: a hang fails the test instead of stalling the suite. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: nothing after ${WAIT_MS} ms`)), WAIT_MS).unref(),
    ),
  ]);
}

interface Outcome {
  readonly handlerRan: boolean;
  readonly value?: unknown;
  readonly logged?: string;
}

/** Run one execution whose handler calls one tool, under `skewSeconds` of kernel clock skew. */
async function runAgentWithSkew(skewSeconds: number): Promise<Outcome> {
  const url = await skewedKernel(skewSeconds);
  let settle!: (outcome: Outcome) => void;
  const settled = new Promise<Outcome>((resolve) => {
    settle = resolve;
  });
  const onLog = (message: string, fields?: Record<string, unknown>) =>
    settle({ handlerRan: false, logged: `${message} ${String(fields?.error ?? "")}` });
  agent = new Agent(
    "skewed",
    async () => {
      try {
        settle({ handlerRan: true, value: await echo({ v: 7 }) });
      } catch (error) {
        settle({ handlerRan: true, value: error });
      }
      return null;
    },
    { secret: SECRET, baseUrl: url, logger: { warn: onLog, error: onLog } },
  );
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel!.registerAgent({ id: "skewed", webhookUrl: served.url, secret: SECRET });
  await new Client({ baseUrl: url }).create("skewed", {});
  return within(settled, `agent under ${skewSeconds} s skew`);
}

const results: Record<string, string> = {};
const beyond = SIGNATURE_CLOCK_WINDOW_SECONDS + 60;
const inside = SIGNATURE_CLOCK_WINDOW_SECONDS - 60;

describe("clock skew between agent and kernel", () => {
  it.each([
    ["kernel ahead", beyond],
    ["kernel behind", -beyond],
  ])("%s by more than the window: a typed 401 that names the timestamp window", async (name, skew) => {
    const url = await skewedKernel(skew);
    kernel!.registerAgent({ id: "skewed", webhookUrl: "http://127.0.0.1:9/unused", secret: SECRET });
    const { id } = await new Client({ baseUrl: url }).create("skewed", {});
    const transport = createAgentTransport({ baseUrl: url, agentId: "skewed", secret: SECRET });
    const error = await transport.getExecution(id).then(
      () => undefined,
      (e: unknown) => e,
    );
    results[name] = UnauthorizedError.isInstance(error)
      ? `UnauthorizedError ${error.status}: ${error.message}`
      : String(error);
    expect(UnauthorizedError.isInstance(error)).toBe(true);
    const e = error as UnauthorizedError;
    expect(e.status).toBe(401);
    expect(e.message).toMatch(/request timestamp outside the allowed window/);
  });

  it.each([
    ["kernel ahead", beyond],
    ["kernel behind", -beyond],
  ])("%s by more than the window: the agent logs the 401 and never runs the handler", async (name, skew) => {
    const outcome = await runAgentWithSkew(skew);
    results[`${name} (agent)`] = outcome.handlerRan ? "handler ran" : "logged 401, handler not run";
    expect(outcome.handlerRan).toBe(false);
    expect(outcome.logged).toMatch(/timestamp outside the allowed window/);
  });

  it.each([
    ["kernel ahead", inside],
    ["kernel behind", -inside],
  ])("%s inside the window: the call succeeds", async (name, skew) => {
    const outcome = await runAgentWithSkew(skew);
    results[`${name} (inside)`] = String(outcome.value);
    expect(outcome.handlerRan).toBe(true);
    expect(outcome.value).toBe(7);
  });

  it("records the row", () => {
    recordFault({
      id: "clock-skew",
      group: "Time",
      fault: `agent/kernel clock skew of ±${beyond} s and ±${inside} s`,
      promise: `beyond the ${SIGNATURE_CLOCK_WINDOW_SECONDS} s window: typed UnauthorizedError (401) naming the timestamp window, the agent logs it and runs nothing; inside: no effect`,
      test: "verify/faults/clock-skew.test.ts",
      counts: {
        cases: Object.keys(results).length,
        typed401: Object.values(results).filter((r) => r.startsWith("UnauthorizedError 401")).length,
        agentRefused: Object.values(results).filter((r) => r.startsWith("logged 401")).length,
        insideOk: Object.values(results).filter((r) => r === "7").length,
      },
    });
    expect(Object.keys(results)).toHaveLength(6);
  });
});
