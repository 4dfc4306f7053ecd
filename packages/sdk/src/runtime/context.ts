/**
 * The execution context: what a handler, tool body or `step()` can see about the run it is part
 * of, and the per-dispatch bookkeeping (calls in flight, subagent waiters, resources). It travels
 * through `AsyncLocalStorage`, so tools work from any depth of framework code without being
 * passed a context argument.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Blocked, PolicyError, Terminated } from "@rebuno/protocol";
import { CallState, type LockHandle } from "./call-state.js";
import type { KernelPort, LeaseRef, SubagentClient } from "./kernel-port.js";
import { consoleLogger, type Logger } from "./logger.js";

/**
 * One level of the ambient call stack. The root frame belongs to the handler; each running tool
 * or step body gets its own frame so `subagent()` knows the step it runs under.
 */
export interface Frame {
  readonly ctx: ExecutionContext;
  /** The step whose body is running, or undefined in the handler itself. */
  readonly stepId: string | undefined;
  /** The step target (tool id / step name), for errors and logs. */
  readonly target: string | undefined;
  /** True when this body (or an enclosing one) holds the resource lock. */
  readonly holdsLock: boolean;
  /** Recorded calls in flight on this frame's chain (0 in the handler, 1 in a tool body…). */
  readonly depth: number;
  /** The lock this call took itself (so a subagent wait can hand it back). */
  readonly lock?: LockHandle | undefined;
  /** The enclosing frame (undefined for the handler's root frame). */
  readonly parent?: Frame | undefined;
  /** Set when a call inside this body met the suspension: its result must not be recorded. */
  suspendedWithin?: boolean;
}

/** Ambient frames. Exported for the runtime modules only (not from the package index). */
export const frames: AsyncLocalStorage<Frame> = new AsyncLocalStorage<Frame>();

/** Internal state key: keeps runtime bookkeeping off the public surface of the context. */
export const kState: unique symbol = Symbol("rebuno.executionState");

/** Options to build a context: the agent runtime and `@rebuno/testing` create these. */
export interface ExecutionContextInit {
  /** How the runtime talks to the kernel (an `AgentTransport`, or an in-memory test port). */
  readonly port: KernelPort;
  readonly executionId: string;
  readonly agentId: string;
  readonly input: unknown;
  readonly lease: LeaseRef;
  readonly session?: string | undefined;
  readonly status?: string | undefined;
  /** Aborts on lease loss, supersede, agent close, or cancellation. */
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
  /** Called when the kernel reports the execution terminal (cancelled…), to abort `signal`. */
  readonly onTerminal?: ((reason: Terminated) => void) | undefined;
  /** Default client for `subagent()` (the agent's `client` option). */
  readonly client?: SubagentClient | undefined;
  /** Told which step body runs, so lease stall warnings can name it. */
  readonly onCurrentStep?: ((label: string | undefined) => void) | undefined;
}

/**
 * The active execution, as seen from inside a handler, tool body or step.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { setTimeout as sleep } from "node:timers/promises";
 * import { execution } from "@rebuno/sdk";
 *
 * const ctx = execution();
 * await sleep(10, undefined, { signal: ctx.signal }); // stops when the lease is lost
 * ```
 */
export class ExecutionContext {
  readonly id: string;
  readonly agentId: string;
  readonly input: unknown;
  /** The session this execution belongs to, if any. */
  readonly session: string | undefined;
  /** Status at dispatch time (`running`). */
  readonly status: string;
  readonly dispatchId: string;
  readonly dispatchAttempt: number;
  /** Fires on lease loss, supersede, agent close or cancellation; pass it to fetches and frameworks. */
  readonly signal: AbortSignal;
  readonly lease: LeaseRef;
  /** @internal runtime bookkeeping. */
  readonly [kState]: CallState;

  /**
   * Set when the run must stop without writing an outcome: a `Blocked` (approval, subagent
   * suspension, rate-limit park) or `Terminated`. The first one wins. Under an agent dispatch a
   * call that meets it never settles (no user `catch` can swallow it) and the dispatch ends;
   * elsewhere further calls reject with it at once. Either way the agent writes nothing.
   */
  get suspension(): Blocked | Terminated | undefined {
    return this[kState].suspension;
  }
  set suspension(value: Blocked | Terminated | undefined) {
    if (value !== undefined) this[kState].suspend(value);
  }

