/**
 * Kernel-free unit testing of tool bodies: run code as if inside an execution, answer each
 * submission from a script (proceed, replay, deny, block…), then inspect what was submitted and
 * recorded.
 */
import { ExecutionContext, type SubagentClient } from "@rebuno/sdk";
import {
  type CreatedChild,
  type RecordedOutcome,
  type ScriptedDecision,
  ScriptedKernelPort,
  type SubmittedStep,
} from "./scripted-port.js";

/** Options of {@link ToolTestContext}. */
export interface ToolTestContextOptions {
  readonly executionId?: string;
  readonly agentId?: string;
  readonly input?: unknown;
  readonly session?: string;
  /** What `previous()` returns. */
  readonly previous?: unknown;
  readonly dispatchAttempt?: number;
}

/**
 * A scripted execution context for one or more tool calls.
 *
 * @example
 * ```ts
 * import { Toolbox, tool } from "@rebuno/sdk";
 * import { ToolTestContext } from "@rebuno/testing";
 * import { expect } from "vitest";
 *
 * class Billing extends Toolbox {
 *   @tool("charge", { input: { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] } })
 *   async charge(args: { cents: number }) {
 *     return { charged: args.cents };
 *   }
 * }
 *
 * const t = new ToolTestContext();
 * t.deny("charge", "over the limit");
 * // A denied call throws ToolError (reason "denied"); the tool body never runs.
 * await expect(t.run(() => new Billing().charge({ cents: 500 }))).rejects.toMatchObject({
 *   toolId: "charge",
 *   reason: "denied",
 *   message: expect.stringContaining("not allowed. reason: over the limit"),
 * });
 * expect(t.submitted[0]?.args).toEqual({ cents: 500 });
 * ```
 */
export class ToolTestContext {
  readonly port: ScriptedKernelPort;
  readonly context: ExecutionContext;
  readonly #abort = new AbortController();

  constructor(options: ToolTestContextOptions = {}) {
    const executionId = options.executionId ?? "exec-test";
    this.port = new ScriptedKernelPort();
    this.port.previousState = options.previous ?? null;
    this.context = new ExecutionContext({
      port: this.port,
      executionId,
      agentId: options.agentId ?? "test-agent",
      input: options.input ?? null,
      session: options.session,
      lease: { dispatchId: "dispatch-test", attempt: options.dispatchAttempt ?? 1, timeoutMs: 120_000 },
      signal: this.#abort.signal,
      logger: { warn: () => {}, error: () => {} },
    });
  }

  /** Runs `fn` with this context active (tools, `step()`, `execution()` work inside). */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    return Promise.resolve(this.context.run(fn));
  }

  /** Queue raw decisions for `target` (`"*"` = any target). Unscripted submissions proceed. */
  script(target: string, ...decisions: ScriptedDecision[]): this {
    this.port.script(target, ...decisions);
    return this;
  }

  /** The next call of `target` runs its body. */
  proceed(target = "*"): this {
    return this.script(target, { kind: "proceed" });
  }

  /** The next call of `target` replays `result` without running the body. */
  replay(target: string, result: unknown): this {
    return this.script(target, { kind: "replay", result });
  }

  /** The next call of `target` replays a recorded failure (→ ToolError). */
  replayError(target: string, error: string | { message?: string; reason?: string }): this {
    return this.script(target, { kind: "replay", error });
  }

  /** The next call of `target` is denied by policy. */
  deny(target: string, reason = "policy_denied", ruleId?: string): this {
    return this.script(target, { kind: "deny", reason, ...(ruleId === undefined ? {} : { ruleId }) });
  }

  /** The next call of `target` waits for an approval (→ Blocked). */
  block(target: string, approvalId = "approval-test"): this {
    return this.script(target, { kind: "block", approvalId });
  }

  /** The next child of `agentId` completes with `output` (or fails with `failureReason`). */
  childOutcome(agentId: string, outcome: { output?: unknown; failureReason?: string }): this {
    this.port.scriptChild(agentId, outcome);
    return this;
  }

  /** A client for `subagent(…, { client })` that records children instead of calling a kernel. */
  get client(): SubagentClient {
    const children = this.port.children;
    return {
      async create(agentId, input, options) {
        const child: CreatedChild = {
          agentId,
          input,
          session: options?.session,
          idempotencyKey: options?.idempotencyKey,
          spawnedBy: options?.spawnedBy,
        };
        children.push(child);
        return { id: `child-${children.length}` };
      },
    };
  }

  /** Simulates losing the lease: `execution().signal` aborts and every write is refused. */
  loseLease(): void {
    this.port.leaseLost = true;
    this.#abort.abort(new Error("lease lost (test)"));
  }

  get submitted(): readonly SubmittedStep[] {
    return this.port.submitted;
  }
  get completed(): readonly RecordedOutcome[] {
    return this.port.completed;
  }
  get failed(): readonly RecordedOutcome[] {
    return this.port.failed;
  }
  get children(): readonly CreatedChild[] {
    return this.port.children;
  }
  get suspendCalls(): number {
    return this.port.suspendCalls;
  }
}

/**
 * Runs `fn` inside a fresh {@link ToolTestContext} and returns its value.
 *
 * @example
 * ```ts
 * import { Toolbox, tool } from "@rebuno/sdk";
 * import { withToolContext } from "@rebuno/testing";
 * import { expect } from "vitest";
 *
 * class Catalog extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`live result for ${args.query}`];
 *   }
 * }
 *
 * const value = await withToolContext(async (t) => {
 *   t.replay("search", ["cached"]);
 *   return new Catalog().search({ query: "x" });
 * });
 * expect(value).toEqual(["cached"]);
 * ```
 */
export function withToolContext<T>(
  fn: (t: ToolTestContext) => T | Promise<T>,
  options?: ToolTestContextOptions,
): Promise<T> {
  const t = new ToolTestContext(options);
  return t.run(() => fn(t));
}
