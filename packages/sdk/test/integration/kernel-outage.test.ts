/**
 * Issue 10 #3: a kernel restart in the middle of work loses nothing that is finished and fails
 * nothing. The dev kernel runs as a child process (`rebuno-dev` from source) on a SQLite file; an
 * SDK agent in this process runs 60 executions of 6 tool steps each, alternating `safe_to_retry`
 * and `at_most_once` tools whose bodies count their invocations. The kernel is SIGKILLed while
 * about a third of the bodies have finished and restarted on the same port and file 1, 3 or 5 s
 * later. Every execution must complete, every body must have run exactly once (so no finished
 * result was lost and no at_most_once body ran twice), and every recorded result must be the one
 * its body returned.
 *
 * The rule this holds under: the kernel's lease must outlast the time the kernel is unreachable,
 * plus one reconnect backoff (≤ 2 s), plus the time since the last renewal (at most a heartbeat
 * interval, lease / 3) — the lease here is 2 × outage + 12 s. A submission whose answer was lost
 * has an unknown outcome: it is never re-sent, its dispatch is abandoned and redelivered once the
 * lease expires, and the redelivered attempt replays what was recorded.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@rebuno/client";
import { startDevKernel } from "@rebuno/dev-kernel";
import { Agent, Toolbox, tool } from "@rebuno/sdk";
import { freePort, type LineProcess, ProcessGroup, startRebunoDev } from "@rebuno/test-kit";
import { afterAll, describe, expect, it } from "vitest";

const SECRET = "outage-secret-0123456789abcdef";
const EXECUTIONS = 60;
const STEPS = 6;

const dirs: string[] = [];
const kernels = new ProcessGroup();

afterAll(async () => {
  await kernels.killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `rebuno-dev` from source on `port`, SQLite at `dir/k.db`; resolves once it listens. */
async function startKernel(dir: string, port: number, leaseSeconds: number): Promise<LineProcess> {
  const started = await startRebunoDev({
    config: join(dir, "dev.yaml"),
    listen: `127.0.0.1:${port}`,
    store: `sqlite:${join(dir, "k.db")}`,
    env: { REBUNO_DISPATCH_LEASE_TIMEOUT: `${leaseSeconds}s`, REBUNO_DISPATCH_MAX_ATTEMPTS: "10" },
    group: kernels,
  });
  return started.process;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  /** From the stop signal until the new kernel listened. */
  readonly unreachableMs: number;
  /** Retry warnings logged (the first three retries of a call, then every 2^n-th). */
  readonly retryWarnings: number;
  /** Highest attempt number of one call. */
  readonly maxAttempt: number;
  /** Executions that got a second dispatch attempt (a submission in doubt, abandoned). */
  readonly redelivered: number;
  /** Executions that failed (possible only after a crash; see the SIGKILL test). */
  readonly failed: readonly { readonly id: string; readonly reason: string | undefined }[];
  /** Bodies that never ran (their step was left indeterminate by a crash). */
  readonly neverRan: number;
}

