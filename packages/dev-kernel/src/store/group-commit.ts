/**
 * Group commit for the SQLite store.
 *
 * A commit per request made `BEGIN IMMEDIATE`/`COMMIT` the dominant cost of the SQLite kernel
 * (each commit appends and syncs WAL frames and takes the write lock). Instead, the first
 * transaction of an event-loop turn opens one SQLite transaction (a *batch*); every
 * `transaction(fn)` until the batch commits runs inside it under its own `SAVEPOINT`, so a
 * throwing request rolls back only its own writes. The batch commits on `setImmediate` — after
 * the I/O callbacks of the current turn, i.e. after every request that arrived together ran — or
 * as soon as it holds {@link GROUP_COMMIT_MAX} transactions.
 *
 * Durability is kept by the callers, not here: nothing may be *acknowledged* before
 * `whenDurable()` resolves (the HTTP core awaits it before any answer leaves, the dispatcher
 * before any webhook), so an acknowledged write is never lost on SIGKILL. Until then the writes
 * are visible to later requests on this connection, which is fine: their answers wait for the
 * same commit (or fail with it).
 */

/** Transactions in one batch before it commits without waiting for the end of the turn. */
export const GROUP_COMMIT_MAX = 256;

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Batch {
  size: number;
  /** Created only when someone waits (most batches under c=1 have exactly one waiter). */
  durable: Deferred | undefined;
}

const DURABLE: Promise<void> = Promise.resolve();

/** The SQL a {@link GroupCommit} needs from its connection. */
export interface BatchConnection {
  /** Run one statement without results (`BEGIN IMMEDIATE`, `SAVEPOINT …`, `COMMIT`…). */
  exec(sql: string): void;
  /** True while an SQLite transaction is open (false after SQLite rolled one back by itself). */
  readonly inTransaction: boolean;
  /** Some writes were undone: caches of the connection's owner may hold rolled-back values. */
  rolledBack(): void;
}

/** Batches `transaction(fn)` calls into shared SQLite transactions (see the module comment). */
export class GroupCommit {
  private batch: Batch | undefined;
  private depth = 0;

  constructor(private readonly db: BatchConnection) {}

  /** Run `fn` atomically inside the open batch (opening one if needed). Nested calls join. */
  transaction<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    const batch = this.batch;
    return batch === undefined ? this.first(fn) : this.joined(batch, fn);
  }

  /**
   * The transaction that opens a batch needs no savepoint: nothing else is in the SQLite
   * transaction yet, so a throw rolls the whole of it back (two statements fewer per request
   * when requests do not overlap, the c=1 case).
   */
  private first<T>(fn: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    const batch: Batch = { size: 1, durable: undefined };
    this.batch = batch;
    this.depth++;
    try {
      return fn();
    } catch (err) {
      this.batch = undefined;
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      this.db.rolledBack();
      throw err;
    } finally {
      this.depth--;
      if (this.batch === batch) this.scheduleCommit(batch);
    }
  }

  private joined<T>(batch: Batch, fn: () => T): T {
    this.depth++;
    this.db.exec("SAVEPOINT tx");
    let out: T;
    try {
      out = fn();
      this.db.exec("RELEASE tx");
    } catch (err) {
      this.undo(batch, err);
      throw err;
    } finally {
      this.depth--;
    }
    if (++batch.size >= GROUP_COMMIT_MAX) this.commit();
    return out;
  }

  private scheduleCommit(batch: Batch): void {
    setImmediate(() => {
      if (this.batch === batch) this.commit();
    });
  }

  /** Undo the failed transaction's writes only (or lose the batch if SQLite aborted it). */
  private undo(batch: Batch, err: unknown): void {
    if (this.db.inTransaction) {
      this.db.exec("ROLLBACK TO tx");
      this.db.exec("RELEASE tx");
      this.db.rolledBack();
      return;
    }
    this.db.rolledBack();
    // SQLite rolled the whole transaction back by itself (disk full, I/O error…): the other
    // transactions of the batch are gone too, so their pending answers must fail.
    this.batch = undefined;
    batch.durable?.reject(err);
  }

  /** Resolves once every write made so far is committed; rejects if that commit failed. */
  whenDurable(): Promise<void> {
    const batch = this.batch;
    if (batch === undefined) return DURABLE;
    batch.durable ??= deferred();
    return batch.durable.promise;
  }

  /** Commit the open batch now (also called by `close()`). */
  commit(): void {
    const batch = this.batch;
    if (batch === undefined) return;
    this.batch = undefined;
    try {
      this.db.exec("COMMIT");
    } catch (err) {
      if (this.db.inTransaction) {
        try {
          this.db.exec("ROLLBACK");
        } catch {
          // the connection is unusable; the rejection below reports the cause
        }
      }
      this.db.rolledBack();
      batch.durable?.reject(err);
      return;
    }
    batch.durable?.resolve();
  }
}
