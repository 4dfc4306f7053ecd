/**
 * Crash mid-tool, for real: the agent runs in a child process serving on loopback, is killed with
 * SIGKILL while a tool body runs, and a fresh process receives the kernel's redelivery after the
 * lease expires. safe_to_retry re-runs the body; at_most_once becomes indeterminate (ToolError).
 */
import { fileURLToPath } from "node:url";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { type AgentProcess, ProcessGroup, startAgentProcess } from "@rebuno/test-kit";
import { afterEach, describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/crash-agent.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url));
const SECRET = "crash-secret-0123456789abcdef";

const children = new ProcessGroup();
let kernel: DevKernel | undefined;

afterEach(async () => {
  await children.killAll();
  await kernel?.close();
  kernel = undefined;
});

function startAgent(kernelUrl: string, mode: string, hang: boolean): Promise<AgentProcess> {
  return startAgentProcess({
    fixture,
    tsconfig,
    env: { REBUNO_URL: kernelUrl, REBUNO_AGENT_SECRET: SECRET, TOOL_MODE: mode, HANG: hang ? "1" : "0" },
    group: children,
    timeoutMs: 20_000,
  });
}

async function crashAndRedeliver(mode: "safe_to_retry" | "at_most_once") {
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
  const first = await startAgent(kernelUrl, mode, true);
  kernel.registerAgent({ id: "crashy", webhookUrl: first.url, secret: SECRET });
  const client = new Client({ baseUrl: kernelUrl, apiKey: "" });
  const created = await client.create("crashy", {});
  await first.process.waitForLine("STARTED 1");
  // The replacement process is up (and registered) before the crash, as a second replica would be.
  const second = await startAgent(kernelUrl, mode, false);
  kernel.registerAgent({ id: "crashy", webhookUrl: second.url, secret: SECRET });
  await first.process.kill();
  const done = await client.waitForTerminal(created.id, { timeoutMs: 25_000, pollMs: 50 });
  const steps = await client.listSteps(created.id);
  return { done, steps, second };
}

describe("crash mid-tool (child process, SIGKILL, lease-expiry redelivery)", () => {
  it("safe_to_retry: the redelivered attempt runs the body again and completes", async () => {
    const { done, steps, second } = await crashAndRedeliver("safe_to_retry");
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ done: 1, pid: second.process.child.pid });
    expect(second.process.lines).toContain("STARTED 1");
    expect(steps.map((s) => [s.target, s.status])).toEqual([["effect_safe", "succeeded"]]);
  }, 40_000);

  it("at_most_once: the orphan becomes indeterminate; the body never runs again", async () => {
    const { done, steps, second } = await crashAndRedeliver("at_most_once");
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe(
      "tool_error: effect_once: outcome unknown: this may already have taken effect. Check the state before continuing.",
    );
    expect(second.process.lines).not.toContain("STARTED 1");
    expect(second.process.lines).toContain(
      `TOOL_ERROR ${JSON.stringify({
        reason: "indeterminate",
        toolId: "effect_once",
        failure: "outcome unknown: this may already have taken effect. Check the state before continuing.",
      })}`,
    );
    expect(steps.map((s) => [s.target, s.status])).toEqual([["effect_once", "failed"]]);
  }, 40_000);
});
