// Shared state for the SQLite store tests: writes to every table — with updates, deletions and a
// rolled-back transaction — in phases, so a test can close and reopen in between, plus the keys
// `observe` must read one by one to see all of it.
import { join } from "node:path";
import { expect } from "vitest";
import type { Store } from "../src/store/types.js";
import { type KnownKeys, tempDir } from "./sqlite-files.js";
import { dispatch, execution, step } from "./store-rows.js";

export const newPath = () => join(tempDir(), "kernel.db");

// Texts JSON.parse would change or that need escaping: they must come back byte-exact.
export const EXACT = [
  '{"big":100000000000000000000001,"f":1.0}',
  '{"s":"é\\u00e9 \\ud83d\\ude00 \\"q\\" \\n"}',
  "[1e2,-0.0]",
];

/** Keys `observe` must read one by one for the state {@link PHASES} builds. */
export const KNOWN: KnownKeys = {
  executionIds: ["gone", "orphan-events"],
  dispatchIds: ["d1", "d2", "d3", "d-gone"],
  approvalIds: ["ap1", "ap2", "ap-gone"],
  occurrences: [
    ["d1", "tool_call", "t", "h"],
    ["d1", "local", "t\u0000x", "h2"],
    ["d2", "tool_call", "t", "h"],
    ["d3", "tool_call", "t", "h"],
    ["d-gone", "tool_call", "t", "h"],
  ],
};

/**
 * Writes to every table, with updates, deletions and rolled-back transactions, phase by phase (so a
 * test can close and reopen in between). Applied to any store, the same calls give the same state.
 */
export const PHASES: ((s: Store) => void)[] = [
  (s) => {
    s.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
    s.putAgent({
      id: "b",
      webhookUrl: "http://b.test/",
      secret: "s",
      registeredAt: 1,
      inputSchemaJson: EXACT[0],
    });
    s.insertApiKey({ id: "k1", name: "ci", scopes: ["executions:read"], tokenHash: "aa", createdAt: 1 });
    s.insertApiKey({ id: "k2", name: "ops", scopes: [], tokenHash: "bb", createdAt: 2 });
    s.transaction(() => {
      s.insertExecution(execution("p", { session: "sess", idempotencyKey: "idem", deadlineAt: 50 }));
      s.appendEvent("p", "execution.created", EXACT[1]!, 1);
      s.insertStep(step("p", "s2", { argsJson: EXACT[0], resources: ["r1"] }));
      s.insertStep(step("p", "s1", { argsJson: EXACT[2] }));
      s.insertDispatch(dispatch("d1", "p"));
      s.insertDispatch(dispatch("d2", "p", { nextAttemptAt: 5 }));
      s.setOccurrence("d1", "tool_call", "t", "h", 0);
      s.setOccurrence("d1", "local", "t\u0000x", "h2", 3);
      s.setOccurrence("d2", "tool_call", "t", "h", 1);
    });
    s.insertExecution(
      execution("c", { session: "sess", createdAt: 2, spawnedBy: { executionId: "p", stepId: "s1" } }),
    );
    s.insertExecution(execution("gone", { status: "completed" }));
    s.insertDispatch(dispatch("d-gone", "gone"));
    s.setOccurrence("d-gone", "tool_call", "t", "h", 9);
    s.insertApproval({
      id: "ap-gone",
      executionId: "gone",
      stepId: "x",
      status: "pending",
      timeoutAt: 9,
      createdAt: 1,
    });
    s.appendEvent("gone", "x", "{}", 1);
    s.appendEvent("orphan-events", "x", EXACT[2]!, 4);
  },
  (s) => {
    s.transaction(() => {
      s.updateExecution(
        execution("c", {
          session: "sess",
          spawnedBy: { executionId: "p", stepId: "s1" },
          status: "completed",
          outputJson: EXACT[0],
          createdAt: 2,
          updatedAt: 3,
        }),
      );
      s.appendEvent("p", "step.succeeded", '{"step_id":"s1"}', 3);
      s.updateStep(step("p", "s1", { argsJson: EXACT[2], status: "failed", errorJson: EXACT[1] }));
      s.updateDispatch(dispatch("d1", "p", { status: "in_flight", attempt: 1, lockedBy: "me", lockedAt: 7 }));
      s.updateDispatch(dispatch("d2", "p", { status: "exhausted" })); // drops d2's counters
      s.insertApproval({
        id: "ap1",
        executionId: "p",
        stepId: "s2",
        status: "pending",
        approvers: ["x@y"],
        message: "ok?",
        timeoutAt: 20,
        createdAt: 2,
      });
      s.insertApproval({
        id: "ap2",
        executionId: "p",
        stepId: "s1",
        status: "pending",
        timeoutAt: 30,
        createdAt: 3,
      });
    });
    expect(() =>
      s.transaction(() => {
        s.deleteExecution("p");
        s.putAgent({ id: "z", webhookUrl: "http://z.test/", secret: "s", registeredAt: 1 });
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    s.updateApproval({
      id: "ap1",
      executionId: "p",
      stepId: "s2",
      status: "granted",
      approvers: ["x@y"],
      decidedBy: "x@y",
      decidedAt: 5,
      rationale: "fine",
      timeoutAt: 20,
      createdAt: 2,
    });
    s.updateApiKey({
      id: "k1",
      name: "ci",
      scopes: ["executions:read"],
      tokenHash: "cc",
      createdAt: 1,
      rotatedAt: 4,
    });
    s.deleteAgent("b");
    s.deleteExecution("gone");
  },
  (s) => {
    s.transaction(() => {
      s.putResource({
        executionId: "p",
        key: "r1",
        driverId: "git",
        configurationJson: EXACT[0]!,
        configurationHash: "ch",
        coverageReuse: true,
        everySteps: 2,
        onCompletion: false,
        generation: 0,
        count: 0,
        registeredSeq: 2,
      });
      s.putResource({
        executionId: "p",
        key: "r0",
        driverId: "fs",
        configurationJson: "null",
        configurationHash: "c0",
        coverageReuse: false,
        everySteps: 0,
        onCompletion: true,
        generation: 1,
        count: 1,
        registeredSeq: 3,
      });
      expect(
        s.insertCheckpoint({ executionId: "p", key: "r1", generation: 0, checkpointRef: "a", coveredSeq: 2 }),
      ).toBe(1);
      expect(
        s.insertCheckpoint({ executionId: "p", key: "r0", generation: 1, checkpointRef: "b", coveredSeq: 2 }),
      ).toBe(1);
      expect(
        s.insertCheckpoint({ executionId: "p", key: "r1", generation: 1, checkpointRef: "c", coveredSeq: 3 }),
      ).toBe(2);
      s.updateCheckpoint({
        executionId: "p",
        key: "r1",
        seq: 1,
        generation: 0,
        checkpointRef: "a",
        coveredSeq: 2,
        invalidatedSeq: 3,
      });
      s.putResource({
        executionId: "p",
        key: "r1",
        driverId: "git",
        configurationJson: EXACT[0]!,
        configurationHash: "ch",
        coverageReuse: true,
        everySteps: 2,
        onCompletion: false,
        generation: 1,
        count: 1,
        registeredSeq: 2,
        bindingJson: EXACT[1],
        checkpointRef: "c",
      });
    });
    s.insertDispatch(dispatch("d3", "c", { status: "failed", nextAttemptAt: 8 }));
    s.setOccurrence("d3", "tool_call", "t", "h", 4);
    s.clearOccurrences("d3");
    s.setOccurrence("d1", "tool_call", "t", "h", 2);
  },
];

export function writeAll(s: Store): void {
  for (const phase of PHASES) phase(s);
}
