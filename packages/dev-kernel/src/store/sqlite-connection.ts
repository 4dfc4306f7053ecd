/**
 * The open, locked SQLite file behind {@link SqliteStore} (sqlite.ts): opening and checking it,
 * converting a redo-log file (formats 1–3, sqlite-format3.ts), the seal (sqlite-seal.ts), and the
 * transactions with group commit.
 *
 * Group commit: the first transaction of an event-loop turn opens one SQLite transaction (`BEGIN`);
 * each later store transaction that writes is a savepoint inside it (a throw undoes exactly its
 * writes), and the SQLite transaction commits on `setImmediate`, after every request that arrived
 * together ran, or once it holds {@link GROUP_COMMIT_MAX} store transactions. Until then the writes
 * are visible (same connection) but not durable, so nothing may be acknowledged before
 * `whenDurable()` resolves: the HTTP core awaits it before any answer, the dispatcher before any
 * webhook, both in the same turn as the transaction whose writes they acknowledge. A failed commit
 * is rolled back by SQLite (the file and reads are again the last commit) and rejects its waiters.
 *
 * `locking_mode = EXCLUSIVE` takes the write lock at open and keeps it until close, so a second
 * kernel on the same file fails at once with {@link StoreLockedError} (and WAL's index stays in
 * process memory: no `-shm` file). The operating system drops the lock when the process dies.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, rmSync, statSync } from "node:fs";
import { ConfigurationError } from "@rebuno/protocol";
import type Database from "better-sqlite3";
import { loadSqliteDriver, openSqliteDatabase } from "./sqlite-driver.js";
import {
  checkFormat,
  classifySqliteError,
  prepareStoreFile,
  readMeta,
  runQuickCheck,
} from "./sqlite-file.js";
import type { Format3File } from "./sqlite-format3.js";
import type { SqliteStoreOptions } from "./sqlite-options.js";
import { FORMAT_VERSION, metaRows, SCHEMA, UPGRADE } from "./sqlite-schema.js";
import { SealFile } from "./sqlite-seal.js";
import { StoreCommitError, StoreCorruptError, StoreError, StoreUnavailableError } from "./store-errors.js";

/** Store transactions in one batch before it commits without waiting for the end of the turn. */
export const GROUP_COMMIT_MAX = 256;

class Deferred {
  resolve!: () => void;
  reject!: (err: unknown) => void;
  readonly promise = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

const DURABLE: Promise<void> = Promise.resolve();

/** The statements of the transactions, prepared once. */
const TX = {
  begin: "BEGIN",
  commit: "COMMIT",
  savepoint: "SAVEPOINT tx",
  release: "RELEASE tx",
  rollbackTo: "ROLLBACK TO tx",
  count: "UPDATE meta SET value = ? WHERE key = 'commits'",
};

/** The open file (see the module comment). */
export class SqliteConnection implements Format3File {
  readonly db: Database.Database;
  readonly seal: SealFile;
  private storeId = "";
  private commits = 0;
  private open = false; // a `BEGIN` is open (the batch)
  private writes = 0; // store transactions of the batch that wrote
  private depth = 0;
  /** Whether the current store transaction wrote (and, unless it is the batch's first, holds a savepoint). */
  private wrote = false;
  private first = false; // the current store transaction opened the batch
  private scheduled = false;
  private waiting: Deferred | undefined;
  /**
   * The failure of a batch committed in this turn: until the turn ends every `whenDurable()`
   * rejects, since a caller whose writes were in that batch may ask only a few microtasks later and
   * "nothing pending" would wrongly resolve it (a request that did not write gets a spurious 500).
   */
  private failure: Error | undefined;
  private closed = false;
  /** Set when the connection itself died: every later transaction and `whenDurable()` fails with it. */
  private broken: StoreUnavailableError | undefined;
  converting: Format3File["converting"] = undefined; // a redo-log file, replayed before the first commit
  private backup: string | undefined;
  private readonly sql: Record<keyof typeof TX, Database.Statement>;

