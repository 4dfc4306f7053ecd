import { LeaseSuperseded, Terminated } from "@rebuno/protocol";
// `#engine`: node:perf_hooks on Node, a timer-based monitor elsewhere (package.json "imports").
import { sharedLoopMonitor } from "#engine";
import type { AgentTransport } from "./agent-api.js";
import { BIND_OBSERVED, type LeaseObserver } from "./agent-transport.js";
import { assertLease, type DispatchLease, heartbeatIntervalMs } from "./lease.js";
import { consoleLogger, type TransportLogger } from "./logger.js";
import type { LoopDelaySource, LoopStall, StallClaim } from "./loop-monitor.js";

/** Options for {@link LeaseKeeper}. */
export interface LeaseKeeperOptions {
  /** Sends the heartbeats; `keeper.transport` is this transport bound to `keeper.signal`. */
  readonly transport: Pick<AgentTransport, "heartbeat" | "withSignal">;
  readonly executionId: string;
  readonly lease: DispatchLease;
  readonly logger?: TransportLogger | undefined;
  /** Wall clock in ms (default `Date.now`), used to measure how long the lease went unrenewed. */
  readonly clock?: (() => number) | undefined;
  /**
   * K: after this many consecutive non-409 heartbeat failures that also span more than the lease
   * period since the last renewal, the lease is treated as lost (default 3).
   */
  readonly maxConsecutiveFailures?: number | undefined;
  /** Event-loop stall watcher; `false` disables the warning (default: the shared monitor). */
  readonly loopDelay?: LoopDelaySource | false | undefined;
  /**
   * Stall length that triggers the warning (default `min(200 ms, lease.timeoutMs / 3)`): a blocked
   * loop sends no heartbeats and stalls every other run of the process.
   */
  readonly loopDelayWarnMs?: number | undefined;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 100_000 ? 1 : 0)} s`;
}

function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : seconds(ms);
}

/** Default stall warning threshold, ms (capped at lease/3 for very short leases). */
export const DEFAULT_LOOP_STALL_WARN_MS = 200;
// Warnings per dispatch: a tool that blocks in a loop should not flood the log.
const MAX_STALL_WARNINGS = 5;
// The sampler's resolution plus margin: a step that started this close before the measured start
// of a stall started inside it.
const STALL_START_SLACK_MS = 25;

/**
 * Keeps a dispatch lease alive while a run works on it (docs/protocol.md §6.6, §7.3):
 * - heartbeats every `min(lease/3, 30 s)`, the first one interval after `start()`;
 * - a `409 lease_superseded` (or `execution_terminal`) stops renewal and aborts {@link signal},
 *   after which every call through {@link transport} throws `LeaseSuperseded` without sending;
 * - other heartbeat failures are logged; after K in a row *and* more than the lease period since
 *   the last successful renewal, the kernel has certainly reclaimed the dispatch, so the lease is
 *   treated as lost the same way;
 * - logs one warning per event-loop stall longer than `loopDelayWarnMs` (default 200 ms), naming
 *   the execution, the step that ran and the measured block (heartbeat timers cannot fire while
 *   the loop is blocked). With several leases held, the stall is reported once, by the keeper
 *   whose step started during it (else those with a step running).
 */
export class LeaseKeeper {
  /** Aborted when the lease is lost (or abandoned); hand it to the run. */
  readonly signal: AbortSignal;
  /** The heartbeat period in ms. */
  readonly intervalMs: number;
  readonly executionId: string;
  readonly lease: DispatchLease;

  private readonly controller = new AbortController();
  private readonly base: Pick<AgentTransport, "heartbeat" | "withSignal">;
  private readonly logger: TransportLogger;
  private readonly clock: () => number;
  private readonly maxFailures: number;
  private readonly loopDelay: LoopDelaySource | false;
  private readonly warnMs: number;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private started = false;
  private stopped = false;
  private beating = false;
  private failures = 0;
  private lastRenewalAt = 0;
  private stallWarnings = 0;
  // The running step, and the last one with when it ended. Plain fields: the SDK sets them twice
  // per step, so no objects are allocated for them.
  private currentLabel: string | undefined = undefined;
  private currentStartedAt = 0;
  private previousLabel: string | undefined = undefined;
  private previousStartedAt = 0;
  private previousEndedAt = 0;
  private bound: AgentTransport | undefined;

  constructor(options: LeaseKeeperOptions) {
    assertLease(options.lease);
    this.base = options.transport;
    this.executionId = options.executionId;
    this.lease = options.lease;
    this.intervalMs = heartbeatIntervalMs(options.lease);
    this.logger = options.logger ?? consoleLogger;
    this.clock = options.clock ?? (() => Date.now());
    this.maxFailures = options.maxConsecutiveFailures ?? 3;
    this.loopDelay = options.loopDelay ?? sharedLoopMonitor;
    this.warnMs =
      options.loopDelayWarnMs ?? Math.min(DEFAULT_LOOP_STALL_WARN_MS, options.lease.timeoutMs / 3);
    this.signal = this.controller.signal;
  }

  /** True once the lease is lost or abandoned (the signal has aborted). */
  get lost(): boolean {
    return this.signal.aborted;
  }

  /** Why the lease was lost, when it was. */
  get lostReason(): unknown {
    return this.signal.aborted ? this.signal.reason : undefined;
  }

  /**
   * The transport bound to {@link signal}. A `LeaseSuperseded` or `SubmissionOutcomeUnknown` seen
   * by any call through it also ends the lease here, so concurrent work of the same run stops.
   */
  get transport(): AgentTransport {
    if (this.bound === undefined) {
      const observer: LeaseObserver = (err) => this.abandon(err);
      const t = this.base as Partial<Record<typeof BIND_OBSERVED, unknown>>;
      const bind = t[BIND_OBSERVED];
      this.bound =
        typeof bind === "function"
          ? (bind as (s: AbortSignal, o: LeaseObserver) => AgentTransport).call(
              this.base,
              this.signal,
              observer,
            )
          : this.base.withSignal(this.signal);
    }
    return this.bound;
  }

  /** Start heartbeating (idempotent). The lease counts as renewed now (the webhook just arrived). */
  start(): this {
    if (this.started || this.stopped) return this;
    this.started = true;
    this.lastRenewalAt = this.clock();
    this.timer = setInterval(() => this.beat(), this.intervalMs);
    // A keeper must never be what keeps a process alive; the run it guards does that.
    this.timer.unref?.();
    if (this.loopDelay !== false) {
      this.unsubscribe = this.loopDelay.subscribe((ms, stall) => this.onLoopDelay(ms, stall));
    }
    return this;
  }

  /** Stop heartbeating at the normal end of a run. Does not abort {@link signal}. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    // Unsubscribing samples the loop once more: a stall that just ended is still reported.
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe?.();
  }

  /**
   * Stop heartbeating and abort {@link signal} with `reason` (default: a `LeaseSuperseded`). Use it
   * to give up the attempt, e.g. after `SubmissionOutcomeUnknown`: without heartbeats the lease
   * expires and the kernel redelivers.
   */
  abandon(reason?: unknown): void {
    this.stop();
    if (!this.controller.signal.aborted) this.controller.abort(reason ?? new LeaseSuperseded());
  }

  /**
   * Name the step now running (`undefined` when none), for the event-loop warning. The SDK sets
   * it around each step body.
   */
  setCurrentStep(label: string | undefined): void {
    const now = this.clock();
    if (this.currentLabel !== undefined) {
      this.previousLabel = this.currentLabel;
      this.previousStartedAt = this.currentStartedAt;
      this.previousEndedAt = now;
    }
    this.currentLabel = label;
    this.currentStartedAt = now;
  }

  private beat(): void {
    if (this.stopped || this.beating) return; // one heartbeat at a time; the next tick retries
    this.beating = true;
    // Time budget = one interval: retries of this beat must not overlap the next one. Started
    // inside a promise so that even a synchronous throw lands in onFailure, not in the timer.
    Promise.resolve()
      .then(() =>
        this.base.heartbeat(this.executionId, this.lease, {
          timeoutMs: this.intervalMs,
          budgetMs: this.intervalMs,
        }),
      )
      .then(
        () => {
          this.failures = 0;
          this.lastRenewalAt = this.clock();
        },
        (err: unknown) => this.onFailure(err),
      )
      .finally(() => {
        this.beating = false;
      });
  }

  private onFailure(err: unknown): void {
    if (this.stopped) return;
    const fields = {
      executionId: this.executionId,
      dispatchId: this.lease.dispatchId,
      attempt: this.lease.attempt,
    };
    if (LeaseSuperseded.isInstance(err) || Terminated.isInstance(err)) {
      this.logger.warn("dispatch lease superseded; stopping this run", fields);
      this.abandon(err);
      return;
    }
    this.failures++;
    const unrenewedMs = this.clock() - this.lastRenewalAt;
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn("dispatch heartbeat failed", {
      ...fields,
      consecutiveFailures: this.failures,
      error: message,
    });
    if (this.failures >= this.maxFailures && unrenewedMs > this.lease.timeoutMs) {
      const lost = new LeaseSuperseded(
        `dispatch lease presumed lost: ${this.failures} heartbeats failed in a row and the lease ` +
          `(${seconds(this.lease.timeoutMs)}) was not renewed for ${seconds(unrenewedMs)}`,
        { cause: err },
      );
      this.logger.warn(lost.message, fields);
      this.abandon(lost);
    }
  }

  /**
   * The step that ran during a stall reported now, how sure that is (see StallClaim), and when it
   * started. A step that started during the stall (within the sampler's resolution of its
   * measured start) is what blocked; one started long before was only waiting; one started after
   * the block ended was not running during it.
   */
  private stepDuring(
    now: number,
    blockedMs: number,
  ): { step: string | undefined; strength: number; startedAt: number } {
    const stallStart = now - blockedMs;
    const inStall = (startedAt: number) =>
      startedAt >= stallStart - STALL_START_SLACK_MS && startedAt <= stallStart + blockedMs / 2;
    const candidates: { step: string; strength: number; startedAt: number }[] = [];
    if (this.currentLabel !== undefined && this.currentStartedAt <= stallStart + blockedMs / 2) {
      const startedAt = this.currentStartedAt;
      candidates.push({ step: this.currentLabel, strength: inStall(startedAt) ? 2 : 1, startedAt });
    }
    // A synchronous step usually ends in the same turn as the stall, before this report runs.
    if (this.previousLabel !== undefined && this.previousEndedAt >= stallStart - STALL_START_SLACK_MS) {
      const startedAt = this.previousStartedAt;
      candidates.push({ step: this.previousLabel, strength: inStall(startedAt) ? 2 : 1, startedAt });
    }
    let best: { step: string | undefined; strength: number; startedAt: number } = {
      step: undefined,
      strength: 0,
      startedAt: 0,
    };
    for (const c of candidates) if (c.strength > best.strength) best = c;
    return best;
  }

  private onLoopDelay(blockedMs: number, stall: LoopStall | undefined): void {
    if (blockedMs <= this.warnMs || this.stallWarnings >= MAX_STALL_WARNINGS) return;
    const { step, strength, startedAt } = this.stepDuring(this.clock(), blockedMs);
    const claim: StallClaim & { readonly keeper: LeaseKeeper; readonly step: string | undefined } = {
      strength,
      startedAt,
      keeper: this,
      step,
      report: (peers) => this.warnStall(blockedMs, step, peers as readonly (typeof claim)[]),
    };
    // A coordinating monitor picks one report per stall; a plain source gets one per keeper.
    if (stall === undefined) claim.report([claim]);
    else stall.offer(claim);
  }

  private warnStall(
    blockedMs: number,
    step: string | undefined,
    peers: readonly { readonly keeper: LeaseKeeper; readonly step: string | undefined }[],
  ): void {
    this.stallWarnings++;
    const others = peers.filter((p) => p.keeper !== this);
    const what = step === undefined ? "no step was running" : `step "${step}" was running`;
    const alsoRunning =
      others.length === 0
        ? ""
        : ` (steps also in progress: ${others
            .slice(0, 5)
            .map((o) => `"${o.step ?? "none"}" of execution ${o.keeper.executionId}`)
            .join(", ")})`;
    const last =
      this.stallWarnings === MAX_STALL_WARNINGS ? " Further stalls during this dispatch are not logged." : "";
    this.logger.warn(
      `the event loop was blocked for ${duration(blockedMs)} while ${what} in execution ${this.executionId}` +
        `${alsoRunning}; heartbeats cannot be sent and every other run of this process waits while the ` +
        `loop is blocked, and the lease (${seconds(this.lease.timeoutMs)}, renewed every ` +
        `${seconds(this.intervalMs)}) is reclaimed if it goes unrenewed. Move CPU-bound or synchronous ` +
        `work off the event loop (worker_threads, child_process, async APIs).${last}`,
      {
        executionId: this.executionId,
        step,
        blockedMs: Math.round(blockedMs),
        ...(others.length === 0
          ? {}
          : { alsoRunning: others.map((o) => ({ executionId: o.keeper.executionId, step: o.step })) }),
      },
    );
  }
}
