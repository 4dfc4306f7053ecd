import { bundleOf, isSettled } from "./cold-bundle.js";
import { type ColdOptions, ColdSweep, targetOf } from "./cold-sweep.js";
import type { ColdTier } from "./cold-tier.js";
import { GroupCommit } from "./group-commit.js";
import { MemoryStore } from "./memory.js";
import { applyOp, type RedoOp } from "./redo-ops.js";
import { GARBAGE_ROWS_PER_TURN, type PendingSnapshot } from "./sqlite-compaction.js";
import { RedoLog, type RedoLogOptions } from "./sqlite-log.js";
import { describe, StoreCommitError, StoreUnavailableError } from "./store-errors.js";

/**
 * Log characters after which a running store compacts, once the log is also at least
 * {@link RUN_COMPACT_RATIO} times the snapshot it would replace. A running store compacts a row per
 * event-loop turn (sqlite-compaction.ts), so compaction never stops it from serving; it is still
 * rare: it costs at most a quarter of a character written per character logged, and opening after
 * a crash replays at most ≈ 5 × the state.
 */
export const RUN_COMPACT_MIN_CHARS = 64 << 20;
const RUN_COMPACT_RATIO = 4;

/**
 * A {@link MemoryStore} whose writes are made durable by a redo log in SQLite (sqlite-log.ts): the
 * state and transaction machinery behind `SqliteStore` (sqlite.ts). Every write is applied to
 * memory and recorded as an op; a transaction's ops are kept only if it does not throw (the memory
 * store undoes its own writes), and the ops of one event-loop turn are appended to the file
 * together (group-commit.ts). Opening the file replays its snapshot and log into a fresh memory
 * store.
 *
 * A SIGKILLed kernel restarted on the same file finds every acknowledged write, because nothing is
 * acknowledged before `whenDurable()` resolved. When writing a batch fails, its waiters are
 * rejected and the memory state is rebuilt from the file, so it never holds what the file lacks.
 *
 * Settled executions leave memory for the file's cold tier (cold-tier.ts) once nothing wrote to
 * them for `coldAfterMs`: a background sweep records an `archive` op per execution, and any later
 * write to one first records a `thaw` op that brings it back, so every write is still the memory
 * store's own code. Reads merge both tiers (sqlite.ts).
 */
export class DurableMemory {
  private readonly log: RedoLog;
  /** The state; replaced when it has to be rebuilt from the file. */
  private current = new MemoryStore();
  private readonly batch: GroupCommit;
  /** Nesting of `transaction()`: writes at depth 0 run as their own transaction. */
  private depth = 0;
  private snapshotChars = 0;
  private logChars = 0;
  /** Log size at which a running store compacts next (raised when a compaction fails). */
  private compactAt = RUN_COMPACT_MIN_CHARS;
  private closing = false;
  private closed = false;
  /** The compaction being written a row per turn, and the log size when it started. */
  private compacting: PendingSnapshot | undefined;
  private logCharsAtCompaction = 0;
  /** The next step of background work (compaction, then garbage collection). */
  private backgroundStep: NodeJS.Immediate | undefined;
  /** Set when the state could not be rebuilt after a failed commit: the store is unusable. */
  private broken: StoreUnavailableError | undefined;
  /**
   * Executions in memory by the time of their last write (`Date.now()`), least recently written
   * first: the cold sweep's candidates.
   */
  private readonly lastWrite = new Map<string, number>();
  private readonly sweep: ColdSweep;

  /** The hot state: what is in memory. Reads fall back to {@link cold} for what is not. */
  get memory(): MemoryStore {
    return this.current;
  }

  /** The settled executions that left memory. */
  get cold(): ColdTier {
    return this.log.cold;
  }

  /** Open (and lock) the file and load its state. */
  constructor(
    readonly path: string,
    options: RedoLogOptions & ColdOptions,
  ) {
    this.sweep = new ColdSweep(options.coldAfterMs, (quietMs, limit) => this.archiveSettled(quietMs, limit));
    this.log = new RedoLog(path, options);
    try {
      const stats = this.log.load(this.memory);
      this.snapshotChars = stats.snapshotChars;
      this.logChars = stats.logChars;
      // Normally the log is empty here (close compacts); after a crash it holds the run since.
      if (this.logChars > this.snapshotChars) {
        try {
          this.compact();
        } catch (err) {
          throw new StoreCommitError(path, err);
        }
      } else {
        this.log.writeSeal();
        while (this.log.collectGarbage(1024)) {} // what a compaction cut short left behind
      }
    } catch (err) {
      throw this.log.abandon(err);
    }
    this.batch = new GroupCommit({
      write: (ops) => this.write(ops),
      failed: (err) => this.recover(err),
    });
    this.trackAll();
    this.sweep.start();
  }

