// The SQLite store's cold tier: settled executions leave memory for the file's cold tables, read
// exactly as they did in memory, come back on any write, survive restarts and crashes, and a
// failed commit leaves memory and file consistent. Older files are upgraded; damaged cold records
// and malformed files are refused with typed errors.
import { ConfigurationError } from "@rebuno/protocol";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { FORMAT_VERSION } from "../src/store/sqlite-file.js";
import { StoreCommitError, StoreCorruptError, StoreFormatError } from "../src/store/store-errors.js";
import type { Store } from "../src/store/types.js";
import {
  COLD_KNOWN,
  expectArchived,
  hotCount,
  pagedReads,
  SETTLED_COUNT,
  UNSETTLED,
  writeColdFixture,
} from "./cold-fixture.js";
import { crashCopy, observe, restartState } from "./sqlite-files.js";
import { newPath } from "./sqlite-fixture.js";
import { dispatch, execution, step } from "./store-rows.js";

const manual = { coldAfterMs: Number.POSITIVE_INFINITY }; // only archiveSettled() moves anything

function both(): { memory: MemoryStore; store: SqliteStore; path: string } {
  const path = newPath();
  const memory = new MemoryStore();
  const store = new SqliteStore(path, manual);
  writeColdFixture(memory);
  writeColdFixture(store);
  return { memory, store, path };
}

const everything = (s: Store) => ({ state: observe(s, COLD_KNOWN), reads: pagedReads(s) });

/** Later writes touching cold executions, applied the same way to any store. */
function laterWrites(s: Store): void {
  s.updateExecution(
    execution("e01", {
      createdAt: 101,
      session: "s2",
      status: "completed",
      updatedAt: 5000,
      outputJson: "2",
    }),
  );
  s.appendEvent("e04", "late.event", '{"late":1.0}', 5001);
  s.insertStep(step("e07", "s9", { status: "succeeded" }));
  s.updateApproval({
    id: "ap-e06",
    executionId: "e06",
    stepId: "s2",
    status: "granted",
    timeoutAt: 900,
    createdAt: 56,
    rationale: "again",
  });
  s.insertCheckpoint({ executionId: "e10", key: "r", generation: 3, checkpointRef: "c3", coveredSeq: 3 });
  s.setOccurrence("d-e11", "tool_call", "t", "h", 4); // a loose counter of a cold dispatch
  s.deleteExecution("e11"); // cold: dropped with its loose counter
  s.deleteExecution("p"); // cold parent; its children stay
  s.transaction(() => {
    s.updateExecution(execution("e08", { createdAt: 108, session: "s1", status: "failed", updatedAt: 5002 }));
    s.deleteExecution("e12");
  });
  expect(() => s.insertExecution(execution("e13"))).toThrow(/already exists/);
  expect(() => s.insertDispatch(dispatch("d-e14", "x"))).toThrow(/already exists/);
  expect(() =>
    s.insertApproval({
      id: "ap-e15",
      executionId: "y",
      stepId: "s",
      status: "pending",
      timeoutAt: 1,
      createdAt: 1,
    }),
  ).toThrow(/already exists/);
}

