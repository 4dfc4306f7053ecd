/**
 * The SQLite file behind {@link SqliteStore}: a durable redo log of store writes, plus a snapshot
 * that compaction writes in place of the log it summarizes.
 *
 * Tables (format version {@link FORMAT_VERSION}):
 * - `meta(key, value)`: `format` = {@link FORMAT_NAME}, `version`.
 * - `snapshot(id INTEGER PRIMARY KEY, ops TEXT)`: ops rebuilding the state at the last compaction.
 * - `log(id INTEGER PRIMARY KEY, ops TEXT)`: ops of every batch committed since, in order.
 * Each `ops` text is a JSON array of redo ops (redo-ops.ts). Rows are only ever appended, so a
 * commit dirties the rightmost leaf of one B-tree (plus, when that leaf fills up, the new leaf, its
 * parent and the header page, and overflow pages of a large row), no matter how many executions
 * its batch touched; the old normalized schema dirtied ≈ 8 pages per request.
 *
 * The connection uses `locking_mode = EXCLUSIVE`: it takes the write lock at open and keeps it until
 * close, so a second kernel on the same file fails at once with {@link StoreLockedError} instead of
 * growing a second, diverging in-memory state. (It also keeps WAL's index in process memory: no
 * `-shm` file.) The operating system drops the lock when the process dies, SIGKILL included.
 */
import Database from "better-sqlite3";
import type { MemoryStore } from "./memory.js";
import { applyOp, BadOpError, decodeOps, encodeOps, type RedoOp } from "./redo-ops.js";
import { snapshotOps } from "./snapshot.js";
import { describe, StoreError, StoreFormatError, StoreLockedError } from "./store-errors.js";

/** Value of `meta.format`: tells our files from other SQLite databases. */
export const FORMAT_NAME = "rebuno-dev-redo-log";
/** Value of `meta.version` this code writes; it refuses files with a higher one. */
export const FORMAT_VERSION = 1;

