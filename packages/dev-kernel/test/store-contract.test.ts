// The store contract (src/store/types.ts) checked directly on every implementation, so the memory
// and SQLite stores cannot drift apart: atomic transactions, byte-exact payloads, listing orders.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import type { DispatchRow, Store } from "../src/store/types.js";
import { execution, step } from "./store-rows.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const factories: [string, () => Store][] = [
  ["memory", () => new MemoryStore()],
  [
    "sqlite",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "rebuno-store-"));
      dirs.push(dir);
      return new SqliteStore(join(dir, "kernel.db"));
    },
  ],
];

describe.each(factories)("%s store", (_name, make) => {
  test("a throwing transaction leaves no write behind", () => {
    const store = make();
    store.insertExecution(execution("e1"));
    expect(() =>
      store.transaction(() => {
        store.updateExecution(execution("e1", { status: "completed", outputJson: "1" }));
        store.appendEvent("e1", "execution.completed", "{}", 2);
        store.insertStep(step("e1", "s1"));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.getExecution("e1")?.status).toBe("running");
    expect(store.lastEventSeq("e1")).toBe(0);
    expect(store.getStep("e1", "s1")).toBeUndefined();
    store.close();
  });

  test("a throwing transaction after a successful one undoes only its own writes", async () => {
    const store = make();
    const agent = { id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 };
    const d: DispatchRow = {
      id: "d1",
      executionId: "e1",
      status: "in_flight",
      attempt: 1,
      maxAttempts: 5,
      nextAttemptAt: 0,
      lockedAt: 10,
      leaseMs: 1000,
      createdAt: 0,
    };
    store.insertExecution(execution("e1"));
    // Same event-loop turn: the SQLite store runs both in one batch, the second under a savepoint.
    store.transaction(() => {
      store.putAgent(agent);
      store.insertDispatch(d);
      store.appendEvent("e1", "a", "{}", 1);
      store.insertStep(step("e1", "s1"));
    });
    expect(() =>
      store.transaction(() => {
        store.putAgent({ ...agent, secret: "changed" });
        store.updateDispatch({ ...d, lockedAt: 20 }); // a lease renewal
        store.updateDispatch({ ...d, lockedAt: 30, status: "failed" });
        store.appendEvent("e1", "b", "{}", 2);
        store.updateStep(step("e1", "s1", { status: "succeeded" }));
        store.updateExecution(execution("e1", { status: "completed" }));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.getAgent("a")?.secret).toBe("s");
    expect(store.getDispatch("d1")).toMatchObject({ status: "in_flight", lockedAt: 10 });
    expect(store.listExpiredLeases(1011).map((x) => x.id)).toEqual(["d1"]);
    expect(store.lastEventSeq("e1")).toBe(1);
    expect(store.getStep("e1", "s1")?.status).toBe("executing");
    expect(store.getExecution("e1")?.status).toBe("running");
    store.transaction(() => store.updateDispatch({ ...d, lockedAt: 500 }));
    expect(store.listExpiredLeases(1011)).toEqual([]);
    expect(store.getDispatch("d1")?.lockedAt).toBe(500);
    await store.whenDurable();
    store.close();
  });

  test("payload texts come back byte-exact and events are gap-free per execution", () => {
    const store = make();
    store.insertExecution(execution("e1"));
    store.insertStep(step("e1", "s1", { argsJson: '{"big":100000000000000000000001,"f":1.0}' }));
    expect(store.getStep("e1", "s1")?.argsJson).toBe('{"big":100000000000000000000001,"f":1.0}');
    expect(store.getExecution("e1")?.inputJson).toBe('{"n":1.0}');
    expect(store.appendEvent("e1", "a", "{}", 1)).toBe(1);
    expect(store.appendEvent("e2", "a", "{}", 1)).toBe(1);
    expect(store.appendEvent("e1", "b", '{"x":1.50}', 1)).toBe(2);
    expect(store.listEvents("e1", 1, 10).map((e) => [e.seq, e.type, e.payloadJson])).toEqual([
      [2, "b", '{"x":1.50}'],
    ]);
    store.close();
  });

  test("listings keep their documented orders", () => {
    const store = make();
    store.insertExecution(execution("0001", { session: "s", createdAt: 1 }));
    store.insertExecution(execution("0003", { session: "s", createdAt: 3 }));
    store.insertExecution(execution("0002", { createdAt: 2, idempotencyKey: "k" }));
    expect(store.listExecutions({ limit: 10 }).map((e) => e.id)).toEqual(["0003", "0002", "0001"]);
    expect(store.listExecutions({ limit: 10, beforeId: "0003" }).map((e) => e.id)).toEqual(["0002", "0001"]);
    expect(store.listSessionExecutions("s").map((e) => e.id)).toEqual(["0001", "0003"]);
    expect(store.findExecutionByIdempotencyKey("a", "k")?.id).toBe("0002");
    expect(store.findExecutionByIdempotencyKey("other", "k")).toBeUndefined();
    store.insertStep(step("0001", "bb"));
    store.insertStep(step("0001", "aa", { status: "succeeded" }));
    expect(store.listSteps("0001").map((s) => s.stepId)).toEqual(["aa", "bb"]);
    expect(store.listStepsWithStatus("0001", ["succeeded"]).map((s) => s.stepId)).toEqual(["aa"]);
    store.close();
  });

  test("dispatch queries: due order, expired leases, occurrence counters", () => {
    const store = make();
    const d = (id: string, extra: Partial<DispatchRow>): DispatchRow => ({
      id,
      executionId: "e1",
      status: "pending",
      attempt: 0,
      maxAttempts: 5,
      nextAttemptAt: 0,
      leaseMs: 1000,
      createdAt: 0,
      ...extra,
    });
    store.insertDispatch(d("d1", { nextAttemptAt: 20 }));
    store.insertDispatch(d("d2", { nextAttemptAt: 10 }));
    store.insertDispatch(d("d3", { status: "in_flight", lockedAt: 0 }));
    expect(store.listDueDispatches(15, 10).map((x) => x.id)).toEqual(["d2"]);
    expect(store.nextDispatchDueAt()).toBe(10);
    expect(store.listExpiredLeases(1001).map((x) => x.id)).toEqual(["d3"]);
    store.updateDispatch(d("d2", { status: "exhausted" }));
    expect(store.listActiveDispatches("e1").map((x) => x.id)).toEqual(["d1", "d3"]);
    store.setOccurrence("d1", "tool_call", "t", "h", 0);
    store.setOccurrence("d1", "tool_call", "t", "h", 1);
    expect(store.getOccurrence("d1", "tool_call", "t", "h")).toBe(1);
    store.clearOccurrences("d1");
    expect(store.getOccurrence("d1", "tool_call", "t", "h")).toBeUndefined();
    // Counters are per (kind, target, argsHash); exhausting a dispatch drops its counters only.
    store.setOccurrence("d1", "tool_call", "t", "h", 2);
    store.setOccurrence("d1", "tool_call", "t", "h2", 0);
    store.setOccurrence("d1", "local", "t", "h", 4);
    store.setOccurrence("d3", "tool_call", "t", "h", 7);
    expect(store.getOccurrence("d1", "tool_call", "t", "h")).toBe(2);
    expect(store.getOccurrence("d1", "tool_call", "t", "h2")).toBe(0);
    expect(store.getOccurrence("d1", "local", "t", "h")).toBe(4);
    expect(store.getOccurrence("d1", "tool_call", "u", "h")).toBeUndefined();
    store.transaction(() => store.updateDispatch(d("d1", { status: "exhausted" })));
    expect(store.getOccurrence("d1", "tool_call", "t", "h")).toBeUndefined();
    expect(store.getOccurrence("d1", "local", "t", "h")).toBeUndefined();
    expect(store.getOccurrence("d3", "tool_call", "t", "h")).toBe(7);
    store.close();
  });

  test("rows keep equal raw JSON texts after compaction, and a rollback restores counters", () => {
    const store = make();
    const args = `{"big": ${"1.0, ".repeat(20)}2}`;
    const body = `{"args":${args},"pad":"${"x".repeat(100)}"}`;
    const sliced = body.slice(8, 8 + args.length);
    store.insertExecution(execution("e1", { inputJson: sliced }));
    store.insertStep(step("e1", "s1", { argsJson: sliced }));
    store.updateStep(
      step("e1", "s1", { argsJson: sliced, resultJson: JSON.stringify({ r: "y".repeat(40) }) }),
    );
    expect(store.getStep("e1", "s1")!.argsJson).toBe(args);
    expect(store.getStep("e1", "s1")!.resultJson).toBe(`{"r":"${"y".repeat(40)}"}`);
    expect(store.getExecution("e1")!.inputJson).toBe(args);
    store.setOccurrence("d9", "tool_call", "t", "h", 0);
    expect(() =>
      store.transaction(() => {
        store.setOccurrence("d9", "tool_call", "t", "h", 1);
        store.setOccurrence("d9", "tool_call", "t", "h3", 0);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.getOccurrence("d9", "tool_call", "t", "h")).toBe(0);
    expect(store.getOccurrence("d9", "tool_call", "t", "h3")).toBeUndefined();
    store.close();
  });

  test("unsettled subagents and cascade delete", () => {
    const store = make();
    store.insertExecution(execution("p"));
    store.insertStep(step("p", "s1"));
    store.insertExecution(
      execution("c1", { status: "completed", spawnedBy: { executionId: "p", stepId: "s1" } }),
    );
    expect(store.listUnsettledSubagents().map((e) => e.id)).toEqual(["c1"]);
    store.updateStep(step("p", "s1", { status: "succeeded" }));
    expect(store.listUnsettledSubagents()).toEqual([]);
    expect(store.listChildExecutions("p").map((e) => e.id)).toEqual(["c1"]);
    store.appendEvent("p", "x", "{}", 1);
    store.deleteExecution("p");
    expect(store.getExecution("p")).toBeUndefined();
    expect(store.listSteps("p")).toEqual([]);
    expect(store.lastEventSeq("p")).toBe(0);
    store.close();
  });
});
