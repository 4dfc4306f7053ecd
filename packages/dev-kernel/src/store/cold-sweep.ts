/**
 * The cold sweep of the SQLite store (durable-memory.ts): a timer that moves settled executions
 * out of memory into the cold tier (cold-tier.ts) a bounded batch per event-loop turn, off the
 * request path, and which execution a write op needs in memory.
 */
import type { RedoOp } from "./redo-ops.js";

/**
 * Executions moved to the cold tier per event-loop turn. Each costs ≈ 0.3 ms for 20 steps, most of
 * it when its batch commits (JSON, checksum, a 35 KB row and its index entries): 8 keep the turn
 * that commits them to a few ms, so requests in flight barely notice, and still move thousands
 * per second when the kernel is idle (the sweep goes on next turn while a full batch moved).
 */
export const COLD_BATCH = 8;

/** Cadence of the cold sweep while nothing is due. */
const COLD_SWEEP_MS = 250;

/** Options of the cold tier (see `SqliteStoreOptions.coldAfterMs`). */
export interface ColdOptions {
  /** Quiet period before a settled execution leaves memory; `Infinity` keeps everything there. */
  readonly coldAfterMs: number;
}

/** The execution a write op belongs to (the one it must find in memory), if any. */
export function targetOf(op: RedoOp): string | undefined {
  switch (op[0]) {
    case "insertExecution":
    case "updateExecution":
      return op[1].id;
    case "deleteExecution":
    case "appendEvent":
      return op[1];
    case "insertStep":
    case "updateStep":
    case "insertDispatch":
    case "updateDispatch":
    case "insertApproval":
    case "updateApproval":
    case "putResource":
    case "insertCheckpoint":
    case "updateCheckpoint":
      return op[1].executionId;
    default:
      // Occurrence counters of a cold (exhausted) dispatch can only be loose ones: the memory
      // store keeps those without a dispatch row; agents and API keys belong to no execution.
      return undefined;
  }
}

/** Runs `archive(quietMs, COLD_BATCH)` on a timer, and again next turn while a full batch moved. */
export class ColdSweep {
  private timer: NodeJS.Timeout | undefined;
  private next: NodeJS.Immediate | undefined;

  constructor(
    private readonly quietMs: number,
    private readonly archive: (quietMs: number, limit: number) => number,
  ) {}

  /** False when `coldAfterMs` is `Infinity`: nothing leaves memory by itself. */
  get enabled(): boolean {
    return this.quietMs !== Number.POSITIVE_INFINITY;
  }

  start(): void {
    if (!this.enabled || this.timer !== undefined) return;
    this.timer = setInterval(() => this.run(), Math.max(1, Math.min(COLD_SWEEP_MS, this.quietMs)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.next !== undefined) clearImmediate(this.next);
    this.timer = undefined;
    this.next = undefined;
  }

  private run(): void {
    if (this.next !== undefined || this.timer === undefined) return;
    let moved: number;
    try {
      moved = this.archive(this.quietMs, COLD_BATCH);
    } catch {
      // Its transaction was undone (memory and cold overlay with it): the next tick tries again.
      return;
    }
    if (moved === COLD_BATCH) {
      this.next = setImmediate(() => {
        this.next = undefined;
        this.run();
      });
    }
  }
}