  /** `rolledBack` runs whenever SQLite undid writes (a throwing transaction, a failed commit). */
  constructor(
    readonly path: string,
    given: SqliteStoreOptions,
    private readonly rolledBack: () => void = () => {},
  ) {
    const synchronous = given.synchronous ?? "NORMAL";
    if (synchronous !== "NORMAL" && synchronous !== "FULL") {
      throw new ConfigurationError(
        `SqliteStore: synchronous must be "NORMAL" or "FULL", got ${JSON.stringify(synchronous)}`,
      );
    }
    loadSqliteDriver(path); // before touching the file: without better-sqlite3 nothing else matters
    const created = prepareStoreFile(path, given.nativeBinding);
    this.seal = new SealFile(path);
    // A seal left beside a store that was deleted speaks of commits this new file never had.
    if (created) this.seal.remove();
    const lost = created ? undefined : lostBeforeOpen(path, this.seal, given.nativeBinding);
    if (lost !== undefined) throw this.abandon(this.seal.lost(lost));
    try {
      this.db = openSqliteDatabase(path, path, given.nativeBinding);
      this.configure(synchronous, given.quickCheck ?? true);
      const prepared = Object.entries(TX).map(([name, sql]) => [name, this.db.prepare(sql)]);
      this.sql = Object.fromEntries(prepared) as SqliteConnection["sql"];
    } catch (err) {
      throw this.abandon(classifySqliteError(path, err, "open"));
    }
  }

  /** Lock, check and (if needed) convert the file; leaves the opening transaction open. */
  private configure(synchronous: "NORMAL" | "FULL", quickCheck: boolean): void {
    const { db, path } = this;
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
    // A checkpoint (WAL into the file, with an fsync) every 10 000 pages (≈ 40 MB) instead of 1 000:
    // a page rewritten in between is copied once, and commits stall a tenth as often (commit time
    // 57 % → 30 % of the store's CPU at 50 concurrent executions).
    db.pragma("wal_autocheckpoint = 10000");
    // Savepoint journals (the original of every page a later transaction changes) stay in memory.
    db.pragma("temp_store = MEMORY");
    db.exec("BEGIN IMMEDIATE"); // the write lock, kept from here on; committed by the first commit()
    this.open = true;
    if (quickCheck) runQuickCheck(db, path);
    if (version < 4) {
      this.converting = { version, meta: readMeta(db) };
      this.backup = `${path}.format${version}-backup`; // until the converted file is committed
      for (const s of ["", "-wal"]) if (existsSync(path + s)) copyFileSync(path + s, this.backup + s);
      db.exec(`DROP TABLE meta;\n${SCHEMA}\n${metaRows(randomBytes(16).toString("hex"))}`);
    } else if (version < FORMAT_VERSION) db.exec(UPGRADE);
    const meta = readMeta(db);
    this.storeId = meta.get("store_id") ?? "";
    this.commits = Number(meta.get("commits"));
    if (!/^[0-9a-f]{32}$/.test(this.storeId) || !Number.isSafeInteger(this.commits) || this.commits < 0) {
      throw new StoreCorruptError(path, `${path} has an invalid store_id or commits in its meta table`);
    }
    const sealed = this.converting === undefined ? this.seal.read() : undefined;
    const lost = this.seal.shortfall(sealed, this.storeId, this.commits);
    if (lost !== undefined) throw this.seal.lost(lost);
  }

  /** End opening: commit the opening transaction (and a conversion), seal, drop the backup copy. */
  finishOpen(): void {
    this.writes = Math.max(this.writes, 1); // the commit count moves once per open: the seal is fresh
    const failure = this.commit();
    if (failure !== undefined) throw this.abandon(failure);
    this.dropBackup();
  }

  private dropBackup(): void {
    for (const s of ["", "-wal"]) if (this.backup !== undefined) rmSync(this.backup + s, { force: true });
  }

  transaction<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    if (this.broken !== undefined) throw this.broken;
    if (this.closed) throw new StoreUnavailableError(this.path, `${this.path}: the store is closed`);
    // A batch's first transaction needs no savepoint (undoing it undoes the batch); a later one takes
    // it at its first write (write()): one that only reads has nothing to undo.
    const first = !this.open;
    if (first) {
      this.sql.begin.run();
      this.open = true;
      this.schedule();
    }
    this.first = first;
    this.depth = 1;
    this.wrote = false;
    let out: T;
    try {
      out = fn();
    } catch (err) {
      if (!this.db.inTransaction) {
        // SQLite rolled the whole batch back itself (some I/O errors do): its waiters lose too.
        this.open = false;
        this.writes = 0;
        this.waiting?.reject(new StoreCommitError(this.path, err));
        this.waiting = undefined;
      } else if (first) {
        this.db.exec("ROLLBACK");
        this.open = false;
      } else if (this.wrote) {
        this.sql.rollbackTo.run();
        this.sql.release.run();
      }
      this.rolledBack();
      throw err;
    } finally {
      this.depth = 0;
    }
    if (!first && this.wrote) this.sql.release.run();
    if (this.wrote && ++this.writes >= GROUP_COMMIT_MAX) {
      const failure = this.commit();
      if (failure !== undefined) throw failure;
    }
    return out;
  }

