/**
 * Network faults between the SDK and the kernel (loopback proxy): resets before and after the
 * request reached the kernel, truncated answers, delays, 502/503 from a gateway. Seeded; the seed
 * is printed and `FAULT_SEED=<n>` replays the same plan.
 *
 * Promises checked:
 * - a step submission is never re-sent by the transport after an ambiguous failure (the same
 *   dispatch attempt never sends the same submission twice once one copy may have landed);
 * - calls the protocol makes safe to repeat (step complete/fail, heartbeats, execution completion)
 *   are retried and land;
 * - no at_most_once body runs twice; every execution ends as the protocol promises (completed, or
 *   completed after reconciling an `indeterminate` at_most_once step).
 */
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { ToolError } from "@rebuno/protocol";
import { Agent, defineTool } from "@rebuno/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { type Fault, type FaultProxy, faultSeed, seededRandom, startFaultProxy } from "./lib/fault-proxy.js";
import { recordFault } from "./lib/results.js";

const SECRET = "network-faults-secret-0123456789";
const EXECUTIONS = 24;
const STEPS = 3;
const MAX_ATTEMPTS = 20;
/** Per execution; each one costs a lease expiry (2 s) and one of the MAX_ATTEMPTS deliveries. */
const MAX_ATTEMPT_ENDING_FAULTS = 6;
const quiet = { warn: () => {}, error: () => {} };

const AMBIGUOUS: readonly Fault[] = [
  "reset_before_forward",
  "reset_after_forward",
  "truncate_response",
  "status_502",
];
const ALL: readonly Fault[] = [...AMBIGUOUS, "delay", "status_503"];

let kernel: DevKernel | undefined;
let proxy: FaultProxy | undefined;
let agent: { close(): Promise<void> } | undefined;
afterEach(async () => {
  await agent?.close();
  await proxy?.close();
  await kernel?.close();
  agent = proxy = kernel = undefined;
});

