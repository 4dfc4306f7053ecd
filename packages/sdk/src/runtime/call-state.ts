/**
 * Per-dispatch bookkeeping behind an ExecutionContext: how many calls are in flight, which of
 * them wait on subagents, the resource lock, the resources registered in this dispatch, and the
 * suspension that ends it.
 */
import { Blocked, LeaseSuperseded, RebunoError, Terminated } from "@rebuno/protocol";
import type { KernelPort, LeaseRef, SubagentClient } from "./kernel-port.js";
import type { Logger } from "./logger.js";
import type { RegisteredResource } from "./resource-types.js";
import type { DispatchTrace } from "./tracing.js";

/** Why a dispatch stops without writing an outcome. */
export type Suspension = Blocked | Terminated;

interface Waiter {
  /** In-flight calls this wait blocks: the waiting call and every call enclosing it. */
  weight: number;
  resolve(suspended: boolean): void;
  reject(error: unknown): void;
}

// Suspend is idempotent on the kernel side, so transient failures are retried (G6).
const SUSPEND_ATTEMPTS = 5;
const SUSPEND_BACKOFF_MS = 100;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The resource lock as held by one call; it can be handed back while the call waits. */
export class LockHandle {
  held = false;
  private releaseFn: (() => void) | undefined;
  constructor(private readonly state: CallState) {}

  async take(): Promise<void> {
    this.releaseFn = await this.state.acquire();
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.releaseFn?.();
  }
}

/** Runtime state of one dispatch. Not part of the public API. */
export class CallState {
  /** Tool calls, steps and LLM calls between submission and outcome (G5: LLM calls count too). */
  inFlight = 0;
  /** Resources registered in this dispatch, by key. */
  readonly resources: Map<string, RegisteredResource> = new Map();
  /** The dispatch's span, when tracing is on; calls start theirs from it. */
  trace: DispatchTrace | undefined;
  /** Aborts the run's signal when the execution turns out to be terminal (cancelled). */
  onTerminal: ((reason: Terminated) => void) | undefined;
  /**
   * When true (set by {@link runUntilSuspended}), a call that meets the suspension returns a
   * promise that never settles instead of throwing, so no user `catch` can swallow it: the
   * dispatch ends through {@link suspended} while the handler stays parked where it stopped.
   */
  holdOnSuspend = false;
  private waiters: Waiter[] = [];
  private suspending = false;
  private lockTail: Promise<void> = Promise.resolve();
  private current: Suspension | undefined;
  private readonly suspendedSignal: { promise: Promise<Suspension>; resolve: (s: Suspension) => void };

  constructor(
    readonly executionId: string,
    readonly lease: LeaseRef,
    readonly port: KernelPort,
    readonly logger: Logger,
    readonly onCurrentStep: ((label: string | undefined) => void) | undefined,
    readonly client: SubagentClient | undefined,
  ) {
    let resolve!: (s: Suspension) => void;
    const promise = new Promise<Suspension>((r) => {
      resolve = r;
    });
    this.suspendedSignal = { promise, resolve };
  }

  /** The suspension of this dispatch, once one happened. */
  get suspension(): Suspension | undefined {
    return this.current;
  }

  /** Records the first suspension (later ones are ignored) and wakes {@link suspended}. */
  suspend(reason: Suspension): Suspension {
    if (this.current === undefined) {
      this.current = reason;
      this.suspendedSignal.resolve(reason);
    }
    return this.current;
  }

  /** Resolves with the first suspension of this dispatch. */
  get suspended(): Promise<Suspension> {
    return this.suspendedSignal.promise;
  }

  /**
   * What a call that meets the suspension gives its caller: a promise that never settles under
   * {@link holdOnSuspend} (the dispatch is ending; nothing after the call may run), else the
   * rejection with the suspension (tool test contexts, code run outside an agent dispatch).
   */
  halt(reason: Suspension): Promise<never> {
    const suspension = this.suspend(reason);
    return this.holdOnSuspend ? new Promise<never>(() => {}) : Promise.reject(suspension);
  }

  /**
   * Takes the resource lock (a promise-chain mutex). While any resource is registered, calls run
   * one at a time so checkpoints line up with step outcomes (F54).
   */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.lockTail;
    this.lockTail = previous.then(() => held);
    let released = false;
    return previous.then(() => () => {
      if (!released) {
        released = true;
        release();
      }
    });
  }

  /**
   * Waits until every in-flight call waits on a subagent (a call whose nested call waits counts
   * as waiting too), then asks the kernel once whether the
   * execution can suspend. Resolves true when it suspended (the caller must unwind with
   * `ctx.suspension`), false when the children already settled.
   */
  waitIdle(depth: number): Promise<boolean> {
    if (this.current !== undefined) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      this.waiters.push({ weight: Math.max(depth, 1), resolve, reject });
      this.checkIdle();
    });
  }

  /** Called whenever a call finishes or starts waiting. */
  checkIdle(): void {
    if (this.suspending || this.waiters.length === 0) return;
    let waiting = 0;
    for (const w of this.waiters) waiting += w.weight;
    if (waiting < this.inFlight) return;
    const batch = this.waiters;
    this.waiters = [];
    this.suspending = true;
    this.suspendOnce().then(
      (suspended) => {
        for (const w of batch) w.resolve(suspended);
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  }

  private async suspendOnce(): Promise<boolean> {
    try {
      if (this.current !== undefined) return true;
      for (let attempt = 1; ; attempt++) {
        try {
          const suspended = await this.port.suspend(this.executionId, this.lease);
          if (suspended) this.suspend(new Blocked("step blocked", { reason: "awaiting_steps" }));
          return suspended;
        } catch (error) {
          if (Terminated.isInstance(error)) {
            this.suspend(error);
            this.onTerminal?.(error);
            throw error;
          }
          if (LeaseSuperseded.isInstance(error)) throw error;
          const retryable = RebunoError.isInstance(error) ? error.retryable : true;
          if (!retryable || attempt >= SUSPEND_ATTEMPTS) {
            // Not a tool failure: leave the step executing and the dispatch to expire, so the
            // kernel redelivers and the (idempotent) child creation is simply repeated.
            this.logger.warn("suspend failed; leaving the dispatch for redelivery", {
              executionId: this.executionId,
              error: error instanceof Error ? error.message : String(error),
            });
            this.suspend(new Blocked("step blocked", { reason: "suspend_failed", cause: error }));
            return true;
          }
          await sleep(SUSPEND_BACKOFF_MS * 2 ** (attempt - 1));
        }
      }
    } finally {
      this.suspending = false;
      // Calls that started waiting during the request form the next batch.
      queueMicrotask(() => this.checkIdle());
    }
  }
}
