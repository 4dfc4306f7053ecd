import { LeaseSuperseded, NetworkError, Terminated } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type AgentTransport,
  type CallOptions,
  createAgentTransport,
  type DispatchLease,
  heartbeatIntervalMs,
  LeaseKeeper,
  type LoopDelaySource,
  SubmissionOutcomeUnknown,
} from "../src/index.js";
import { AGENT, memoryLogger, SECRET } from "./helpers/fixtures.js";
import {
  type Action,
  EXEC_ID,
  type RouteInfo,
  STEP_ID,
  type StubKernel,
  startStubKernel,
} from "./helpers/stub-kernel.js";

const lease = (timeoutMs: number): DispatchLease => ({ dispatchId: "d-1", attempt: 2, timeoutMs });

/** A transport double that records heartbeat times and answers from a script. */
function fakeTransport(answer: (n: number) => Promise<void> = () => Promise.resolve()) {
  const beats: { at: number; options: CallOptions | undefined }[] = [];
  const transport: Pick<AgentTransport, "heartbeat" | "withSignal"> = {
    heartbeat: (_id, _lease, options) => {
      beats.push({ at: Date.now(), options });
      return answer(beats.length);
    },
    withSignal: () => {
      throw new Error("not used");
    },
  };
  return { beats, transport };
}

/** A loop-delay source the test drives by hand. */
function manualLoopDelay() {
  const listeners = new Set<(ms: number) => void>();
  const source: LoopDelaySource = {
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const emit = (ms: number) => {
    for (const l of listeners) l(ms);
  };
  return { source, emit, size: () => listeners.size };
}

describe("LeaseKeeper with fake timers", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    [120_000, 30_000],
    [90_000, 30_000],
    [30_000, 10_000],
    [12_000, 4_000],
  ])("lease %i ms → one heartbeat every %i ms, the first after one interval", async (timeoutMs, interval) => {
    expect(heartbeatIntervalMs({ timeoutMs })).toBe(interval);
    const { beats, transport } = fakeTransport();
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(timeoutMs),
      loopDelay: false,
    });
    expect(keeper.intervalMs).toBe(interval);
    keeper.start();
    await vi.advanceTimersByTimeAsync(interval - 1);
    expect(beats).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(beats).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(interval * 4);
    expect(beats).toHaveLength(5);
    expect(beats[1]!.at - beats[0]!.at).toBe(interval);
    // Each beat's retries must fit inside one interval.
    expect(beats[0]!.options).toEqual({ timeoutMs: interval, budgetMs: interval });
    keeper.stop();
    await vi.advanceTimersByTimeAsync(interval * 3);
    expect(beats).toHaveLength(5);
    expect(keeper.lost).toBe(false);
  });

  it("a 409 lease_superseded stops renewal and aborts the signal", async () => {
    const logger = memoryLogger();
    const { beats, transport } = fakeTransport((n) =>
      n === 2 ? Promise.reject(new LeaseSuperseded()) : Promise.resolve(),
    );
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger,
      loopDelay: false,
    });
    const onAbort = vi.fn();
    keeper.signal.addEventListener("abort", onAbort);
    keeper.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(keeper.lost).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(keeper.lost).toBe(true);
    expect(keeper.lostReason).toBeInstanceOf(LeaseSuperseded);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(beats).toHaveLength(2);
  });

  it("an execution_terminal answer also ends the run", async () => {
    const { transport } = fakeTransport(() => Promise.reject(new Terminated()));
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      loopDelay: false,
    });
    keeper.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(keeper.lost).toBe(true);
  });

  it("K consecutive failures spanning more than the lease → lost; fewer or shorter → kept", async () => {
    const logger = memoryLogger();
    // Lease 30 s, beat every 10 s. Failures at 10, 20, 30 s: three in a row but only 30 s unrenewed.
    const { beats, transport } = fakeTransport(() => Promise.reject(new NetworkError("ECONNRESET")));
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger,
      loopDelay: false,
    });
    keeper.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(beats).toHaveLength(3);
    expect(keeper.lost).toBe(false);
    expect(logger.lines.filter((l) => l.message === "dispatch heartbeat failed")).toHaveLength(3);
    // Fourth failure at 40 s: 40 s without renewal > 30 s lease.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(keeper.lost).toBe(true);
    expect(String((keeper.lostReason as Error).message)).toMatch(/presumed lost: 4 heartbeats failed/);
    expect((keeper.lostReason as Error).cause).toBeInstanceOf(NetworkError);
    expect(keeper.lostReason).toBeInstanceOf(LeaseSuperseded);
  });

  it("a success in between resets the count", async () => {
    const { transport } = fakeTransport((n) =>
      n % 3 === 0 ? Promise.resolve() : Promise.reject(new Error("503")),
    );
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger: memoryLogger(),
      loopDelay: false,
    });
    keeper.start();
    await vi.advanceTimersByTimeAsync(200_000);
    expect(keeper.lost).toBe(false);
    keeper.stop();
  });

  it("long stalls over K=1 are enough when configured", async () => {
    const { transport } = fakeTransport(() => Promise.reject(new Error("down")));
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(15_000),
      logger: memoryLogger(),
      loopDelay: false,
      maxConsecutiveFailures: 1,
    });
    keeper.start();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(keeper.lost).toBe(false); // 15 s unrenewed is not > 15 s
    await vi.advanceTimersByTimeAsync(5_000);
    expect(keeper.lost).toBe(true);
  });

  it("warns once per event-loop stall longer than the threshold, naming the running step", async () => {
    const logger = memoryLogger();
    const loop = manualLoopDelay();
    const { transport } = fakeTransport();
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger,
      loopDelay: loop.source,
    });
    keeper.start();
    keeper.setCurrentStep("tool_call:resize_images");
    vi.setSystemTime(Date.now() + 150);
    loop.emit(150); // below the default 200 ms
    expect(logger.lines).toHaveLength(0);
    vi.setSystemTime(Date.now() + 12_500);
    loop.emit(12_500);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.message).toMatch(
      /blocked for 12\.5 s while step "tool_call:resize_images" was running/,
    );
    expect(logger.lines[0]!.message).toContain(EXEC_ID);
    expect(logger.lines[0]!.message).toMatch(/worker_threads/);
    expect(logger.lines[0]!.fields).toMatchObject({
      executionId: EXEC_ID,
      step: "tool_call:resize_images",
      blockedMs: 12_500,
    });
    vi.setSystemTime(Date.now() + 300);
    loop.emit(300); // another stall, another warning
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[1]!.message).toMatch(/blocked for 300 ms/);
    keeper.stop();
    expect(loop.size()).toBe(0);
  });

  it("caps stall warnings at 5 per dispatch and says so", async () => {
    const logger = memoryLogger();
    const loop = manualLoopDelay();
    const keeper = new LeaseKeeper({
      transport: fakeTransport().transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger,
      loopDelay: loop.source,
    });
    keeper.start();
    for (let i = 0; i < 8; i++) loop.emit(400);
    expect(logger.lines).toHaveLength(5);
    expect(logger.lines[4]!.message).toMatch(/Further stalls during this dispatch are not logged/);
    keeper.stop();
  });

  it("attributes a stall to the step that just ended inside it", async () => {
    const logger = memoryLogger();
    const loop = manualLoopDelay();
    const keeper = new LeaseKeeper({
      transport: fakeTransport().transport,
      executionId: EXEC_ID,
      lease: lease(30_000),
      logger,
      loopDelay: loop.source,
    });
    keeper.start();
    keeper.setCurrentStep("local:crunch");
    keeper.setCurrentStep(undefined);
    loop.emit(11_000);
    expect(logger.lines[0]!.message).toMatch(/step "local:crunch"/);
    keeper.stop();
  });
});