describe("network faults between agent and kernel", () => {
  it("never re-sends an ambiguous submission, retries safe calls, runs at_most_once bodies once", async () => {
    const seed = faultSeed();
    console.log(`network faults: FAULT_SEED=${seed}`);
    const random = seededRandom(seed);
    kernel = await startDevKernel({
      dispatch: {
        leaseTimeoutSeconds: 2,
        pollMs: 20,
        reapIntervalMs: 100,
        backoffBaseMs: 50,
        maxAttempts: MAX_ATTEMPTS,
      },
    });
    const kernelUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
    let injected = 0;
    const perRoute = new Map<string, number>();
    const attemptEnding = new Map<string, number>(); // submit path (one per execution) → count
    const faultProxy = await startFaultProxy({
      target: kernelUrl,
      delayMs: 200,
      decide: (req) => {
        if (req.kind === "read" || req.kind === "other") return undefined;
        // Bounded: at most 2 faults in a row on one route of one execution, ≤ 25% of requests.
        const key = `${req.kind} ${req.path}`;
        const streak = perRoute.get(key) ?? 0;
        if (streak >= 2 || random() >= 0.25) {
          perRoute.set(key, 0);
          return undefined;
        }
        const fault = ALL[Math.floor(random() * ALL.length)]!;
        // A failed submission (anything but a delay) ends the dispatch attempt, and the kernel caps
        // attempts (maxAttempts, lease expiries included), so an unbounded plan can exhaust an
        // execution by chance (about 1 run in 10 did at 24 executions). Capping the attempt-ending
        // faults per execution well below maxAttempts keeps the promise testable, not probable.
        if (req.kind === "submit_step" && fault !== "delay") {
          const ended = attemptEnding.get(req.path) ?? 0;
          if (ended >= MAX_ATTEMPT_ENDING_FAULTS) return undefined;
          attemptEnding.set(req.path, ended + 1);
        }
        perRoute.set(key, streak + 1);
        injected++;
        return fault;
      },
    });

    proxy = faultProxy;
    const onceRuns = new Map<string, number>();
    const safeRuns = new Map<string, number>();
    const schema = {
      type: "object",
      properties: { e: { type: "number" }, n: { type: "number" } },
      required: ["e", "n"],
    } as const;
    const safe = defineTool({
      name: "effect_safe",
      input: schema,
      execute: async (a: { e: number; n: number }) => {
        const k = `${a.e}:${a.n}`;
        safeRuns.set(k, (safeRuns.get(k) ?? 0) + 1);
        return { n: a.n };
      },
    });
    const once = defineTool({
      name: "effect_once",
      input: schema,
      idempotency: "at_most_once",
      execute: async (a: { e: number; n: number }) => {
        const k = `${a.e}:${a.n}`;
        onceRuns.set(k, (onceRuns.get(k) ?? 0) + 1);
        return { n: a.n };
      },
    });
    let reconciled = 0;
    const netAgent = new Agent(
      "net",
      async (input: { e: number }) => {
        let sum = 0;
        for (let n = 0; n < STEPS; n++) {
          sum += (await safe({ e: input.e, n })).n;
          try {
            sum += (await once({ e: input.e, n })).n;
          } catch (error) {
            // The protocol's promise for an at_most_once step whose outcome is unknown: the agent
            // is told (indeterminate) and reconciles instead of running the body again.
            if (!ToolError.isInstance(error) || !/outcome unknown|indeterminate/.test(error.message))
              throw error;
            reconciled++;
            sum += n;
          }
        }
        return { sum };
      },
      { secret: SECRET, baseUrl: faultProxy.url, logger: quiet },
    );
    agent = netAgent;
    const served = await netAgent.serve({ host: "127.0.0.1", port: 0 });
    kernel.registerAgent({ id: "net", webhookUrl: served.url, secret: SECRET });
    const client = new Client({ baseUrl: kernelUrl });
    const ids = await Promise.all(
      Array.from({ length: EXECUTIONS }, (_, e) => client.create("net", { e }).then((x) => x.id)),
    );
    const finals = await Promise.all(
      ids.map((id) => client.waitForTerminal(id, { timeoutMs: 90_000, pollMs: 50 })),
    );

    // 1. No ambiguous submission was re-sent within the same dispatch attempt.
    const resent: string[] = [];
    const seen = new Map<string, boolean>(); // key → an earlier copy may have landed
    for (const entry of faultProxy.log) {
      if (entry.kind !== "submit_step") continue;
      const key = `${entry.path} ${entry.dispatchId} ${entry.attempt} ${entry.body}`;
      if (seen.get(key) === true) resent.push(key);
      const mayHaveLanded =
        entry.fault === undefined || AMBIGUOUS.includes(entry.fault) || entry.fault === "delay";
      seen.set(key, (seen.get(key) ?? false) || mayHaveLanded);
    }
    // 2. Every faulted safe call landed: the faulted copy itself reached the kernel, or a retry did.
    //    (A retry of an execution completion that had landed gets 409 execution_terminal: fine.)
    const safeKinds = new Set(["complete_step", "fail_step", "complete_execution", "fail_execution"]);
    const landed = (e: (typeof faultProxy.log)[number]) =>
      faultProxy.log.some(
        (x) => x.path === e.path && x.body === e.body && x.status !== undefined && x.status < 300,
      );
    const faultedSafe = faultProxy.log.filter(
      (e) => safeKinds.has(e.kind) && e.fault !== undefined && e.fault !== "delay",
    );
    const unlanded = faultedSafe.filter((e) => !landed(e));
    const retried = faultedSafe.filter((e) =>
      faultProxy.log.some((x) => x.seq > e.seq && x.path === e.path),
    ).length;
    const twice = [...onceRuns.entries()].filter(([, n]) => n > 1);
    const statuses = finals.map((f) => f.status);

    recordFault({
      id: "network-proxy",
      group: "Network",
      fault:
        "resets before/after the kernel, truncated answers, delays, 502/503 (≤25% of agent requests; ≤6 attempt-ending submission faults per execution, maxAttempts 20)",
      promise:
        "no submission re-sent after an ambiguous failure; safe calls retried; at_most_once ≤ 1 run; every execution completes",
      test: "verify/faults/network.test.ts",
      seed,
      counts: {
        executions: EXECUTIONS,
        requests: faultProxy.log.length,
        faultsInjected: injected,
        completed: statuses.filter((s) => s === "completed").length,
        reconciledIndeterminate: reconciled,
        resentSubmissions: resent.length,
        faultedSafeCalls: faultedSafe.length,
        retriedSafeCalls: retried,
        unlandedSafeCalls: unlanded.length,
        atMostOnceTwice: twice.length,
      },
    });
    expect(resent, `seed ${seed}`).toEqual([]);
    expect(
      unlanded.map((e) => `${e.kind} ${e.fault}`),
      `seed ${seed}`,
    ).toEqual([]);
    expect(twice, `seed ${seed}`).toEqual([]);
    expect(
      statuses.every((s) => s === "completed"),
      `seed ${seed}: ${finals.map((f) => (f.status === "completed" ? f.status : `${f.status} (${f.failureReason})`)).join(",")}`,
    ).toBe(true);
    for (const f of finals) expect(f.output).toEqual({ sum: 2 * (0 + 1 + 2) });
  }, 120_000);
});
