/**
 * The SQLite file behind {@link SqliteStore}: a durable redo log of store writes, plus a snapshot
 * that compaction writes in place of the log it summarizes.
 *
 * Tables (format version `FORMAT_VERSION`, sqlite-file.ts):
 * - `meta(key, value)`: `format` = `FORMAT_NAME`, `version`, `generation` (compactions + 1),
 *   `log_base` (the last log row the current snapshot includes).
 * - `snapshot(id INTEGER PRIMARY KEY, generation INTEGER, ops TEXT, sum TEXT)`: the rows of the
 *   current generation rebuild the state at the last compaction.
 * - `log(id INTEGER PRIMARY KEY, ops TEXT, sum TEXT)`: ops of every batch committed, in order; the
 *   rows after `log_base` are the ones committed since that state.
 * Other rows are garbage of a compaction (sqlite-compaction.ts): loading ignores them.
 * Each `ops` text is a JSON array of redo ops (redo-ops.ts); `sum` is its checksum, and the seal
 * file records what was acknowledged (sqlite-seal.ts). Rows are only ever appended, so a commit
 * dirties the rightmost leaf of one B-tree (plus, when that leaf fills up, the new leaf, its parent
 * and the header page, and overflow pages of a large row), no matter how many executions its batch
 * touched.
 *
 * Opening refuses a file that is neither new nor a valid store (sqlite-file.ts), runs SQLite's
 * `quick_check` (unless turned off), and loading checks every row's sum and the seal: a damaged
 * store is refused with {@link StoreCorruptError}, never served in part.
 *
 * The connection uses `locking_mode = EXCLUSIVE`: it takes the write lock at open and keeps it until
 * close, so a second kernel on the same file fails at once with {@link StoreLockedError} instead of
 * growing a second, diverging in-memory state. (It also keeps WAL's index in process memory: no
 * `-shm` file.) The operating system drops the lock when the process dies, SIGKILL included.
 */
import { copyFileSync, statSync } from "node:fs";
import type Database from "better-sqlite3";
import { ColdTier } from "./cold-tier.js";
import type { MemoryStore } from "./memory.js";
import { applyOp, BadOpError, decodeOps, encodeOps, type RedoOp } from "./redo-ops.js";
import { snapshotOps } from "./snapshot.js";
import { deleteGarbage, PendingSnapshot } from "./sqlite-compaction.js";
import { loadSqliteDriver, openSqliteDatabase } from "./sqlite-driver.js";
import {
  checkFormat,
  classifySqliteError,
  prepareStoreFile,
  readMeta,
  runQuickCheck,
  upgradeFromVersion1,
  upgradeFromVersion2,
} from "./sqlite-file.js";
import { chainNext, chainStart, rowSum, SealFile, type SealState } from "./sqlite-seal.js";
import { describe, StoreCorruptError, StoreError, StoreFormatError } from "./store-errors.js";

/** Options of the file (see `SqliteStoreOptions`). */
export interface RedoLogOptions {
  readonly synchronous: "NORMAL" | "FULL";
  /** Run `PRAGMA quick_check` at open (default true). */
  readonly quickCheck?: boolean | undefined;
  readonly nativeBinding?: string | undefined;
}

/** Sizes found while loading, to decide on compaction. */
export interface LoadStats {
  readonly snapshotChars: number;
  readonly logChars: number;
}

type Row = { id: number; ops: string; sum: string | null };

/** The open, locked file (see the module comment). */
export class RedoLog {
  private readonly db: Database.Database;
  private readonly seal: SealFile;
  private readonly insertLog: Database.Statement<[number, string, string]>;
  /** The cold tables (cold-tier.ts); their changes commit with the batch that records them. */
  readonly cold: ColdTier;
  /** The compaction generation, its log base, and the rows and chain of it that the file holds. */
  private generation = 1;
  private logBase = 0;
  private rows = 0;
  private chain = "";
  private nextLogId = 1;
  /** The compaction in progress, if any. */
  private pending: PendingSnapshot | undefined;

  constructor(
    readonly path: string,
    options: RedoLogOptions,
  ) {
    loadSqliteDriver(path); // before touching the file: without better-sqlite3 nothing else matters
    const created = prepareStoreFile(path, options.nativeBinding);
    this.seal = new SealFile(path);
    // A seal left beside a store that was deleted speaks of records this new file never had.
    if (created) this.seal.remove();
    try {
      this.db = openSqliteDatabase(path, path, options.nativeBinding);
    } catch (err) {
      throw classifySqliteError(path, err, "open");
    }
    try {
      this.configure(options.synchronous, options.quickCheck ?? true);
      this.insertLog = this.db.prepare("INSERT INTO log (id, ops, sum) VALUES (?, ?, ?)");
      this.cold = new ColdTier(this.db, path);
    } catch (err) {
      throw this.abandon(err);
    }
  }

