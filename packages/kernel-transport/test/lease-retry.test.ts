/**
 * Issue 10 #3, transport side: the lease-bound calls the protocol makes safe to repeat keep
 * retrying (capped backoff, jitter) through a kernel outage until the lease can no longer be
 * renewed; a step submission is re-sent only while the connection is refused (nothing was
 * written), for as long; an ambiguous submission failure is never re-sent.
 */
import { LeaseSuperseded, NetworkError } from "@rebuno/protocol";
import { freePort } from "@rebuno/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentTransport,
  createAgentTransport,
  LEASE_RETRY,
  retryDelayMs,
  SubmissionOutcomeUnknown,
} from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import { EXEC_ID, STEP_ID, type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A transport aimed at a port where no kernel listens yet (connections are refused). */
async function downKernel(): Promise<{
  port: number;
  t: AgentTransport;
  logger: ReturnType<typeof memoryLogger>;
}> {
  const port = await freePort();
  const logger = memoryLogger();
  const t = createAgentTransport({
    baseUrl: `http://127.0.0.1:${port}`,
    agentId: AGENT,
    secret: SECRET,
    logger,
  });
  cleanup.push(() => t.close());
  return { port, t, logger };
}

/** Start the stub kernel on `port` after `ms`. */
function comeBack(port: number, ms: number): Promise<StubKernel> {
  return new Promise((resolve, reject) =>
    setTimeout(() => {
      startStubKernel({ secret: SECRET, port }).then((k) => {
        cleanup.push(() => k.close());
        resolve(k);
      }, reject);
    }, ms),
  );
}

// Longer than the old budget (4 tries, ~1.75 s of backoff) with margin for a loaded machine.
const OUTAGE_MS = 3_000;

describe("a kernel unreachable for longer than the old retry budget", () => {
  const safeCalls: [string, (t: AgentTransport) => Promise<unknown>, string][] = [
    ["completeStep", (t) => t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 }), "/complete"],
    ["failStep", (t) => t.failStep(EXEC_ID, LEASE, STEP_ID, { error: { message: "x" } }), "/fail"],
    ["heartbeat", (t) => t.heartbeat(EXEC_ID, LEASE), "/heartbeat"],
    ["completeExecution", (t) => t.completeExecution(EXEC_ID, LEASE, { output: 1 }), `${EXEC_ID}/complete`],
    ["failExecution", (t) => t.failExecution(EXEC_ID, LEASE, "agent_error: x"), `${EXEC_ID}/fail`],
  ];
  // All five side by side: each against its own port, down for OUTAGE_MS.
  it("step complete/fail, heartbeat, execution complete/fail keep retrying and land once the kernel is back", async () => {
    await Promise.all(
      safeCalls.map(async ([name, call, suffix]) => {
        const { port, t, logger } = await downKernel();
        const started = Date.now();
        const back = comeBack(port, OUTAGE_MS);
        await call(t);
        const kernel = await back;
        expect(Date.now() - started, name).toBeGreaterThanOrEqual(OUTAGE_MS);
        expect(kernel.count("POST", suffix), name).toBe(1);
        // The old budget gave up with a NetworkError after attempt 4; this one went past it.
        expect(
          logger.lines.some((l) => l.message.includes("(attempt 4)")),
          name,
        ).toBe(true);
      }),
    );
  });

  it("a step submission refused before sending is re-sent until the kernel is back, and sent once", async () => {
    const { port, t } = await downKernel();
    const back = comeBack(port, OUTAGE_MS);
    const decision = await t.submitStep(EXEC_ID, LEASE, { kind: "tool_call", target: "charge", args: {} });
    expect(decision).toMatchObject({ decision: "proceed", stepId: STEP_ID });
    expect((await back).count("POST", "/steps")).toBe(1);
  });

  it("stops at once when the bound signal aborts (lease lost or dispatch superseded)", async () => {
    const { t } = await downKernel();
    const lease = new AbortController();
    const pending = t.withSignal(lease.signal).completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 });
    setTimeout(() => lease.abort(new LeaseSuperseded("lease presumed lost")), 1_000);
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseSuperseded);
  });

  it("without a bound signal, gives up after the lease period (the lease cannot outlive it)", async () => {
    const { t } = await downKernel();
    const short = { ...LEASE, timeoutMs: 1_500 };
    const started = Date.now();
    const err = await t.completeStep(EXEC_ID, short, STEP_ID, { result: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(Date.now() - started).toBeLessThan(short.timeoutMs + 10_000); // bounded, not endless
  });

  it("an explicit retry.attempts still caps the lease-bound calls", async () => {
    const port = await freePort();
    const t = createAgentTransport({
      baseUrl: `http://127.0.0.1:${port}`,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
      retry: { attempts: 2, baseMs: 1, maxMs: 1 },
    });
    cleanup.push(() => t.close());
    await expect(t.heartbeat(EXEC_ID, LEASE)).rejects.toBeInstanceOf(NetworkError);
  });
});

describe("an ambiguous submission failure is never re-sent, however long the lease", () => {
  it("a reset after the body was read → SubmissionOutcomeUnknown after exactly one request", async () => {
    const kernel = await startStubKernel({ secret: SECRET, route: () => ({ reset: "after-body" }) });
    cleanup.push(() => kernel.close());
    const t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
    });
    cleanup.push(() => t.close());
    const err = await t
      .submitStep(EXEC_ID, LEASE, { kind: "tool_call", target: "charge", args: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmissionOutcomeUnknown);
    await new Promise((r) => setTimeout(r, LEASE_RETRY.maxMs)); // a wrong retry would be sent by now
    expect(kernel.count("POST", "/steps")).toBe(1);
  });
});

describe("LEASE_RETRY backoff", () => {
  it("doubles from 250 ms, caps at 2 s with equal jitter, and never overflows", () => {
    expect(LEASE_RETRY.attempts).toBe(Number.POSITIVE_INFINITY);
    expect(retryDelayMs(1, LEASE_RETRY, () => 0)).toBe(125);
    expect(retryDelayMs(4, LEASE_RETRY, () => 0.999)).toBeCloseTo(1999, 0);
    expect(retryDelayMs(5000, LEASE_RETRY, () => 0)).toBe(1000);
    expect(Number.isFinite(retryDelayMs(5000, LEASE_RETRY, () => 1))).toBe(true);
  });
});
