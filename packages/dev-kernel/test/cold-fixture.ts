// State for the cold-tier tests: settled executions of every shape (sessions, subagents, approvals,
// resources, checkpoints, idempotency keys, exhausted dispatches) beside executions that must stay
// in memory, plus the keys `observe` must read one by one. Applied to any store, the same calls
// give the same state.
import { expect } from "vitest";
import type { SqliteStore } from "../src/store/sqlite.js";
import type { ExecutionStatus, Store } from "../src/store/types.js";
import type { KnownKeys } from "./sqlite-files.js";
import { dispatch, execution, step } from "./store-rows.js";

const TERMINAL: ExecutionStatus[] = ["completed", "failed", "cancelled"];
export const SETTLED_COUNT = 24 + 3; // e00…e23, plus the parent p and its children c1, c2

/** Ids of executions that are not settled and stay in memory. */
export const UNSETTLED = ["r1", "c3", "w1", "t-active"];

const id2 = (i: number) => `e${String(i).padStart(2, "0")}`;

export const COLD_KNOWN: KnownKeys = {
  executionIds: ["r1", "c3", "w1", "t-active", "nobody"],
  dispatchIds: [...Array.from({ length: 24 }, (_, i) => `d-${id2(i)}`), "d-p", "d-r1", "d-t", "d-none"],
  approvalIds: ["ap-e03", "ap-e06", "ap-w1", "ap-none"],
};

/** Write the fixture (see the module comment). */
export function writeColdFixture(s: Store): void {
  s.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
  for (let i = 0; i < 24; i++) {
    const id = id2(i);
    const extra = {
      createdAt: 100 + i,
      session: i % 4 === 0 ? "s1" : i % 4 === 1 ? "s2" : undefined,
      idempotencyKey: i % 3 === 0 ? `k${i}` : undefined,
      agentId: i % 5 === 0 ? "b" : "a",
    };
    s.transaction(() => {
      s.insertExecution(execution(id, extra));
      s.appendEvent(id, "execution.created", `{"n":${i}.0}`, 100 + i);
      s.insertDispatch(dispatch(`d-${id}`, id, { status: "in_flight", attempt: 1, lockedAt: 100 }));
      s.setOccurrence(`d-${id}`, "tool_call", "t", "h", 0);
      s.insertStep(step(id, "s2", { argsJson: '{"big":100000000000000000000001}' }));
      s.insertStep(step(id, "s1", { kind: "llm_call", target: "m" }));
    });
    s.transaction(() => {
      s.updateStep(
        step(id, "s2", {
          argsJson: '{"big":100000000000000000000001}',
          status: "succeeded",
          resultJson: "1.0",
        }),
      );
      s.updateStep(step(id, "s1", { kind: "llm_call", target: "m", status: "failed", errorJson: '{"e":1}' }));
      s.appendEvent(id, "step.succeeded", '{"step_id":"s2"}', 101 + i);
      if (i % 3 === 0) {
        s.insertApproval({
          id: `ap-${id}`,
          executionId: id,
          stepId: "s2",
          status: "pending",
          timeoutAt: 900,
          createdAt: 50 + i,
        });
        s.updateApproval({
          id: `ap-${id}`,
          executionId: id,
          stepId: "s2",
          status: i % 2 === 0 ? "granted" : "denied",
          timeoutAt: 900,
          createdAt: 50 + i,
          decidedBy: "x@y",
          decidedAt: 60,
        });
      }
      if (i % 4 === 2) {
        s.putResource({
          executionId: id,
          key: "r",
          driverId: "git",
          configurationJson: '{"x":1.0}',
          configurationHash: "h",
          coverageReuse: true,
          everySteps: 1,
          onCompletion: false,
          generation: 1,
          count: 1,
          registeredSeq: 1,
        });
        s.insertCheckpoint({ executionId: id, key: "r", generation: 1, checkpointRef: "c1", coveredSeq: 1 });
        s.insertCheckpoint({ executionId: id, key: "r", generation: 2, checkpointRef: "c2", coveredSeq: 2 });
      }
      s.updateDispatch(dispatch(`d-${id}`, id, { status: "exhausted", attempt: 1 })); // drops the counter
      s.updateExecution(
        execution(id, { ...extra, status: TERMINAL[i % 3]!, outputJson: `{"i":${i}}`, updatedAt: 1000 - i }),
      );
    });
  }
  // A parent and its two children, all terminal: settled together.
  s.insertExecution(execution("p", { createdAt: 300, status: "completed", updatedAt: 400 }));
  s.insertStep(step("p", "spawn", { status: "succeeded" }));
  s.insertDispatch(dispatch("d-p", "p", { status: "exhausted" }));
  s.insertExecution(
    execution("c1", {
      createdAt: 301,
      status: "completed",
      updatedAt: 401,
      spawnedBy: { executionId: "p", stepId: "spawn" },
    }),
  );
  s.insertExecution(
    execution("c2", {
      createdAt: 302,
      status: "cancelled",
      updatedAt: 402,
      spawnedBy: { executionId: "p", stepId: "spawn" },
    }),
  );
  // Not settled: running, a terminal child of a running parent, a pending approval, a live dispatch.
  s.insertExecution(execution("r1", { createdAt: 310, session: "s1", deadlineAt: 5000 }));
  s.insertStep(step("r1", "spawn"));
  s.insertDispatch(dispatch("d-r1", "r1"));
  s.insertExecution(
    execution("c3", {
      createdAt: 311,
      status: "completed",
      spawnedBy: { executionId: "r1", stepId: "spawn" },
    }),
  );
  s.insertExecution(execution("w1", { createdAt: 312, status: "completed", updatedAt: 2 }));
  s.insertApproval({
    id: "ap-w1",
    executionId: "w1",
    stepId: "x",
    status: "pending",
    timeoutAt: 99,
    createdAt: 200,
  });
  s.insertExecution(execution("t-active", { createdAt: 313, status: "failed", updatedAt: 3 }));
  s.insertDispatch(dispatch("d-t", "t-active", { status: "failed", nextAttemptAt: 7 }));
}