  private configure(synchronous: "NORMAL" | "FULL", quickCheck: boolean): void {
    const { db, path } = this;
    try {
      // Before the first read: the lock is taken by that read and then kept (module comment).
      db.pragma("locking_mode = EXCLUSIVE");
      // A lock held by another kernel is held until it stops: waiting would only delay the error.
      db.pragma("busy_timeout = 0");
      // Read-only until the file is known to be ours: a foreign file is refused unchanged.
      const version = checkFormat(db, path);
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
        if (quickCheck) runQuickCheck(db, path);
        if (version < 2) upgradeFromVersion1(db);
        if (version < 3) upgradeFromVersion2(db);
        const meta = readMeta(db);
        this.generation = Number(meta.get("generation"));
        this.logBase = Number(meta.get("log_base"));
        if (
          !(this.generation >= 1 && this.logBase >= 0 && Number.isSafeInteger(this.generation + this.logBase))
        ) {
          throw new StoreCorruptError(
            path,
            `${path} has an invalid generation or log base in its meta table`,
          );
        }
        db.exec("COMMIT");
      } catch (err) {
        this.rollback();
        throw err;
      }
    } catch (err) {
      throw classifySqliteError(path, err, "open");
    }
  }

  /**
   * Replay the snapshot, then the log, into `memory` (a fresh store), checking every row's sum and
   * that the file holds everything the seal says was acknowledged.
   */
  load(memory: MemoryStore): LoadStats {
    const seal = this.seal.read();
    const state = { rows: 0, chain: chainStart(this.generation), lastLogId: this.logBase };
    let snapshotChars: number;
    let logChars: number;
    try {
      snapshotChars = this.replay("snapshot", memory, state, seal);
      logChars = this.replay("log", memory, state, seal);
    } catch (err) {
      throw classifySqliteError(this.path, err, "read"); // reading itself failed (I/O, corrupt page)
    }
    if (seal !== undefined) this.checkSealHeld(seal, state.rows);
    this.rows = state.rows;
    this.chain = state.chain;
    this.nextLogId = state.lastLogId + 1;
    return { snapshotChars, logChars };
  }

  private replay(
    table: "snapshot" | "log",
    memory: MemoryStore,
    state: { rows: number; chain: string; lastLogId: number },
    seal: SealState | undefined,
  ): number {
    let chars = 0;
    const rows =
      table === "snapshot"
        ? this.db
            .prepare("SELECT id, ops, sum FROM snapshot WHERE generation = ? ORDER BY id")
            .iterate(this.generation)
        : this.db.prepare("SELECT id, ops, sum FROM log WHERE id > ? ORDER BY id").iterate(this.logBase);
    for (const row of rows as Iterable<Row>) {
      if (row.sum !== rowSum(table, table === "log" ? 0 : this.generation, row.id, row.ops)) {
        throw new StoreCorruptError(
          this.path,
          `${this.path}: ${table} row ${row.id} fails its checksum: the record changed after it was ` +
            "written (a damaged disk or an edited file). Restore the file from a backup; it was left as it is",
        );
      }
      state.chain = chainNext(state.chain, row.sum);
      state.rows++;
      if (table === "log") state.lastLogId = row.id;
      if (seal?.generation === this.generation && seal.rows === state.rows && seal.chain !== state.chain) {
        throw this.lost(`its first ${seal.rows} records differ from the ones acknowledged`);
      }
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

  /** The file must hold at least what the seal says was acknowledged. */
  private checkSealHeld(seal: SealState, rows: number): void {
    if (seal.generation > this.generation) {
      throw this.lost(
        `it is at compaction generation ${this.generation}, but generation ${seal.generation} was acknowledged`,
      );
    }
    if (seal.generation === this.generation && rows < seal.rows) {
      throw this.lost(
        `it holds ${rows} records of generation ${this.generation}, but ${seal.rows} were acknowledged`,
      );
    }
  }

  private lost(what: string): StoreCorruptError {
    return new StoreCorruptError(
      this.path,
      `${this.path} holds less than the kernel acknowledged (${what}; see ${this.seal.path}): the end of ` +
        "its WAL is damaged or missing, or an older copy of the file was put in its place. Refusing to " +
        "start rather than silently undo acknowledged work: restore the file (and its -wal) from a " +
        `backup, or delete ${this.seal.path} to accept what the file holds`,
    );
  }

  /** Record in the seal file what the file holds now (after opening, loading or reloading). */
  writeSeal(): void {
    this.seal.write({ generation: this.generation, rows: this.rows, chain: this.chain });
  }

  /**
   * Append one batch (one SQLite transaction, with the cold-table changes it records) and seal it;
   * returns the characters written. A batch normally fits one row and changes no cold table, and
   * then needs no explicit BEGIN/COMMIT: the insert commits by itself.
   */
  append(ops: readonly RedoOp[]): number {
    const texts = [...encodeOps(ops)];
    let chars = 0;
    let id = this.nextLogId;
    let chain = this.chain;
    const rows: [number, string, string][] = [];
    for (const text of texts) {
      const sum = rowSum("log", 0, id, text);
      rows.push([id++, text, sum]);
      chain = chainNext(chain, sum);
      chars += text.length;
    }
    const cold = this.cold.dirty;
    if (rows.length === 1 && !cold) this.insertLog.run(...rows[0]!);
    else
      this.inTransaction(() => {
        for (const r of rows) this.insertLog.run(...r);
        if (cold) this.cold.flush();
      });
    if (cold) this.cold.committed();
    this.nextLogId = id;
    this.rows += rows.length;
    this.chain = chain;
    for (const r of rows) this.pending?.logSums.push(r[2]);
    this.writeSeal();
    return chars;
  }

  /**
   * Start a compaction (sqlite-compaction.ts): fix the state to write as `memory`'s, which must
   * hold exactly what the file holds (nothing pending). Replaces one already in progress.
   */
  startCompaction(memory: MemoryStore): PendingSnapshot {
    this.pending = undefined;
    while (this.collectGarbage(1024)) {} // rows of a compaction cancelled or cut short by a crash
    this.pending = new PendingSnapshot(this.db, snapshotOps(memory), this.generation + 1, this.nextLogId - 1);
    return this.pending;
  }

  /** Make the written snapshot current and seal the new generation. */
  finishCompaction(pending: PendingSnapshot): void {
    if (pending !== this.pending) throw new Error("not the compaction in progress");
    pending.switchTo();
    this.pending = undefined;
    this.generation = pending.generation;
    this.logBase = pending.logBase;
    this.chain = pending.logSums.reduce(chainNext, pending.chain);
    this.rows = pending.rows + pending.logSums.length;
    this.writeSeal();
  }

  /** Forget the compaction in progress; its rows are garbage. */
  cancelCompaction(): void {
    this.pending = undefined;
  }

  /** Delete up to `limit` rows of each kind of garbage; returns whether any are left. */
  collectGarbage(limit: number): boolean {
    if (this.pending !== undefined) return false; // its rows are not garbage
    return deleteGarbage(this.db, this.generation, this.logBase, limit);
  }

  /**
   * Compact at once (at open and close): the same steps as a compaction spread over turns, so a
   * failure leaves the file as valid as that one does. Returns the snapshot's characters.
   */
  compact(memory: MemoryStore): number {
    const pending = this.startCompaction(memory);
    try {
      while (pending.step()) {}
      this.finishCompaction(pending);
    } catch (err) {
      this.cancelCompaction();
      throw err;
    }
    try {
      while (this.collectGarbage(1024)) {}
    } catch {
      // The new generation is in place; garbage is ignored by loading and deleted later.
    }
    return pending.chars;
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

  /**
   * Close after opening failed with `err`. Closing lets SQLite checkpoint the WAL's valid frames
   * and delete it, so for a damaged store the WAL as found is first copied aside (its damaged
   * frames are the only trace of what was lost); returns the error to throw.
   */
  abandon(err: unknown): unknown {
    const wal = `${this.path}-wal`;
    let kept: string | undefined;
    if (StoreCorruptError.isInstance(err) && (statSync(wal, { throwIfNoEntry: false })?.size ?? 0) > 0) {
      kept = `${wal}.kept-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      try {
        copyFileSync(wal, kept);
      } catch {
        kept = undefined;
      }
    }
    this.close();
    return kept === undefined || !StoreCorruptError.isInstance(err)
      ? err
      : new StoreCorruptError(err.path, `${err.message} (its WAL as found was copied to ${kept})`, {
          cause: err,
        });
  }

  /** Close the connection (checkpointing the WAL into the file) and release the lock. */
  close(): void {
    this.db.close();
    this.seal.close();
  }
}