  transaction<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    if (this.broken !== undefined) throw this.broken;
    if (this.closed) throw new StoreUnavailableError(this.path, `${this.path}: the store is closed`);
    const mark = this.batch.size;
    this.depth = 1;
    let out: T;
    try {
      out = this.memory.transaction(fn);
    } catch (err) {
      this.cold.undoTransaction();
      const undone = this.batch.discard(mark);
      // The memory store undoes a deleted row by appending it again, so after an undone
      // deleteExecution its execution, dispatch and approval orders would differ from what the
      // file replays to. Engine code deletes last in its transaction, so this never happens in
      // practice; when it does, rebuild memory as the file plus the batch's remaining ops.
      // An undone `archive` is an undone deletion from memory too.
      if (undone.some((op) => op[0] === "deleteExecution" || op[0] === "archive")) {
        this.reload(this.batch.pending);
      }
      throw err;
    } finally {
      this.depth = 0;
    }
    this.cold.endTransaction();
    this.batch.ended(mark);
    return out;
  }

  whenDurable(): Promise<void> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    return this.batch.whenDurable();
  }

  /** Write what is pending, compact, and release the file. Throws if writing failed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closing = true;
    this.stopBackground();
    this.sweep.stop();
    let failure: Error | undefined;
    try {
      failure = this.batch.commit();
      if (failure === undefined && this.broken === undefined && this.logChars > 0) this.compact();
    } catch (err) {
      // Until its last, one-transaction step, a compaction only adds rows that loading ignores:
      // when it fails, snapshot and log are as they were and the next open replays them.
      failure = new StoreCommitError(this.path, err);
    } finally {
      this.closed = true;
      this.log.close();
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * Apply one write to memory and record it (as its own transaction outside `transaction()`). A
   * write to a cold execution first brings it back (`thaw`); deleting a cold one only drops it.
   */
  apply(op: RedoOp): number | undefined {
    if (this.depth === 0) return this.transaction(() => this.apply(op));
    const target = targetOf(op);
    if (target !== undefined) {
      if (this.memory.getExecution(target) === undefined) {
        if (op[0] === "deleteExecution" && this.deleteCold(target)) return undefined;
        this.thaw(target);
      }
      this.thawOwnerOf(op);
      if (op[0] === "deleteExecution") this.lastWrite.delete(target);
      else this.touch(target);
    }
    const out = applyOp(this.memory, op);
    this.batch.record(op);
    return out;
  }

  /**
   * A dispatch or approval id is unique store-wide: when the op names one that a cold execution
   * holds, bring that one back, so that the memory store sees (and refuses or updates) it.
   */
  private thawOwnerOf(op: RedoOp): void {
    let owner: string | undefined;
    if (op[0] === "insertDispatch" || op[0] === "updateDispatch") {
      if (this.memory.getDispatch(op[1].id) === undefined) owner = this.cold.dispatchOwner(op[1].id);
    } else if (op[0] === "insertApproval" || op[0] === "updateApproval") {
      if (this.memory.getApproval(op[1].id) === undefined) owner = this.cold.approval(op[1].id)?.executionId;
    }
    if (owner !== undefined) this.thaw(owner);
  }

  /** Bring a cold execution back into memory (a no-op when it is not cold). */
  private thaw(id: string): void {
    const ops = this.cold.take(id);
    if (ops === undefined) return;
    const thaw: RedoOp = ["thaw", id, ops];
    applyOp(this.memory, thaw);
    this.batch.record(thaw);
    this.touch(id);
  }

  /** Delete a cold execution; false when it is not cold. */
  private deleteCold(id: string): boolean {
    const dispatchIds = this.cold.drop(id);
    if (dispatchIds === undefined) return false;
    // What memory's deleteExecution would also drop: counters of its dispatches, which can only be
    // loose ones set after it went cold.
    for (const dispatchId of dispatchIds) {
      if (!this.memory.hasOccurrences(dispatchId)) continue;
      const clear: RedoOp = ["clearOccurrences", dispatchId];
      applyOp(this.memory, clear);
      this.batch.record(clear);
    }
    this.batch.record(["deleteCold", id]);
    return true;
  }

  private touch(id: string): void {
    if (!this.sweep.enabled) return; // archiveSettled() then looks at every execution in memory
    const now = Date.now();
    if (this.lastWrite.get(id) === now) return;
    this.lastWrite.delete(id);
    this.lastWrite.set(id, now);
  }

  /** Make every execution in memory a candidate, as if just written (open, reload). */
  private trackAll(): void {
    this.lastWrite.clear();
    if (!this.sweep.enabled) return;
    const now = Date.now();
    for (const id of this.memory.executionIdList()) this.lastWrite.set(id, now);
  }

  /**
   * Move settled executions nothing wrote to for `quietMs` to the cold tier, at most `limit` of
   * them, least recently written first; returns how many moved. Inside a transaction, does nothing.
   */
  archiveSettled(quietMs: number, limit: number): number {
    if (this.depth > 0 || this.closed || this.broken !== undefined) return 0;
    const cutoff = Date.now() - quietMs;
    const scanLimit = limit * 4;
    const unsettled: string[] = [];
    let moved = 0;
    let scanned = 0;
    const candidates = this.sweep.enabled
      ? this.lastWrite
      : this.memory.executionIdList().map((id) => [id, Number.NEGATIVE_INFINITY] as const);
    this.transaction(() => {
      for (const [id, at] of candidates) {
        if (at > cutoff || moved >= limit || scanned >= scanLimit) break;
        scanned++;
        const row = this.memory.getExecution(id);
        if (row === undefined) {
          this.lastWrite.delete(id); // deleted, or events without an execution
          continue;
        }
        if (!isSettled(this.memory, row)) {
          unsettled.push(id);
          continue;
        }
        const entry = bundleOf(this.memory, row);
        const archive: RedoOp = ["archive", id];
        applyOp(this.memory, archive);
        this.batch.record(archive);
        this.cold.add(entry);
        this.lastWrite.delete(id);
        moved++;
      }
    });
    // Looked at again after another quiet period, not at every sweep.
    for (const id of unsettled) this.touch(id);
    return moved;
  }

  private write(ops: readonly RedoOp[]): void {
    this.logChars += this.log.append(ops);
    const due = this.logChars >= this.compactAt && this.logChars >= RUN_COMPACT_RATIO * this.snapshotChars;
    if (due && !this.closing && this.compacting === undefined) {
      try {
        // Memory holds exactly what the file holds here: the batch was just written.
        this.compacting = this.log.startCompaction(this.memory);
        this.logCharsAtCompaction = this.logChars;
        this.schedule(() => this.compactionStep());
      } catch {
        this.compactionFailed();
      }
    }
  }

  /** Write one snapshot row; after the last, switch generations and start collecting garbage. */
  private compactionStep(): void {
    const pending = this.compacting!;
    try {
      if (pending.step()) {
        this.schedule(() => this.compactionStep());
        return;
      }
      this.log.finishCompaction(pending);
    } catch {
      this.compactionFailed();
      return;
    }
    this.compacting = undefined;
    this.snapshotChars = pending.chars;
    // What was logged meanwhile stays in the log.
    this.logChars = Math.max(0, this.logChars - this.logCharsAtCompaction);
    this.compactAt = RUN_COMPACT_MIN_CHARS;
    this.schedule(() => this.garbageStep());
  }

  private garbageStep(): void {
    try {
      if (this.log.collectGarbage(GARBAGE_ROWS_PER_TURN)) this.schedule(() => this.garbageStep());
    } catch {
      // Garbage is ignored by loading; the next compaction or open deletes it.
    }
  }

  /**
   * The batches are durable and the file as valid as before (sqlite-compaction.ts): try again once
   * the log has grown as much again rather than after every batch.
   */
  private compactionFailed(): void {
    this.log.cancelCompaction();
    this.compacting = undefined;
    this.compactAt = this.logChars + RUN_COMPACT_MIN_CHARS;
  }

  private schedule(step: () => void): void {
    this.backgroundStep = setImmediate(() => {
      this.backgroundStep = undefined;
      if (!this.closed && this.broken === undefined) step();
    });
  }

  private stopBackground(): void {
    if (this.backgroundStep !== undefined) clearImmediate(this.backgroundStep);
    this.backgroundStep = undefined;
    if (this.compacting !== undefined) this.log.cancelCompaction();
    this.compacting = undefined;
  }

  /** Compact at once (open, close): memory holds exactly what the file holds. */
  private compact(): void {
    this.stopBackground();
    this.snapshotChars = this.log.compact(this.memory);
    this.logChars = 0;
    this.compactAt = RUN_COMPACT_MIN_CHARS;
  }

  /** A batch could not be written: rebuild memory from the file so it holds only durable writes. */
  private recover(cause: unknown): Error {
    const failure = new StoreCommitError(this.path, cause);
    try {
      // The batch's cold changes were rolled back with it.
      this.cold.reset();
    } catch (err) {
      this.broken ??= new StoreUnavailableError(
        this.path,
        `${this.path}: the cold tables could not be read after ${failure.message} (${describe(err)}); ` +
          "restart the kernel once the cause is fixed",
        err,
      );
    }
    if (!this.closing) this.reload([], failure.message);
    return failure;
  }

  /**
   * Replace memory by the file's state plus `pending` ops. If the file cannot be read, the store
   * is marked unusable: memory may then hold writes the file lacks, and no answer may rely on it.
   */
  private reload(pending: readonly RedoOp[], why = "a transaction was undone"): void {
    const memory = new MemoryStore();
    try {
      const stats = this.log.load(memory);
      this.log.writeSeal();
      for (const op of pending) applyOp(memory, op);
      this.current = memory;
      this.trackAll();
      this.snapshotChars = stats.snapshotChars;
      this.logChars = stats.logChars;
    } catch (err) {
      this.broken = new StoreUnavailableError(
        this.path,
        `${this.path}: the state could not be read back from the file after ${why} ` +
          `(${describe(err)}); restart the kernel once the cause is fixed`,
        err,
      );
    }
  }
}
