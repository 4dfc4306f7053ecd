/**
 * Group commit for the SQLite store: the ops of every transaction that ends in one event-loop turn
 * are written to the file together, as one SQLite transaction (usually one log row).
 *
 * The batch is written on `setImmediate` — after the I/O callbacks of the current turn, i.e. after
 * every request that arrived together ran — or as soon as it holds {@link GROUP_COMMIT_MAX}
 * transactions. Until then its writes are visible (they are in memory) but not durable, so nothing
 * may be acknowledged before `whenDurable()` resolves: the HTTP core awaits it before any answer,
 * the dispatcher before any webhook. Both call it in the same turn as the transaction whose writes
 * they acknowledge (only microtasks in between), which is what makes the failure rule below sound.
 */
import type { RedoOp } from "./redo-ops.js";

/** Transactions in one batch before it is written without waiting for the end of the turn. */
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

const DURABLE: Promise<void> = Promise.resolve();

/** Where batches go. */
export interface BatchSink {
  /** Write the batch durably, or throw. */
  write(ops: readonly RedoOp[]): void;
  /**
   * Writing failed with `err`: make the in-memory state equal what is durable again, and return the
   * error the batch's waiters are rejected with.
   */
  failed(err: unknown): Error;
}

/** The open batch of a store (see the module comment). */
export class GroupCommit {
  private ops: RedoOp[] = [];
  private transactions = 0;
  /** Created only when someone waits (under c = 1 most batches have exactly one waiter). */
  private waiting: Deferred | undefined;
  private scheduled = false;
  /**
   * The failure of a batch written in this turn. A caller whose writes were in that batch may not
   * have asked `whenDurable()` yet (it does so a few microtasks after its transaction); with the
   * batch gone, "nothing pending" would wrongly resolve it. So until the turn ends every
   * `whenDurable()` rejects: a request that did not write gets a spurious 500 during a disk failure,
   * but no lost write is ever acknowledged.
   */
  private failure: Error | undefined;
  private readonly onImmediate = (): void => {
    this.scheduled = false;
    this.commit();
  };

  constructor(private readonly sink: BatchSink) {}

  /** Ops recorded and not yet written; a transaction's start mark. */
  get size(): number {
    return this.ops.length;
  }

  record(op: RedoOp): void {
    this.ops.push(op);
  }

  /** The ops recorded and not yet written, oldest first. */
  get pending(): readonly RedoOp[] {
    return this.ops;
  }

  /** Drop the ops recorded since `mark` (their transaction threw); returns them. */
  discard(mark: number): RedoOp[] {
    return this.ops.splice(mark);
  }

  /**
   * A transaction that started at `mark` ended without throwing. Throws the commit error when this
   * transaction filled the batch and writing it failed (its own writes are gone with the batch).
   */
  ended(mark: number): void {
    if (this.ops.length === mark) return; // it wrote nothing
    if (++this.transactions >= GROUP_COMMIT_MAX) {
      const failure = this.commit();
      if (failure !== undefined) throw failure;
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
  }

  /** Resolves once every write made so far is durable; rejects if writing it failed. */
  whenDurable(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ops.length === 0) return DURABLE;
    this.waiting ??= deferred();
    return this.waiting.promise;
  }

  /** Write the open batch now. Returns the error its waiters were rejected with, if it failed. */
  commit(): Error | undefined {
    const ops = this.ops;
    if (ops.length === 0) return undefined;
    const waiting = this.waiting;
    this.ops = [];
    this.transactions = 0;
    this.waiting = undefined;
    try {
      this.sink.write(ops);
    } catch (err) {
      const failure = this.sink.failed(err);
      this.failure = failure;
      setImmediate(() => {
        if (this.failure === failure) this.failure = undefined;
      });
      waiting?.reject(failure);
      return failure;
    }
    waiting?.resolve();
    return undefined;
  }
}
