/**
 * Background lifecycle work (docs/protocol.md §12): the lease reaper, and one sweep that expires
 * approvals, cancels executions past their deadline, repairs unsettled subagents and applies
 * retention. Timers are unref'd and cleared on close; `runOnce()` lets tests with a fake clock
 * drive the same work deterministically.
 */
import { REASON_PARENT_TERMINAL } from "../inferences.js";
import { StoreRowCorruptError } from "../store/sqlite-json.js";
import { isTerminalExecution } from "../store/types.js";
import { expireApprovals } from "./approvals.js";
import type { KernelContext } from "./context.js";
import type { Dispatcher } from "./dispatcher.js";
import { settleParentStep, terminate } from "./lifecycle.js";

const RETENTION_BATCH = 500;

/** Reaper and sweeper timers of one kernel. */
export class Maintenance {
  private reapTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: KernelContext,
    private readonly dispatcher: Dispatcher,
  ) {}

  /** Run the reaper once now (protocol: "and once at startup"), then on its cadence. */
  start(): void {
    this.guard("reaper", () => this.dispatcher.reap());
    this.reapTimer = setInterval(
      () => this.guard("reaper", () => this.dispatcher.reap()),
      this.ctx.config.reapIntervalMs,
    );
    this.reapTimer.unref();
    this.sweepTimer = setInterval(
      () => this.guard("sweep", () => this.sweep()),
      this.ctx.config.sweepIntervalMs,
    );
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.reapTimer !== undefined) clearInterval(this.reapTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.reapTimer = undefined;
    this.sweepTimer = undefined;
  }

  /** Reap leases and sweep once, now. */
  runOnce(): void {
    this.guard("reaper", () => this.dispatcher.reap());
    this.guard("sweep", () => this.sweep());
  }

  private guard(loop: string, fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      this.ctx.metrics.inc("rebuno_worker_errors_total", ["loop", loop]);
      // A damaged row of the SQLite store fails every sweep that lists it until it is repaired
      // (with the kernel stopped): reported once, not every second.
      if (StoreRowCorruptError.isInstance(err)) {
        if (this.damaged.has(err.row)) return;
        this.damaged.add(err.row);
      }
      this.ctx.reportError(err, loop);
    }
  }

  /** Damaged rows already reported (see guard). */
  private readonly damaged = new Set<string>();

  /** Each part guarded on its own: one that fails (a damaged row it lists) does not stop the others. */
  private sweep(): void {
    this.guard("sweep", () => expireApprovals(this.ctx));
    this.guard("sweep", () => this.cancelPastDeadline());
    this.guard("sweep", () => this.repairSubagents());
    this.guard("sweep", () => this.applyRetention());
  }

  private cancelPastDeadline(): void {
    const { store } = this.ctx;
    for (const e of store.listExecutionsPastDeadline(this.ctx.clock())) {
      store.transaction(() => {
        const current = store.getExecution(e.id);
        if (current !== undefined)
          terminate(this.ctx, current, { status: "cancelled", reason: "deadline_exceeded" });
      });
    }
  }

  /** docs/protocol.md §8.6: settle terminal children whose parent step still executes; cancel orphans of ended parents. */
  private repairSubagents(): void {
    const { store } = this.ctx;
    for (const child of store.listUnsettledSubagents()) {
      store.transaction(() => {
        const current = store.getExecution(child.id);
        if (current === undefined) return;
        if (isTerminalExecution(current.status)) settleParentStep(this.ctx, current);
        else terminate(this.ctx, current, { status: "cancelled", reason: REASON_PARENT_TERMINAL });
      });
    }
  }

  /**
   * docs/protocol.md §12 retention: delete terminal executions older than the cutoff; a session goes only when
   * every execution in it qualifies.
   */
  private applyRetention(): void {
    this.applyRetentionAge();
    this.applyRetentionCap();
  }

  private applyRetentionAge(): void {
    const { store, config } = this.ctx;
    if (config.retentionMs <= 0) return;
    const cutoff = this.ctx.clock() - config.retentionMs;
    for (const e of store.listTerminalExecutionsBefore(cutoff, RETENTION_BATCH)) {
      store.transaction(() => {
        if (e.session !== undefined) {
          const turns = store.listSessionExecutions(e.session);
          if (!turns.every((t) => isTerminalExecution(t.status) && t.updatedAt < cutoff)) return;
        }
        store.deleteExecution(e.id);
      });
    }
  }

  /** `maxRetainedExecutions`: delete the oldest terminal executions beyond the cap. */
  private applyRetentionCap(): void {
    const { store, config } = this.ctx;
    const cap = config.maxRetainedExecutions;
    if (cap === undefined) return;
    let excess = store.countExecutions() - cap;
    if (excess <= 0) return;
    const oldest = store.listTerminalExecutionsBefore(Number.POSITIVE_INFINITY, excess + RETENTION_BATCH);
    for (const e of oldest) {
      if (excess <= 0) break;
      store.transaction(() => {
        if (e.session !== undefined) {
          const turns = store.listSessionExecutions(e.session);
          if (!turns.every((t) => isTerminalExecution(t.status))) return;
        }
        store.deleteExecution(e.id);
        excess--;
      });
    }
  }
}
