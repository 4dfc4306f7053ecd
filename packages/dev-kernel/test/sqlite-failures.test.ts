// What the SQLite store does when things go wrong: a failed commit rejects its waiters and leaves
// what reads see equal to the file; the file is locked against a second kernel; files it cannot read are
// refused with typed errors naming the file.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigurationError } from "@rebuno/protocol";
import { spawnRebunoDev } from "@rebuno/test-kit";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { startDevKernel } from "../src/kernel.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { GROUP_COMMIT_MAX } from "../src/store/sqlite-connection.js";
import { FORMAT_VERSION } from "../src/store/sqlite-schema.js";
import {
  STORE_EXIT_CODES,
  StoreCommitError,
  StoreError,
  StoreFormatError,
  StoreLockedError,
  StoreUnavailableError,
} from "../src/store/store-errors.js";
import { observe, restartState, tempDir } from "./sqlite-files.js";
import { KNOWN, newPath, PHASES } from "./sqlite-fixture.js";

/** The store's connection, to make its commits fail for real. */
function connection(store: SqliteStore): Database.Database {
  return (store as unknown as { file: { db: Database.Database } }).file.db;
}

/**
 * Make the commit of the open batch fail for real, the way a full disk fails it (at COMMIT, with
 * the statements before it done): a row that breaks a deferred foreign key, written on the store's
 * own connection inside the batch, is checked by SQLite only at COMMIT, which then fails.
 */
function breakCommit(store: SqliteStore): void {
  const db = connection(store);
  db.exec(`CREATE TABLE IF NOT EXISTS test_parent (id INTEGER PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS test_child (parent INTEGER REFERENCES test_parent (id) DEFERRABLE INITIALLY DEFERRED)`);
  db.pragma("foreign_keys = ON");
  store.transaction(() => {
    db.prepare("INSERT INTO test_child VALUES (1)").run();
  });
}

const COMMIT_FAILED = "FOREIGN KEY constraint failed";

describe("commit failure", () => {
  test("waiting answers reject, memory goes back to what the file holds, later writes work again", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    PHASES[0]!(store);
    await store.whenDurable();
    const durableState = observe(store, KNOWN);
    breakCommit(store);
    // Two transactions of one batch whose commit fails.
    store.transaction(() =>
      store.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "x".repeat(200_000), registeredAt: 2 }),
    );
    store.transaction(() => store.deleteExecution("p"));
    expect(store.getExecution("p")).toBeUndefined();
    const err = await store.whenDurable().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(StoreCommitError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_commit_failed", path, retryable: true });
    expect((err as Error).message).toBe(`writing to ${path} failed: ${COMMIT_FAILED}`);
    expect((err as Error).cause).toMatchObject({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" });
    // Reads see exactly the durable state: neither write of the failed batch survived.
    expect(observe(store, KNOWN)).toEqual(durableState);
    expect(restartState(path, KNOWN)).toEqual(durableState);
    // From the next turn on (see the next test), the store keeps working.
    await new Promise((r) => setImmediate(r));
    store.transaction(() => store.deleteExecution("p"));
    await store.whenDurable();
    expect(restartState(path, KNOWN)).toEqual(observe(store, KNOWN));
    expect(store.getExecution("p")).toBeUndefined();
    store.close();
  });

  test("a transaction that fills the batch gets the error itself; so does whenDurable() later in that turn", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    breakCommit(store); // in the batch, though not one of its writing transactions
    const big = "x".repeat(20_000);
    for (let i = 0; i < GROUP_COMMIT_MAX - 1; i++) {
      store.transaction(() => store.putAgent({ id: `a${i}`, webhookUrl: big, secret: "s", registeredAt: i }));
    }
    const waiting = store.whenDurable();
    expect(() =>
      store.transaction(() => store.putAgent({ id: "last", webhookUrl: big, secret: "s", registeredAt: 0 })),
    ).toThrow(StoreCommitError);
    await expect(waiting).rejects.toBeInstanceOf(StoreCommitError);
    // A request of the failed batch that asks only now must not be told its write is durable.
    await expect(store.whenDurable()).rejects.toBeInstanceOf(StoreCommitError);
    expect(store.listAgents()).toEqual([]);
    // Next turn: nothing pending, nothing failed.
    await new Promise((r) => setImmediate(r));
    await expect(store.whenDurable()).resolves.toBeUndefined();
    store.close();
    expect(restartState(path).agents).toEqual([]);
  });

  test("when the file cannot be read back either, the store refuses all further work", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    store.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
    await store.whenDurable();
    store.putAgent({ id: "b", webhookUrl: "http://b.test/", secret: "s", registeredAt: 1 });
    connection(store).close(); // the handle dies under the store
    await expect(store.whenDurable()).rejects.toBeInstanceOf(StoreCommitError);
    expect(() => store.transaction(() => store.getAgent("a"))).toThrow(StoreUnavailableError);
    expect(() =>
      store.putAgent({ id: "c", webhookUrl: "http://c.test/", secret: "s", registeredAt: 1 }),
    ).toThrow(StoreUnavailableError);
    await expect(store.whenDurable()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(() => store.close()).not.toThrow();
    // What was durable is still in the file.
    expect(restartState(path).agents).toEqual([
      { id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 },
    ]);
  });
});

