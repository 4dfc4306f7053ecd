// The SQLite store's tables hold the whole observable state: a crash copy (what a SIGKILL leaves)
// and the file reopened after close read exactly as the store did, and the same writes spread over
// several opens give the same state as in one.
import { describe, expect, test } from "vitest";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { crashCopy, observe, restartState } from "./sqlite-files.js";
import { EXACT, KNOWN, newPath, PHASES, writeAll } from "./sqlite-fixture.js";

describe("replay", () => {
  test("reopening gives the state before close: every table, payload texts byte-exact, deletions", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    writeAll(store);
    await store.whenDurable();
    const before = observe(store, KNOWN);
    // The same calls on a memory store give the same state, except that the memory store puts approvals restored by an undone delete at the end; the
    // SQLite store's rollback restores the row in place, so its listing keeps creation order.
    const memory = new MemoryStore();
    writeAll(memory);
    const byId = (rows: unknown) => [...(rows as { id: string }[])].sort((x, y) => x.id.localeCompare(y.id));
    const mem = observe(memory, KNOWN);
    expect({ ...before, approvals: byId(before.approvals) }).toEqual({
      ...mem,
      approvals: byId(mem.approvals),
    });
    expect(store.listApprovals(undefined).map((a) => a.id)).toEqual(["ap1", "ap2"]);
    // Spot checks that the observation covers what it should.
    expect(store.getStep("p", "s2")?.argsJson).toBe(EXACT[0]);
    expect(store.listEvents("orphan-events", 0, 10)[0]?.payloadJson).toBe(EXACT[2]);
    expect(store.getExecution("gone")).toBeUndefined();
    expect(store.getDispatch("d2")?.status).toBe("exhausted");
    expect(store.getOccurrence("d2", "tool_call", "t", "h")).toBeUndefined();
    expect(store.getAgent("z")).toBeUndefined();

    // In the WAL (a crash before close), then checkpointed into the file (after close).
    expect(restartState(path, KNOWN)).toEqual(before);
    store.close();
    const reopened = new SqliteStore(path);
    expect(observe(reopened, KNOWN)).toEqual(before);
    // Byte-exact, not just equal after parsing.
    const events = reopened.listEvents("p", 0, 10);
    expect(events.map((e) => e.payloadJson)).toEqual([EXACT[1], '{"step_id":"s1"}']);
    expect(reopened.getStep("p", "s1")?.errorJson).toBe(EXACT[1]);
    expect(reopened.getExecution("c")?.outputJson).toBe(EXACT[0]);
    expect(reopened.getResource("p", "r1")?.bindingJson).toBe(EXACT[1]);
    reopened.close();
  });

  test("writes spread over two opens give the same state as in one", async () => {
    // A: phase 1, closed, then phases 2-3 in the reopened file.
    const a = newPath();
    let store = new SqliteStore(a);
    PHASES[0]!(store);
    store.close();
    store = new SqliteStore(a);
    PHASES[1]!(store);
    PHASES[2]!(store);
    await store.whenDurable();
    const withSnapshot = crashCopy(a);
    store.close();
    // B: everything in one open.
    const b = newPath();
    store = new SqliteStore(b);
    writeAll(store);
    await store.whenDurable();
    const logOnly = crashCopy(b);
    store.close();

    expect(restartState(withSnapshot, KNOWN)).toEqual(restartState(logOnly, KNOWN));
    expect(restartState(logOnly, KNOWN).agents).toEqual([
      { id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 },
    ]);
  });
});