  /**
   * The last denial of a `step()` or LLM call. A handler that swallows it and returns normally
   * still fails the execution with that denial (a swallowed refusal must not look like success);
   * call {@link ExecutionContext.clearDenial} after handling it on purpose.
   */
  denial: PolicyError | undefined;

  constructor(init: ExecutionContextInit) {
    this.id = init.executionId;
    this.agentId = init.agentId;
    this.input = init.input;
    this.session = init.session === "" ? undefined : init.session;
    this.status = init.status ?? "running";
    this.lease = init.lease;
    this.dispatchId = init.lease.dispatchId;
    this.dispatchAttempt = init.lease.attempt;
    this.signal = init.signal ?? new AbortController().signal;
    this.denial = undefined;
    this[kState] = new CallState(
      this.id,
      this.lease,
      init.port,
      init.logger ?? consoleLogger,
      init.onCurrentStep,
      init.client,
    );
    this[kState].onTerminal = init.onTerminal;
  }

  /**
   * The state the previous turn of this session left (`Result.state`, else its output), or null
   * when there is none.
   *
   * @example
   * ```ts
   * // example: in an execution
   * import { execution } from "@rebuno/sdk";
   *
   * interface Message {
   *   readonly role: "user" | "assistant";
   *   readonly content: string;
   * }
   * const history = ((await execution().previous()) as Message[] | null) ?? [];
   * ```
   */
  previous<T = unknown>(): Promise<T | null> {
    return this[kState].port.getPrevious(this.id).then(unwrapPrevious) as Promise<T | null>;
  }

  /** Forget a step/LLM denial the handler dealt with on purpose (see {@link denial}). */
  clearDenial(): void {
    this.denial = undefined;
  }

  /** Run `fn` with this context active (used by the agent runtime and test contexts). */
  run<T>(fn: () => T): T {
    return frames.run({ ctx: this, stepId: undefined, target: undefined, holdsLock: false, depth: 0 }, fn);
  }
}

/** What {@link runUntilSuspended} resolves to when the dispatch suspended. */
export const SUSPENDED: unique symbol = Symbol("rebuno.suspended");

/**
 * Runs a handler with suspension held: a tool call, `subagent()` or `step()` that blocks never
 * settles, so the handler stops at that call whatever `try`/`catch` surrounds it, and this
 * resolves with {@link SUSPENDED} as soon as the suspension is recorded. The parked handler is
 * dropped (garbage) when the dispatch ends; its `finally` blocks do not run, as in other
 * durable-execution runtimes. Used by the agent runtime; not part of the package index.
 */
export function runUntilSuspended<T>(
  ctx: ExecutionContext,
  handler: () => T | PromiseLike<T>,
): Promise<Awaited<T> | typeof SUSPENDED> {
  const state = ctx[kState];
  state.holdOnSuspend = true;
  const parked: Promise<typeof SUSPENDED> = state.suspended.then(() => SUSPENDED);
  let running: Promise<Awaited<T>>;
  try {
    running = Promise.resolve(ctx.run(handler)) as Promise<Awaited<T>>;
  } catch (error) {
    running = Promise.reject(error);
  }
  return Promise.race([running, parked]);
}

// The transport answers `GET .../previous` with the `{state}` envelope or the bare state.
function unwrapPrevious(value: unknown): unknown {
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "state" in value) {
    return (value as { state: unknown }).state ?? null;
  }
  return value ?? null;
}

const NO_CONTEXT_HINT =
  "Run it inside an agent handler (agent.serve()/agent.fetch), or in a test with @rebuno/testing " +
  "(TestEnvironment, withToolContext).";

/**
 * The active execution context.
 *
 * @throws Error `execution() accessed without an active execution context` outside a handler.
 * @example
 * ```ts
 * // example: in an execution
 * import { execution } from "@rebuno/sdk";
 *
 * const { id, dispatchAttempt } = execution();
 * ```
 */
export function execution(): ExecutionContext {
  const frame = frames.getStore();
  if (frame === undefined) {
    throw new Error(`execution() accessed without an active execution context. ${NO_CONTEXT_HINT}`);
  }
  return frame.ctx;
}

/**
 * Shorthand for `execution().previous()`: the state the previous session turn left.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { previous } from "@rebuno/sdk";
 *
 * const state = await previous<{ turns: number }>();
 * const turns = (state?.turns ?? 0) + 1;
 * ```
 */
export function previous<T = unknown>(): Promise<T | null> {
  return execution().previous<T>();
}

/** The hint appended to every "called outside an execution" error. */
export const OUTSIDE_HINT: string = NO_CONTEXT_HINT;