describe("one kernel per file", () => {
  test("a second store on the same file gets StoreLockedError, until the first closes", () => {
    const path = newPath();
    const first = new SqliteStore(path);
    first.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
    let err: unknown;
    try {
      new SqliteStore(path);
    } catch (e) {
      err = e;
    }
    expect(StoreLockedError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_locked", path });
    expect((err as Error).message).toContain(path);
    first.close();
    // Reopening an existing file (no schema to create, nothing written at open) locks it too.
    const second = new SqliteStore(path);
    expect(second.getAgent("a")).toBeDefined();
    expect(() => new SqliteStore(path)).toThrow(StoreLockedError);
    second.close();
  });

  test("a second rebuno-dev process on the same file exits with the lock error", async () => {
    const dir = tempDir();
    const path = join(dir, "k.db");
    writeFileSync(join(dir, "dev.yaml"), "agents: []\n");
    const holder = new SqliteStore(path);
    const kernel = spawnRebunoDev([
      "--config",
      join(dir, "dev.yaml"),
      "--listen",
      "127.0.0.1:0",
      "--store",
      `sqlite:${path}`,
    ]);
    const { code } = await kernel.exited;
    holder.close();
    expect(code).toBe(STORE_EXIT_CODES.store_locked);
    expect(kernel.stderr()).toContain(`rebuno-dev: ${path} is in use by another rebuno-dev`);
  }, 30_000);
});

describe("files it cannot read", () => {
  const opening = (path: string) => {
    try {
      new SqliteStore(path).close();
    } catch (err) {
      return err;
    }
    throw new Error("opened");
  };

  test("the old normalized schema", () => {
    const path = newPath();
    const db = new Database(path);
    for (const t of ["executions", "events", "steps", "dispatches", "occurrences", "approvals"]) {
      db.exec(`CREATE TABLE ${t} (id TEXT PRIMARY KEY, row TEXT)`);
    }
    db.close();
    const err = opening(path);
    expect(StoreFormatError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_format", path });
    expect((err as Error).message).toMatch(
      new RegExp(`^${path} holds the dev kernel's old SQLite schema.*delete the file`),
    );
  });

  test("a newer format version", () => {
    const path = newPath();
    new SqliteStore(path).close();
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(FORMAT_VERSION + 1));
    db.close();
    const err = opening(path);
    expect(StoreFormatError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain(
      `${path} was written by a newer rebuno-dev (format version ${FORMAT_VERSION + 1}`,
    );
  });

  test("another application's database, and a file that is not SQLite", () => {
    const other = newPath();
    const db = new Database(other);
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY)");
    db.close();
    expect(opening(other)).toSatisfy(
      (e) =>
        StoreFormatError.isInstance(e) &&
        e.message ===
          `${other} is not a rebuno-dev store (it holds tables customers): point --store at a new path or at a file rebuno-dev created`,
    );
    const text = newPath();
    writeFileSync(
      text,
      "hello, this is not a database at all, just some text that is long enough\n".repeat(20),
    );
    expect(opening(text)).toSatisfy(
      (e) => StoreFormatError.isInstance(e) && e.message.startsWith(`${text} is not an SQLite database`),
    );
  });

  test("a log row that does not replay", () => {
    const path = newPath();
    // A redo-log file (format 1, no sums) whose row is a bug of ours, not a damaged disk: the
    // conversion's replay itself refuses it.
    const put = (ops: string) => {
      const db = new Database(path);
      db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
        INSERT OR REPLACE INTO meta VALUES ('format', 'rebuno-dev-redo-log'), ('version', '1');`);
      db.prepare("INSERT OR REPLACE INTO log (id, ops) VALUES (1, ?)").run(ops);
      db.close();
    };
    put('[["putAgent",{"id":"a"}],["dropTable","x"]]');
    expect(opening(path)).toSatisfy(
      (e) =>
        StoreFormatError.isInstance(e) &&
        e.message.startsWith(`${path}: log row 1 cannot be replayed: op 1 is not a known store write`),
    );
    put('[["updateStep",{"executionId":"e","stepId":"s"}]]');
    expect(opening(path)).toSatisfy(
      (e) =>
        StoreFormatError.isInstance(e) &&
        e.message.includes("log row 1 cannot be replayed: a write failed: step s does not exist"),
    );
  });

  test("bad options and paths", () => {
    expect(() => new SqliteStore(newPath(), { synchronous: "OFF" as "FULL" })).toThrow(ConfigurationError);
    const missing = join(tempDir(), "no", "such", "dir", "k.db");
    expect(opening(missing)).toSatisfy(
      (e) => StoreError.isInstance(e) && e.message.startsWith(`cannot open ${missing}`),
    );
  });

  test("startDevKernel passes the store options through (synchronous FULL, quick check off)", async () => {
    const path = newPath();
    const kernel = await startDevKernel({ store: { sqlite: path, synchronous: "FULL", quickCheck: false } });
    try {
      expect(kernel.store).toBeInstanceOf(SqliteStore);
      expect(connection(kernel.store as SqliteStore).pragma("synchronous", { simple: true })).toBe(2);
    } finally {
      await kernel.close();
    }
  });

  test("synchronous FULL works", async () => {
    const path = newPath();
    const store = new SqliteStore(path, { synchronous: "FULL" });
    expect(connection(store).pragma("synchronous", { simple: true })).toBe(2);
    store.putAgent({ id: "a", webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
    await store.whenDurable();
    expect(restartState(path).agents).toHaveLength(1);
    store.close();
  });
});
