/**
 * SIGKILL of the agent at each protocol point, in both idempotency modes. The agent runs in a
 * child process behind a loopback proxy; the proxy tells the test the exact moment (the kernel has
 * answered a submission or a completion, or the agent is sending its execution completion), the
 * test kills the agent then, and a fresh agent process receives the redelivery after the lease.
 *
 * Promises: every execution completes (an at_most_once step whose outcome is unknown comes back
 * indeterminate and the agent reconciles); no at_most_once body ever runs twice; a
 * safe_to_retry body runs again only when the crash was inside it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { type AgentProcess, ProcessGroup, startAgentProcess } from "@rebuno/test-kit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type FaultProxy, type ProxyEntry, startFaultProxy } from "./lib/fault-proxy.js";
import { recordFault } from "./lib/results.js";

const fixture = fileURLToPath(new URL("./fixtures/crash-points-agent.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url));
const SECRET = "crash-points-secret-0123456789ab";
const dir = mkdtempSync(join(tmpdir(), "rebuno-crash-points-"));

type Mode = "safe_to_retry" | "at_most_once";
type Point = "after_submit" | "during_tool" | "after_complete" | "before_execution_complete";

const children = new ProcessGroup();
let kernel: DevKernel | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await children.killAll();
  await proxy?.close();
  await kernel?.close();
  proxy = kernel = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function startAgent(kernelUrl: string, mode: Mode, runsFile: string, hang: boolean): Promise<AgentProcess> {
  return startAgentProcess({
    fixture,
    tsconfig,
    env: {
      REBUNO_URL: kernelUrl,
      REBUNO_AGENT_SECRET: SECRET,
      TOOL_MODE: mode,
      RUNS_FILE: runsFile,
      HANG: hang ? "1" : "0",
    },
    group: children,
  });
}

async function crashAt(mode: Mode, point: Point) {
  kernel = await startDevKernel({
    dispatch: {
      leaseTimeoutSeconds: 1,
      maxAttempts: 10,
      pollMs: 20,
      reapIntervalMs: 100,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
    },
  });
  const kernelUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const runsFile = join(dir, `${mode}-${point}.runs`);
  writeFileSync(runsFile, "");
  const dev = kernel;
  let killed = false;
  let first: AgentProcess | undefined;
  let handOver = () => {};
  const kill = () => {
    if (killed) return;
    killed = true;
    handOver();
    first?.process.child.kill("SIGKILL");
  };
  // Which request to stop at, and how: the kernel acts and the agent never hears (blackhole), or
  // the request never leaves (hold). Only the first agent's traffic is faulted.
  const target = (e: Pick<ProxyEntry, "kind">) =>
    (point === "after_submit" && e.kind === "submit_step") ||
    (point === "after_complete" && e.kind === "complete_step") ||
    (point === "before_execution_complete" && e.kind === "complete_execution");
  proxy = await startFaultProxy({
    target: kernelUrl,
    decide: (e) =>
      killed || !target(e) ? undefined : point === "before_execution_complete" ? "hold" : "blackhole_answer",
    onAnswer: (e) => {
      if (e.fault === "blackhole_answer") kill();
    },
    onRequest: (e) => {
      if (e.fault === "hold") kill();
    },
  });
  // The replacement worker is up before the crash, as a second replica would be, and takes the
  // webhook route just before the first one is killed (as in crash-redelivery.test.ts): no
  // redelivery can go to the dead process and burn attempts, however slowly anything starts.
  const [firstAgent, second] = await Promise.all([
    startAgent(proxy.url, mode, runsFile, point === "during_tool"),
    startAgent(kernelUrl, mode, runsFile, false),
  ]);
  first = firstAgent;
  dev.registerAgent({ id: "crash-points", webhookUrl: firstAgent.url, secret: SECRET });
  const secondUrl = second.url;
  handOver = () => dev.registerAgent({ id: "crash-points", webhookUrl: secondUrl, secret: SECRET });
  const client = new Client({ baseUrl: kernelUrl });
  const created = await client.create("crash-points", {});
  if (point === "during_tool") {
    await firstAgent.process.waitForLine("STARTED ");
    kill();
  }
  await firstAgent.process.exited;
  const done = await client.waitForTerminal(created.id, { timeoutMs: 30_000, pollMs: 50 });
  const runs = readFileSync(runsFile, "utf8").split("\n").filter(Boolean).length;
  return { done, runs };
}

const POINTS: Point[] = ["after_submit", "during_tool", "after_complete", "before_execution_complete"];
const cases = (["safe_to_retry", "at_most_once"] as const).flatMap((mode) =>
  POINTS.map((point) => [mode, point] as const),
);
const outcomes: Record<string, string> = {};

describe("SIGKILL of the agent at each protocol point", () => {
  it.each(cases)(
    "%s, killed %s: completes; at_most_once never runs twice",
    async (mode, point) => {
      const { done, runs } = await crashAt(mode, point);
      outcomes[`${mode}/${point}`] = `${done.status}, body runs ${runs}`;
      expect(done.status).toBe("completed");
      const output = done.output as { n: number; reconciled: boolean };
      expect(output.n).toBe(1);
      if (mode === "at_most_once") {
        expect(runs).toBeLessThanOrEqual(1);
        // Died between the kernel's "proceed" and the end of the body: the outcome is unknown.
        expect(output.reconciled).toBe(point === "after_submit" || point === "during_tool");
      } else {
        expect(output.reconciled).toBe(false);
        // The body runs again only when the crash interrupted it (or its result was never recorded).
        expect(runs).toBe(point === "during_tool" ? 2 : 1);
      }
    },
    60_000,
  );

  afterAll(() => {
    recordFault({
      id: "crash-points",
      group: "Crashes",
      fault:
        "agent SIGKILL after submit, during the tool, after complete, before execution complete (both idempotency modes)",
      promise:
        "every execution completes; at_most_once ≤ 1 run (indeterminate → reconciled); safe_to_retry re-runs only an interrupted body",
      test: "verify/faults/crash-points.test.ts",
      counts: { cases: Object.keys(outcomes).length, ...outcomes },
    });
  });
});