async function outageScenario(outageMs: number, stop: "SIGTERM" | "SIGKILL"): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "rebuno-outage-"));
  dirs.push(dir);
  // The kernel is unreachable for the outage plus its own start-up (seconds on a loaded machine):
  // the lease must outlast that, one reconnect backoff (≤ 2 s) and the time since the last renewal.
  const leaseSeconds = (2 * outageMs) / 1000 + 12;

  // Invocations per body, keyed "<execution input>:<step>", and the value each one returned.
  const runs = new Map<string, number>();
  const returned = new Map<string, unknown>();
  let finished = 0;
  const body = async (key: string, i: number, k: number) => {
    runs.set(key, (runs.get(key) ?? 0) + 1);
    await sleep(80 + ((i * 7 + k * 13) % 5) * 40); // 80–240 ms, varied across executions
    const value = { key, at: k, twice: i * 2 };
    returned.set(key, value);
    finished++;
    return value;
  };
  const INPUT = {
    type: "object",
    properties: { i: { type: "number" }, k: { type: "number" } },
    required: ["i", "k"],
  } as const;
  class Work extends Toolbox {
    @tool("work_safe", { input: INPUT }) async safe(a: { i: number; k: number }) {
      return body(`${a.i}:${a.k}`, a.i, a.k);
    }
    @tool("work_once", { idempotency: "at_most_once", input: INPUT }) async once(a: {
      i: number;
      k: number;
    }) {
      return body(`${a.i}:${a.k}`, a.i, a.k);
    }
  }
  const work = new Work();

  let retryWarnings = 0;
  let maxAttempt = 0;
  const port = await freePort();
  const agent = new Agent(
    "outage",
    async (input: { i: number }) => {
      const results: unknown[] = [];
      for (let k = 0; k < STEPS; k++) {
        results.push(await (k % 2 === 0 ? work.safe({ i: input.i, k }) : work.once({ i: input.i, k })));
      }
      return { i: input.i, steps: results.length };
    },
    {
      secret: SECRET,
      baseUrl: `http://127.0.0.1:${port}`,
      env: {},
      logger: {
        warn: (message: string) => {
          const m = /^retrying .* \(attempt (\d+)\)$/.exec(message);
          if (m === null) return;
          retryWarnings++;
          maxAttempt = Math.max(maxAttempt, Number(m[1]));
        },
        error: () => {},
      },
    },
  );
  const server = await agent.serve({ host: "127.0.0.1", port: 0 });
  writeFileSync(
    join(dir, "dev.yaml"),
    `agents:\n  - id: outage\n    webhook_url: ${server.url}\n    secret: ${SECRET}\n`,
  );

  let kernel = await startKernel(dir, port, leaseSeconds);
  const client = new Client({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "" });
  try {
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i++) ids.push((await client.create("outage", { i })).id);

    // Kill mid-work: about a third of all bodies finished, the rest running or yet to start.
    const total = EXECUTIONS * STEPS;
    for (let n = 0; finished < total / 3; n++) {
      if (n > 3000) throw new Error(`work did not progress (${finished} of ${total} bodies finished)`);
      await sleep(10);
    }
    const killedAt = Date.now();
    await kernel.kill(stop);
    await sleep(outageMs);
    kernel = await startKernel(dir, port, leaseSeconds);
    const unreachableMs = Date.now() - killedAt;

    const done = await Promise.all(
      ids.map((id) => client.waitForTerminal(id, { timeoutMs: 60_000, pollMs: 250 })),
    );
    const failed = done
      .filter((e) => e.status !== "completed")
      .map((e) => ({ id: e.id, reason: e.failureReason ?? undefined }));

    // No body ran twice: nothing finished was redone, no at_most_once body ran again.
    const repeated = [...runs].filter(([, n]) => n !== 1);
    expect(repeated).toEqual([]);

    // Every body that finished has exactly its value recorded; a step without a result is one
    // whose body never ran (left indeterminate by a crash, its execution failed).
    let redelivered = 0;
    let neverRan = 0;
    for (const [i, id] of ids.entries()) {
      const steps = await client.listSteps(id);
      for (const s of steps) {
        if (s.status === "succeeded") {
          const key = `${i}:${(s.result as { at: number }).at}`;
          expect(s.result).toEqual(returned.get(key));
        } else {
          expect(s.status).toBe("failed");
          expect(s.target).toBe("work_once");
          neverRan++;
        }
      }
      const succeeded = steps.filter((s) => s.status === "succeeded").length;
      expect(succeeded).toBe(done[i]!.status === "completed" ? STEPS : succeeded);
      const events = await client.events(id, { limit: 1000 });
      if (events.filter((e) => e.type === "dispatch.acked").length > 1) redelivered++;
    }
    expect(returned.size).toBe(runs.size);
    return { unreachableMs, retryWarnings, maxAttempt, redelivered, failed, neverRan };
  } finally {
    await kernel.kill();
    await server.close();
    await client.close();
  }
}