describe("LeaseKeeper against a real loopback kernel", () => {
  let kernel: StubKernel;
  let route: ((info: RouteInfo) => Action | undefined) | undefined;
  let transport: AgentTransport;
  beforeEach(async () => {
    route = undefined;
    kernel = await startStubKernel({ secret: SECRET, route: (i) => route?.(i) });
    transport = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
    });
  });
  afterEach(async () => {
    await transport.close();
    await kernel.close();
  });

  it("heartbeats at min(lease/3, 30 s); a 409 aborts the run and later calls throw without sending", async () => {
    const logger = memoryLogger();
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(300),
      logger,
      loopDelay: false,
      // Only the 409 may end this lease: a beat timed out by a busy machine must not end it first.
      maxConsecutiveFailures: Number.POSITIVE_INFINITY,
    });
    expect(keeper.intervalMs).toBe(100);
    const heartbeats = () => kernel.count("POST", "/heartbeat");
    // Cadence, independent of load: timers armed in the same turn as the keeper's interval fire in
    // due order, and a heartbeat is never retried within its 100 ms budget (the first backoff is
    // ≥ 125 ms), so just before the k-th interval at most k−1 heartbeats can have been sent.
    const seenBefore: Promise<number>[] = [1, 2, 3].map(
      (k) => new Promise((r) => setTimeout(() => r(heartbeats()), k * keeper.intervalMs - 1)),
    );
    keeper.start();
    for (let i = 0; i < 200 && heartbeats() < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(heartbeats()).toBeGreaterThanOrEqual(2); // it keeps beating
    const [before1, before2, before3] = await Promise.all(seenBefore);
    expect(before1).toBe(0);
    expect(before2).toBeLessThanOrEqual(1);
    expect(before3).toBeLessThanOrEqual(2);
    const beats = kernel.requests.filter((r) => r.target.endsWith("/heartbeat"));
    expect(beats.every((b) => b.verified && b.headers["rebuno-dispatch-attempt"] === "2")).toBe(true);
    expect(keeper.lost).toBe(false);

    route = (i) =>
      i.target.endsWith("/heartbeat")
        ? { status: 409, json: { code: "lease_superseded", message: "dispatch lease superseded" } }
        : undefined;
    await new Promise<void>((resolve) => keeper.signal.addEventListener("abort", () => resolve()));
    expect(keeper.lost).toBe(true);
    expect(keeper.lostReason).toMatchObject({ message: "dispatch lease superseded" }); // the 409's
    const sentBefore = kernel.requests.length;

    const run = keeper.transport;
    await expect(
      run.submitStep(EXEC_ID, keeper.lease, { kind: "local", target: "x" }),
    ).rejects.toBeInstanceOf(LeaseSuperseded);
    await expect(run.completeStep(EXEC_ID, keeper.lease, STEP_ID, { result: 1 })).rejects.toBeInstanceOf(
      LeaseSuperseded,
    );
    await expect(run.getExecution(EXEC_ID)).rejects.toBeInstanceOf(LeaseSuperseded);
    // A user-bound view of the run transport is still fenced.
    await expect(
      run.withSignal(new AbortController().signal).heartbeat(EXEC_ID, keeper.lease),
    ).rejects.toBeInstanceOf(LeaseSuperseded);
    await new Promise((r) => setTimeout(r, 250));
    expect(kernel.requests.length).toBe(sentBefore);
  });

  it("an in-flight call is aborted when the lease is lost", async () => {
    route = (i) => (i.target.endsWith("/complete") ? { hang: true } : undefined);
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(60_000),
      loopDelay: false,
    });
    keeper.start();
    const pending = keeper.transport.completeStep(EXEC_ID, keeper.lease, STEP_ID, { result: 1 });
    await new Promise((r) => setTimeout(r, 50));
    keeper.abandon();
    await expect(pending).rejects.toBeInstanceOf(LeaseSuperseded);
  });

  it("a 409 on any call through keeper.transport ends the lease for the whole run", async () => {
    route = (i) =>
      i.target.endsWith("/steps")
        ? { status: 409, json: { code: "lease_superseded", message: "superseded" } }
        : undefined;
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(60_000),
      loopDelay: false,
    });
    keeper.start();
    await expect(
      keeper.transport.submitStep(EXEC_ID, keeper.lease, { kind: "local", target: "x" }),
    ).rejects.toBeInstanceOf(LeaseSuperseded);
    expect(keeper.lost).toBe(true);
  });

  it("SubmissionOutcomeUnknown through keeper.transport abandons the lease so the kernel redelivers", async () => {
    route = (i) => (i.target.endsWith("/steps") ? { reset: "after-body" } : undefined);
    const keeper = new LeaseKeeper({
      transport,
      executionId: EXEC_ID,
      lease: lease(150),
      logger: memoryLogger(),
      loopDelay: false,
    });
    keeper.start();
    await expect(
      keeper.transport.submitStep(EXEC_ID, keeper.lease, { kind: "local", target: "x" }),
    ).rejects.toBeInstanceOf(SubmissionOutcomeUnknown);
    expect(keeper.lost).toBe(true);
    expect(keeper.lostReason).toBeInstanceOf(SubmissionOutcomeUnknown);
    const atAbandon = kernel.count("POST", "/heartbeat");
    // Four intervals: a keeper still beating would send a heartbeat in each. The keeper has at most
    // one beat in flight (never retried within its one-interval budget, the first backoff being
    // longer), which may still land after the abandon; nothing else may.
    await new Promise((r) => setTimeout(r, 4 * keeper.intervalMs));
    expect(kernel.count("POST", "/heartbeat")).toBeLessThanOrEqual(atAbandon + 1);
  });

  it("a real event-loop block longer than lease/3 logs one warning naming the step", async () => {
    const logger = memoryLogger();
    const keeper = new LeaseKeeper({ transport, executionId: EXEC_ID, lease: lease(600), logger });
    keeper.start();
    // Let the 20 ms sampler run a while (the machine may be busy) before blocking.
    await new Promise((r) => setTimeout(r, 250));
    keeper.setCurrentStep("local:busy_loop");
    const until = Date.now() + 600;
    while (Date.now() < until) {
      // Synchronous work holding the loop for 600 ms (> 600/3).
    }
    // Warnings for this block (measured ≥ 600 ms minus the 20 ms sample period and clock rounding);
    // a loaded machine may add shorter stalls of its own, which are not this test's business.
    const stallWarnings = () =>
      logger.lines.filter(
        (l) => l.message.includes("event loop was blocked") && (l.fields?.blockedMs as number) >= 570,
      );
    for (let i = 0; i < 40 && stallWarnings().length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 600)); // a second report of the same block would be here by now
    expect(stallWarnings()).toHaveLength(1);
    expect(stallWarnings()[0]!.message).toMatch(/step "local:busy_loop"/);
    keeper.stop();
  });
});