describe("cold tier", () => {
  test("settled executions leave memory and read exactly as before, before and after their commit", async () => {
    const { memory, store } = both();
    const expected = everything(memory);
    expect(everything(store)).toEqual(expected);
    expectArchived(store, store.archiveSettled());
    expect(everything(store)).toEqual(expected); // overlay: the batch is not committed yet
    await store.whenDurable();
    expect(everything(store)).toEqual(expected); // committed cold rows
    for (const id of UNSETTLED) expect(store.getExecution(id)).toBeDefined();
    expect(store.archiveSettled()).toBe(0);
    store.close();
  });

  test("a write to a cold execution brings it back; the same writes give the same state as memory", async () => {
    const { memory, store, path } = both();
    store.archiveSettled();
    await store.whenDurable();
    laterWrites(memory);
    laterWrites(store);
    const expected = everything(memory);
    expect(everything(store)).toEqual(expected);
    // Brought back: the five updated ones (e01, e04, e07, e06, e10, e08); deleted ones are gone.
    expect(hotCount(store)).toBe(UNSETTLED.length + 6);
    await store.whenDurable();
    expect(restartState(path, COLD_KNOWN)).toEqual(expected.state);
    expect(store.archiveSettled()).toBe(6);
    expect(everything(store)).toEqual(expected);
    store.close();
    const reopened = new SqliteStore(path, manual);
    expect(everything(reopened)).toEqual(expected);
    expect(hotCount(reopened)).toBe(UNSETTLED.length);
    reopened.close();
  });

  test("a transaction that brings an execution back and throws leaves it cold and unchanged", async () => {
    const { memory, store } = both();
    store.archiveSettled();
    await store.whenDurable();
    const expected = everything(memory);
    expect(() =>
      store.transaction(() => {
        store.appendEvent("e02", "x", "{}", 1);
        store.deleteExecution("e03");
        store.updateExecution(execution("e05", { status: "running" }));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(hotCount(store)).toBe(UNSETTLED.length);
    expect(everything(store)).toEqual(expected);
    await store.whenDurable();
    store.close();
  });

  test("restart: cold executions stay on disk, the snapshot holds only memory's executions", async () => {
    const { memory, store, path } = both();
    const expected = everything(memory);
    await store.whenDurable();
    store.archiveSettled();
    const beforeCommit = crashCopy(path); // a crash before the archive batch commits
    await store.whenDurable();
    const afterCommit = crashCopy(path);
    store.close();
    for (const [copy, hot] of [
      [beforeCommit, UNSETTLED.length + SETTLED_COUNT],
      [afterCommit, UNSETTLED.length],
      [path, UNSETTLED.length],
    ] as const) {
      const reopened = new SqliteStore(copy, manual);
      expect(everything(reopened)).toEqual(expected);
      expect(hotCount(reopened)).toBe(hot);
      reopened.close();
    }
  });

  test("a failed commit of an archive batch: its waiters reject, memory goes back to the file", async () => {
    const { memory, store, path } = both();
    await store.whenDurable();
    const expected = everything(memory);
    const db = (store as unknown as { state: { log: { db: Database.Database } } }).state.log.db;
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
    expect(store.archiveSettled()).toBe(SETTLED_COUNT);
    const err = await store.whenDurable().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(StoreCommitError.isInstance(err)).toBe(true);
    expect(hotCount(store)).toBe(UNSETTLED.length + SETTLED_COUNT);
    expect(everything(store)).toEqual(expected);
    expect(restartState(path, COLD_KNOWN)).toEqual(expected.state);
    db.pragma("max_page_count = 1073741823");
    await new Promise((r) => setImmediate(r)); // a failure rejects every whenDurable() of its turn
    expectArchived(store, store.archiveSettled());
    await store.whenDurable();
    expect(everything(store)).toEqual(expected);
    store.close();
  });

  test("the sweep moves settled executions by itself once they were quiet for coldAfterMs", async () => {
    const path = newPath();
    const store = new SqliteStore(path, { coldAfterMs: 20 });
    writeColdFixture(store);
    const deadline = Date.now() + 20_000;
    while (hotCount(store) > UNSETTLED.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(hotCount(store)).toBe(UNSETTLED.length);
    store.close();
  });

  test("coldAfterMs must be a number ≥ 0", () => {
    for (const bad of [-1, Number.NaN, "1" as unknown as number]) {
      expect(() => new SqliteStore(newPath(), { coldAfterMs: bad })).toThrow(ConfigurationError);
    }
  });
});

describe("cold tier file format", () => {
  test("a format-2 file (every execution in its snapshot) is upgraded at open and archives as usual", () => {
    const { memory, store, path } = both();
    store.close();
    const db = new Database(path);
    db.exec("DROP TABLE cold_execution; DROP TABLE cold_dispatch; DROP TABLE cold_approval;");
    db.exec("UPDATE meta SET value = '2' WHERE key = 'version'");
    db.close();
    const upgraded = new SqliteStore(path, manual);
    const expected = everything(memory);
    expect(everything(upgraded)).toEqual(expected);
    expectArchived(upgraded, upgraded.archiveSettled());
    expect(everything(upgraded)).toEqual(expected);
    upgraded.close();
    const check = new Database(path);
    expect(check.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get()).toBe(
      String(FORMAT_VERSION),
    );
    expect(check.prepare("SELECT count(*) FROM cold_execution").pluck().get()).toBe(SETTLED_COUNT);
    check.close();
  });

  test("a format-3 file without its cold tables is refused with StoreFormatError", () => {
    const path = newPath();
    new SqliteStore(path, manual).close();
    const db = new Database(path);
    db.exec("DROP TABLE cold_dispatch");
    db.close();
    let err: unknown;
    try {
      new SqliteStore(path, manual).close();
    } catch (e) {
      err = e;
    }
    expect(StoreFormatError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_format", path });
    expect((err as Error).message).toBe(`${path} lacks its cold_dispatch table`);
  });

  test("a damaged cold record is refused with StoreCorruptError when read, and the file is left as it is", async () => {
    const { store, path } = both();
    store.archiveSettled();
    await store.whenDurable();
    store.close();
    const db = new Database(path);
    db.prepare("UPDATE cold_execution SET bundle = replace(bundle, '1.0', '2.0') WHERE id = 'e04'").run();
    db.prepare("UPDATE cold_execution SET row = '{not json' WHERE id = 'e05'").run();
    db.close();
    const reopened = new SqliteStore(path, manual);
    expect(reopened.getExecution("e04")?.status).toBe("failed"); // the row itself is intact
    const read = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    for (const err of [
      read(() => reopened.listEvents("e04", 0, 10)),
      read(() => reopened.getExecution("e05")),
    ]) {
      expect(StoreCorruptError.isInstance(err)).toBe(true);
      expect(err).toMatchObject({ code: "store_corrupt", path });
    }
    expect((read(() => reopened.listSteps("e04")) as Error).message).toBe(
      `${path} is damaged: the cold record of execution e04 fails its checksum. Restore the file from a backup; it was left as it is`,
    );
    // A write to it is refused the same way and changes nothing.
    expect(StoreCorruptError.isInstance(read(() => reopened.appendEvent("e04", "x", "{}", 1)))).toBe(true);
    expect(reopened.listEvents("e07", 0, 10).length).toBe(2);
    // Retention can still delete it: deleting never reads the damaged bundle.
    reopened.deleteExecution("e04");
    expect(reopened.getExecution("e04")).toBeUndefined();
    await reopened.whenDurable();
    reopened.close();
  });
});