// The outages run side by side (separate kernels, ports and files) to keep the wall time near
// that of the longest one.
describe.concurrent("kernel outage during 60 concurrent executions (SQLite, same port and file)", () => {
  it.each([1000, 3000, 5000])(
    "restart (SIGTERM) for %i ms: nothing fails, nothing finished is lost or run twice",
    async (ms) => {
      const outcome = await outageScenario(ms, "SIGTERM");
      process.stdout.write(`kernel-outage restart ${ms} ms: ${JSON.stringify(outcome)}\n`);
      expect(outcome.failed).toEqual([]);
      expect(outcome.neverRan).toBe(0);
      expect(outcome.unreachableMs).toBeGreaterThanOrEqual(ms);
    },
    90_000,
  );

  // A crash can land between the kernel recording a submission and the agent reading the answer:
  // that submission is in doubt, never re-sent, and its dispatch is redelivered after the lease.
  // A safe_to_retry step then runs (once: its body had not started); an at_most_once step is
  // reported indeterminate, as the protocol requires. Nothing finished is lost, nothing runs twice.
  it("crash (SIGKILL) for 3000 ms: nothing finished is lost, no body runs twice", async () => {
    const outcome = await outageScenario(3000, "SIGKILL");
    process.stdout.write(`kernel-outage crash 3000 ms: ${JSON.stringify(outcome)}\n`);
    for (const f of outcome.failed) expect(f.reason).toMatch(/^tool_error: work_once: outcome unknown/);
    expect(outcome.neverRan).toBe(outcome.failed.length);
  }, 90_000);
});

// Past the lease, a kernel call gives up with a NetworkError. That is no failure of the execution:
// the run stops heartbeating, the kernel redelivers once the lease expires, and the next attempt
// replays. (Before, the NetworkError reached the handler and the run failed the execution.)
describe("a kernel call that fails for longer than the lease", () => {
  it("leaves the execution to redelivery instead of failing it", async () => {
    let agent!: Agent;
    const kernel = await startDevKernel({
      dispatch: {
        fetch: (request) => agent.fetch(request),
        leaseTimeoutSeconds: 1,
        reapIntervalMs: 100,
        pollMs: 10,
        backoffBaseMs: 50,
        backoffMaxMs: 200,
      },
    });
    const k = kernel;
    let firstFailureAt: number | undefined;
    let failedCompletions = 0;
    // Step completions hit a dead network for 2 s (longer than the 1 s lease); heartbeats and
    // everything else get through, so the lease itself stays renewed meanwhile.
    const kernelFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (/\/steps\/[^/]+\/complete$/.test(new URL(request.url).pathname)) {
        firstFailureAt ??= Date.now();
        if (Date.now() - firstFailureAt < 2_000) {
          failedCompletions++;
          const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
          throw new TypeError("fetch failed", { cause: reset });
        }
      }
      return k.fetch(request);
    };
    let bodyRuns = 0;
    class Slow extends Toolbox {
      @tool("slow_safe", { input: { type: "object", properties: {} } }) async slow() {
        bodyRuns++;
        return { ok: true };
      }
    }
    const box = new Slow();
    agent = new Agent("flaky", async () => box.slow(), {
      secret: SECRET,
      baseUrl: "http://kernel.test",
      fetch: kernelFetch,
      logger: { warn: () => {}, error: () => {} },
      env: {},
    });
    kernel.registerAgent({ id: "flaky", webhookUrl: "http://agent.test/webhook", secret: SECRET });
    try {
      const client = new Client({
        baseUrl: "http://kernel.test",
        fetch: (request: Request) => k.fetch(request),
        apiKey: "",
      });
      const created = await client.create("flaky", {});
      const done = await client.waitForTerminal(created.id, { timeoutMs: 20_000, pollMs: 50 });
      expect([done.status, done.failureReason]).toEqual(["completed", undefined]);
      expect(failedCompletions).toBeGreaterThan(1);
      const acks = (await client.events(created.id, { limit: 1000 })).filter(
        (e) => e.type === "dispatch.acked",
      );
      expect(acks.length).toBeGreaterThanOrEqual(2); // redelivered, not failed
      // safe_to_retry: the completion never landed in attempt 1, so the body ran again.
      expect(bodyRuns).toBe(acks.length);
    } finally {
      await agent.close();
      await kernel.close();
    }
  }, 40_000);
});
