// The SQLite store as a memory store plus a redo log (src/store/durable-memory.ts, sqlite-log.ts):
// reopening a file replays its snapshot and log into the same observable state as before close,
// snapshot + log replays like the log alone, and compaction runs at open, at close and while running.
import { describe, expect, test } from "vitest";
import { RUN_COMPACT_MIN_CHARS } from "../src/store/durable-memory.js";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { crashCopy, fileContents, observe, restartState } from "./sqlite-files.js";
import { EXACT, KNOWN, newPath, PHASES, writeAll } from "./sqlite-fixture.js";

describe("replay", () => {
  test("reopening gives the state before close: every table, payload texts byte-exact, deletions", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    writeAll(store);
    await store.whenDurable();
    const before = observe(store, KNOWN);
    // The same calls on a memory store give the same state (the SQLite store is that store + a log),
    // except that the memory store puts approvals restored by an undone delete at the end; the
    // SQLite store rebuilds from the file instead, so its listing keeps creation order.
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

    // Log only (a crash before close), then snapshot only (after close).
    expect(fileContents(path).snapshotRows).toBe(0);
    expect(restartState(path, KNOWN)).toEqual(before);
    store.close();
    expect(fileContents(path)).toMatchObject({ logRows: 0, snapshotRows: 1 });
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

  test("snapshot + log replays to the same state as the log alone", async () => {
    // A: phase 1 compacted into a snapshot (close), phases 2-3 in the log of the reopened file.
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
    // B: everything in the log.
    const b = newPath();
    store = new SqliteStore(b);
    writeAll(store);
    await store.whenDurable();
    const logOnly = crashCopy(b);
    store.close();

    expect(fileContents(withSnapshot)).toMatchObject({ snapshotRows: 1 });
    expect(fileContents(withSnapshot).logRows).toBeGreaterThan(0);
    expect(fileContents(logOnly)).toMatchObject({ snapshotRows: 0 });
    expect(restartState(withSnapshot, KNOWN)).toEqual(restartState(logOnly, KNOWN));
    expect(restartState(logOnly, KNOWN).agents).toEqual([
      { id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 },
    ]);
  });
});

describe("compaction", () => {
  test("at open, when the log outgrew the snapshot; not when it is smaller", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    writeAll(store);
    await store.whenDurable();
    const crashed = crashCopy(path); // log only: longer than the (empty) snapshot
    store.close();
    const reopened = new SqliteStore(crashed);
    // Compacted while opening, before any close.
    expect(fileContents(crashed)).toMatchObject({ logRows: 0, snapshotRows: 1 });
    const state = observe(reopened, KNOWN);
    // A small write after a big snapshot stays in the log at the next open.
    reopened.putAgent({ id: "late", webhookUrl: "http://l.test/", secret: "s", registeredAt: 2 });
    await reopened.whenDurable();
    const crashedAgain = crashCopy(crashed);
    reopened.close();
    const again = new SqliteStore(crashedAgain);
    expect(fileContents(crashedAgain)).toMatchObject({ logRows: 1, snapshotRows: 1 });
    expect(observe(again, KNOWN)).toEqual({
      ...state,
      agents: [...(state.agents as []), expect.objectContaining({ id: "late" })],
    });
    again.close();
  });

  test("at close", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    writeAll(store);
    await store.whenDurable();
    expect(fileContents(path)).toMatchObject({ logRows: 1, snapshotRows: 0 });
    const state = observe(store, KNOWN);
    store.close();
    expect(fileContents(path)).toMatchObject({ logRows: 0, snapshotRows: 1 });
    expect(restartState(path, KNOWN)).toEqual(state);
  });

  test("while running, once the log is long and several times the snapshot", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    // One agent rewritten with a 1 MiB URL: the log grows, the state does not.
    const big = "x".repeat(1 << 20);
    const rounds = Math.ceil(RUN_COMPACT_MIN_CHARS / big.length) + 1;
    for (let i = 0; i < rounds; i++) {
      store.putAgent({ id: "a", webhookUrl: `http://${big}/${i}`, secret: "s", registeredAt: i });
      await store.whenDurable();
    }
    // Compaction runs a row per event-loop turn, then deletes the garbage a few rows per turn.
    for (
      let turn = 0;
      turn < 1000 && fileContents(path).garbageRows + fileContents(path).logRows > 1;
      turn++
    ) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const contents = fileContents(path);
    expect(contents.snapshotRows).toBeGreaterThan(0);
    expect(contents.logRows).toBeLessThan(rounds);
    expect(contents.garbageRows).toBe(0);
    expect(restartState(path).agents).toEqual(store.listAgents());
    store.close();
  }, 60_000);
});
