/**
 * The event-loop stall warning with the real shared monitor and real blocking: reported although
 * the run ends (and the keeper stops) before any timer could run, reported when the block starts
 * at once, and reported once per stall however many leases are held.
 */
import { describe, expect, it } from "vitest";
import { type DispatchLease, LeaseKeeper } from "../src/index.js";
import { memoryLogger } from "./helpers/fixtures.js";

const lease: DispatchLease = { dispatchId: "d-1", attempt: 1, timeoutMs: 120_000 };
const transport = {
  heartbeat: () => Promise.resolve(),
  withSignal: () => {
    throw new Error("not used");
  },
};

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Holding the loop, as a synchronous tool body would.
  }
}

// Stalls of at least the busy-wait: a loaded machine can add short stalls of its own, not counted.
const stallLines = (logger: ReturnType<typeof memoryLogger>) =>
  logger.lines.filter(
    (l) => l.message.includes("event loop was blocked") && (l.fields?.blockedMs as number) >= 270,
  );

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("event-loop stall warning (real monitor)", () => {
  it("reports a stall that ended just before the keeper stopped, with no timer turn in between", () => {
    const logger = memoryLogger();
    const keeper = new LeaseKeeper({ transport, executionId: "exec-sync", lease, logger });
    keeper.start();
    keeper.setCurrentStep("crunch");
    busyWait(300);
    keeper.setCurrentStep(undefined);
    keeper.stop(); // synchronously: the run finished in microtasks after the block
    const lines = stallLines(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({ executionId: "exec-sync", step: "crunch" });
  });

  it("reports a block that starts right when the lease is taken", async () => {
    const logger = memoryLogger();
    const keeper = new LeaseKeeper({ transport, executionId: "exec-early", lease, logger });
    keeper.start();
    keeper.setCurrentStep("first");
    busyWait(300);
    for (let i = 0; i < 50 && stallLines(logger).length === 0; i++) await settle(20);
    keeper.stop();
    const lines = stallLines(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toMatch(/while step "first" was running in execution exec-early/);
  });

  it("gives one warning per stall across leases, naming the step that started in it", async () => {
    const logger = memoryLogger();
    const waiting = new LeaseKeeper({ transport, executionId: "exec-waiting", lease, logger });
    const blocking = new LeaseKeeper({ transport, executionId: "exec-blocking", lease, logger });
    waiting.start();
    waiting.setCurrentStep("fetch_page"); // awaiting I/O: running, but not what blocks
    await settle(100);
    blocking.start();
    blocking.setCurrentStep("resize");
    busyWait(300);
    for (let i = 0; i < 50 && stallLines(logger).length === 0; i++) await settle(20);
    await settle(100); // a second report would show up by now
    waiting.stop();
    blocking.stop();
    const lines = stallLines(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({ executionId: "exec-blocking", step: "resize" });
  });

  it("warns once per separate stall", async () => {
    const logger = memoryLogger();
    const keeper = new LeaseKeeper({ transport, executionId: "exec-twice", lease, logger });
    keeper.start();
    for (const label of ["one", "two"]) {
      keeper.setCurrentStep(label);
      busyWait(300);
      keeper.setCurrentStep(undefined);
      await settle(100);
    }
    keeper.stop();
    expect(stallLines(logger).map((l) => l.fields?.step)).toEqual(["one", "two"]);
  });
});