/** Executions the SQLite store holds in memory (the rest are cold). */
export function hotCount(store: SqliteStore): number {
  return (store as unknown as { state: { memory: Store } }).state.memory.countExecutions();
}

/** Listings with filters and keyset pages, which merge both tiers. */
export function pagedReads(s: Store): unknown {
  const pages: unknown[] = [];
  for (const limit of [1, 3, 7, 100]) {
    for (const filter of [
      {},
      { agentId: "b" },
      { status: "completed" as const },
      { session: "s1" },
      { agentId: "a", status: "failed" as const },
    ]) {
      let beforeId: string | undefined;
      for (let n = 0; n < 40; n++) {
        const page = s.listExecutions({ ...filter, limit, beforeId }).map((e) => e.id);
        pages.push(page);
        if (page.length < limit) break;
        beforeId = page.at(-1);
      }
    }
  }
  return {
    pages,
    terminal: [1, 5, 50].map((n) => s.listTerminalExecutionsBefore(995, n).map((e) => e.id)),
    count: s.countExecutions(),
    keys: ["k0", "k3", "k9", "k21", "nope"].map((k) => [
      s.findExecutionByIdempotencyKey("a", k)?.id,
      s.findExecutionByIdempotencyKey("b", k)?.id,
    ]),
    approvals: (["granted", "denied", "pending", undefined] as const).map((st) =>
      s.listApprovals(st).map((a) => a.id),
    ),
    failedCalls: s.listFailedStepsForCall("e05", "llm_call", "m", "h").map((x) => x.stepId),
    withStatus: s.listStepsWithStatus("e07", ["succeeded"]).map((x) => x.stepId),
    resource: s.getResource("e02", "r"),
    checkpoints: s.listCheckpoints("e06", "r"),
    pendingForStep: s.findPendingApprovalForStep("w1", "x")?.id,
  };
}

/** The fixture's settled executions are cold, the others in memory. */
export function expectArchived(store: SqliteStore, moved: number): void {
  expect(moved).toBe(SETTLED_COUNT);
  expect(hotCount(store)).toBe(UNSETTLED.length);
}