  /** Run a write: inside the current transaction, or as its own. */
  write<T>(fn: () => T): T {
    if (this.depth === 0) return this.transaction(() => this.write(fn));
    if (!this.wrote) {
      if (!this.first) this.sql.savepoint.run();
      this.wrote = true;
    }
    return fn();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.closed) this.commit();
    });
  }

  whenDurable(): Promise<void> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.writes === 0) return DURABLE;
    this.waiting ??= new Deferred();
    return this.waiting.promise;
  }

  /** Commit the open batch now. Returns the error its waiters were rejected with, if it failed. */
  commit(): Error | undefined {
    if (!this.open) return undefined;
    const waiting = this.waiting;
    const writes = this.writes;
    this.waiting = undefined;
    this.writes = 0;
    this.open = false;
    try {
      if (writes > 0) this.sql.count.run(String(this.commits + 1));
      this.sql.commit.run();
    } catch (err) {
      const failure = new StoreCommitError(this.path, err);
      this.rolledBack();
      try {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
      } catch {
        // Reported below: the connection is unusable.
      }
      if (!this.db.open) {
        this.broken = new StoreUnavailableError(
          this.path,
          `${this.path}: the database connection failed after ${failure.message}; restart the kernel once the cause is fixed`,
          err,
        );
      }
      this.failure = failure;
      setImmediate(() => {
        if (this.failure === failure) this.failure = undefined;
      });
      waiting?.reject(failure);
      return failure;
    }
    if (writes > 0) {
      this.commits++;
      this.seal.write({ storeId: this.storeId, commits: this.commits });
    }
    waiting?.resolve();
    return undefined;
  }

  /** Commit what is pending and release the file. Throws if committing failed. Idempotent. */
  close(): void {
    if (this.closed) return;
    const failure = this.broken === undefined ? this.commit() : undefined;
    this.closed = true;
    if (this.db.open) this.db.close();
    this.seal.close();
    if (failure !== undefined) throw failure;
  }

  /**
   * Close after opening failed with `err`; returns the error to throw. Closing lets SQLite checkpoint
   * the WAL's valid frames and delete it, so for a damaged store the WAL as found is first copied
   * aside (its damaged frames are the only trace of what was lost).
   */
  abandon(err: unknown): unknown {
    const wal = `${this.path}-wal`;
    let out = err;
    if (StoreCorruptError.isInstance(err) && (statSync(wal, { throwIfNoEntry: false })?.size ?? 0) > 0) {
      const kept = `${wal}.kept-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      try {
        copyFileSync(wal, kept);
        const message = `${err.message} (its WAL as found was copied to ${kept})`;
        out = new StoreCorruptError(err.path, message, { cause: err });
      } catch {
        // Not copied: refused without it.
      }
    }
    try {
      if (this.db?.inTransaction) this.db.exec("ROLLBACK");
    } catch {
      // The connection itself failed; the error being thrown already says why.
    }
    this.closed = true;
    if (this.db?.open) this.db.close(); // none yet when lostBeforeOpen refused
    this.seal.close();
    this.dropBackup(); // the file was left as it was
    return out;
  }
}

/**
 * What a file whose WAL was left behind lacks against its seal, checked through a read-only
 * connection before the store's own opens it: SQLite's WAL recovery keeps the frames up to the
 * first one whose checksum fails, and closing a read-write connection would checkpoint them into
 * the file and delete the WAL, so the refusal would change the very file it refuses. A read-only
 * connection never checkpoints (the `-shm` it creates is removed again). Undefined to open as
 * usual: no WAL, no readable seal, nothing lost, or anything the read-write open will classify.
 */
function lostBeforeOpen(path: string, seal: SealFile, nativeBinding: string | undefined): string | undefined {
  if ((statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) === 0) return undefined;
  const hadShm = existsSync(`${path}-shm`);
  let db: Database.Database | undefined;
  try {
    const sealed = seal.read();
    if (sealed === undefined) return undefined;
    const Database = loadSqliteDriver(path);
    db = new Database(path, { readonly: true, fileMustExist: true, nativeBinding });
    db.pragma("busy_timeout = 0");
    const meta = readMeta(db);
    const commits = Number(meta.get("commits"));
    const storeId = meta.get("store_id");
    return storeId === undefined || !Number.isSafeInteger(commits)
      ? undefined
      : seal.shortfall(sealed, storeId, commits);
  } catch {
    return undefined;
  } finally {
    db?.close();
    if (!hadShm) rmSync(`${path}-shm`, { force: true });
  }
}