/** Tables of the dev kernel's previous, normalized SQLite schema (before the redo log). */
const OLD_SCHEMA_TABLES = ["executions", "events", "steps", "dispatches", "occurrences"];

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE snapshot (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
CREATE TABLE log (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
`;

/** Options of the file (see `SqliteStoreOptions`). */
export interface RedoLogOptions {
  readonly synchronous: "NORMAL" | "FULL";
  readonly nativeBinding?: string | undefined;
}

/** Sizes found while loading, to decide on compaction. */
export interface LoadStats {
  readonly snapshotChars: number;
  readonly logChars: number;
}

type Row = { id: number; ops: string };

/** The open, locked file (see the module comment). */
export class RedoLog {
  private readonly db: Database.Database;
  private readonly insertLog: Database.Statement<[string]>;

  constructor(
    readonly path: string,
    options: RedoLogOptions,
  ) {
    try {
      this.db = new Database(
        path,
        options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding },
      );
    } catch (err) {
      throw new StoreError(path, `cannot open ${path}: ${describe(err)}`, { cause: err });
    }
    try {
      this.configure(options.synchronous);
      this.insertLog = this.db.prepare("INSERT INTO log (ops) VALUES (?)");
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  private configure(synchronous: "NORMAL" | "FULL"): void {
    const { db, path } = this;
    try {
      // Before the first read: the lock is taken by that read and then kept (module comment).
      db.pragma("locking_mode = EXCLUSIVE");
      // A lock held by another kernel is held until it stops: waiting would only delay the error.
      db.pragma("busy_timeout = 0");
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") {
        throw new StoreError(path, `${path}: SQLite cannot use WAL mode there (${String(mode)}); use a file`);
      }
      db.pragma(`synchronous = ${synchronous}`);
      // wal_autocheckpoint stays at SQLite's 1000 pages (≈ 4 MB). Under NORMAL a checkpoint
      // fsyncs the WAL and then the file, inside the commit that triggers it; with an append-only
      // log the bytes synced per commit are the same at any interval, so the shortest stall wins.
      db.exec("BEGIN IMMEDIATE"); // the write lock, kept from here on
      try {
        this.checkFormat();
        db.exec("COMMIT");
      } catch (err) {
        this.rollback();
        throw err;
      }
    } catch (err) {
      throw classifySqliteError(path, err, "open");
    }
  }

  /** Create the tables in an empty file, or check that the file is ours and not newer. */
  private checkFormat(): void {
    const { db, path } = this;
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    if (tables.length === 0) {
      db.exec(SCHEMA);
      const put = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
      put.run("format", FORMAT_NAME);
      put.run("version", String(FORMAT_VERSION));
      return;
    }
    if (!tables.includes("meta")) {
      if (OLD_SCHEMA_TABLES.every((t) => tables.includes(t))) {
        throw new StoreFormatError(
          path,
          `${path} holds the dev kernel's old SQLite schema (tables executions, steps, events…), ` +
            "which this version no longer reads: delete the file (and its -wal/-shm files) to start " +
            "empty, or point --store at another path",
        );
      }
      throw notOurs(path, `it holds tables ${tables.join(", ")}`);
    }
    const meta = new Map(
      (db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    );
    if (meta.get("format") !== FORMAT_NAME) throw notOurs(path, `its format is ${meta.get("format")}`);
    const version = Number(meta.get("version"));
    if (!Number.isInteger(version) || version < 1) {
      throw new StoreFormatError(path, `${path} has an invalid format version ${meta.get("version")}`);
    }
    if (version > FORMAT_VERSION) {
      throw new StoreFormatError(
        path,
        `${path} was written by a newer rebuno-dev (format version ${version}; this one reads up to ` +
          `${FORMAT_VERSION}): upgrade @rebuno/dev-kernel, or point --store at another path`,
      );
    }
    for (const t of ["snapshot", "log"]) {
      if (!tables.includes(t)) throw new StoreFormatError(path, `${path} lacks its ${t} table`);
    }
  }

  /** Replay the snapshot, then the log, into `memory` (a fresh store). */
  load(memory: MemoryStore): LoadStats {
    try {
      const snapshotChars = this.replay("snapshot", memory);
      const logChars = this.replay("log", memory);
      return { snapshotChars, logChars };
    } catch (err) {
      throw classifySqliteError(this.path, err, "read"); // reading itself failed (I/O, corrupt page)
    }
  }

  private replay(table: "snapshot" | "log", memory: MemoryStore): number {
    let chars = 0;
    for (const row of this.db
      .prepare(`SELECT id, ops FROM ${table} ORDER BY id`)
      .iterate() as Iterable<Row>) {
      chars += row.ops.length;
      let ops: RedoOp[];
      try {
        ops = decodeOps(row.ops);
        for (const op of ops) applyOp(memory, op);
      } catch (err) {
        // An op that cannot be decoded, or that the store refuses (a row inserted twice…), means
        // the file is not what this code wrote; guessing past it would serve a wrong state.
        const why = err instanceof BadOpError ? err.message : `a write failed: ${describe(err)}`;
        throw new StoreFormatError(
          this.path,
          `${this.path}: ${table} row ${row.id} cannot be replayed: ${why}`,
          {
            cause: err,
          },
        );
      }
    }
    return chars;
  }

  /**
   * Append one batch (one SQLite transaction); returns the characters written. A batch normally
   * fits one row, which then needs no explicit BEGIN/COMMIT: the insert commits by itself.
   */
  append(ops: readonly RedoOp[]): number {
    const rows = [...encodeOps(ops)];
    let chars = 0;
    for (const text of rows) chars += text.length;
    if (rows.length === 1) {
      this.insertLog.run(rows[0]!);
      return chars;
    }
    this.inTransaction(() => {
      for (const text of rows) this.insertLog.run(text);
    });
    return chars;
  }

  /**
   * Replace snapshot and log by a snapshot of `memory`, in one transaction (a failure leaves both
   * as they were). `memory` must hold exactly what the file holds: nothing pending. Returns the
   * snapshot's characters.
   */
  compact(memory: MemoryStore): number {
    let chars = 0;
    this.inTransaction(() => {
      this.db.exec("DELETE FROM snapshot");
      const insert = this.db.prepare("INSERT INTO snapshot (ops) VALUES (?)");
      for (const text of encodeOps(snapshotOps(memory))) {
        insert.run(text);
        chars += text.length;
      }
      this.db.exec("DELETE FROM log");
    });
    return chars;
  }

  private inTransaction(fn: () => void): void {
    this.db.exec("BEGIN");
    try {
      fn();
      this.db.exec("COMMIT");
    } catch (err) {
      this.rollback();
      throw err;
    }
  }

  /** End a failed transaction, if SQLite did not already (a failed COMMIT may leave it open). */
  private rollback(): void {
    if (!this.db.inTransaction) return;
    try {
      this.db.exec("ROLLBACK");
    } catch {
      // The connection itself failed; the error being thrown already says why.
    }
  }

  /** Close the connection (checkpointing the WAL into the file) and release the lock. */
  close(): void {
    this.db.close();
  }
}

function notOurs(path: string, why: string): StoreFormatError {
  return new StoreFormatError(
    path,
    `${path} is not a rebuno-dev store (${why}): point --store at a new path or at a file rebuno-dev created`,
  );
}

/** Map what SQLite said while opening or reading the file to the store's typed errors. */
function classifySqliteError(path: string, err: unknown, doing: "open" | "read"): StoreError {
  if (StoreError.isInstance(err)) return err;
  const code = (err as { code?: unknown }).code;
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return new StoreLockedError(path, { cause: err });
  if (code === "SQLITE_NOTADB") {
    return new StoreFormatError(path, `${path} is not an SQLite database (${describe(err)})`, { cause: err });
  }
  if (code === "SQLITE_CORRUPT") {
    return new StoreFormatError(path, `${path} is corrupt (${describe(err)}): restore it or delete it`, {
      cause: err,
    });
  }
  return new StoreError(path, `cannot ${doing} ${path}: ${describe(err)}`, { cause: err });
}
