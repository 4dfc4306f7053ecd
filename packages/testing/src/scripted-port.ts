/**
 * An in-memory implementation of the SDK's `KernelPort` that answers step submissions from a
 * script and records everything the code under test sent. It is a real (small) kernel-side
 * state machine — step ids, occurrences, outcomes, children — not a mock of the SDK.
 */
import { argsHashFromText, computeStepId, LeaseSuperseded, RawJson } from "@rebuno/protocol";
import type {
  CaptureSet,
  KernelPort,
  LeaseRef,
  RegisterResourceBody,
  ResourceViewLike,
  StepDecisionLike,
  StepLike,
  SubmitStepBody,
} from "@rebuno/sdk";

/** A scripted answer to one submission. */
export type ScriptedDecision =
  | { readonly kind: "proceed" }
  | { readonly kind: "replay"; readonly result: unknown }
  | {
      readonly kind: "replay";
      readonly error: string | { readonly message?: string; readonly reason?: string };
    }
  | { readonly kind: "deny"; readonly reason?: string; readonly ruleId?: string }
  | { readonly kind: "block"; readonly approvalId?: string; readonly reason?: string }
  | { readonly kind: "rate_limit"; readonly reason?: string }
  | { readonly kind: "terminate" };

/** One submission the code under test made. */
export interface SubmittedStep {
  readonly stepId: string;
  readonly kind: string;
  readonly target: string;
  readonly args: unknown;
  readonly idempotency: string;
  readonly resources: readonly string[];
  /** The decision it got. */
  readonly decision: string;
}

/** A step outcome the code under test recorded. */
export interface RecordedOutcome {
  readonly stepId: string;
  readonly target: string;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly captures?: CaptureSet;
}

/** A child execution created through the test client. */
export interface CreatedChild {
  readonly agentId: string;
  readonly input: unknown;
  readonly session: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly spawnedBy: { readonly executionId: string; readonly stepId: string } | undefined;
}

interface StepRow {
  stepId: string;
  target: string;
  status: "executing" | "succeeded" | "failed" | "denied";
  result?: unknown;
  error?: unknown;
}

/** The scripted kernel. Use it through `ToolTestContext`. */
export class ScriptedKernelPort implements KernelPort {
  readonly submitted: SubmittedStep[] = [];
  readonly completed: RecordedOutcome[] = [];
  readonly failed: RecordedOutcome[] = [];
  readonly children: CreatedChild[] = [];
  readonly checkpoints: CaptureSet[] = [];
  /** Live stream deltas published by LLM calls, in order. */
  readonly deltas: { readonly stepId: string; readonly seq: number; readonly data: string }[] = [];
  suspendCalls = 0;
  /** When set, the lease is treated as lost: every write throws LeaseSuperseded. */
  leaseLost = false;
  previousState: unknown = null;
  /** Errors the next `suspend` calls throw, in order (fault injection for retry tests). */
  readonly suspendFailures: unknown[] = [];

  private readonly scripts = new Map<string, ScriptedDecision[]>();
  private readonly childOutcomes = new Map<string, { output?: unknown; failureReason?: string }[]>();
  private readonly steps = new Map<string, StepRow>();
  private readonly occurrences = new Map<string, number>();
  private readonly resources = new Map<string, { generation: number; binding: unknown }>();

  /** Queue decisions for `target` (`"*"` matches any target without its own queue). */
  script(target: string, ...decisions: ScriptedDecision[]): void {
    const queue = this.scripts.get(target) ?? [];
    queue.push(...decisions);
    this.scripts.set(target, queue);
  }

  /** Queue the outcome of the next child of agent `agentId`. */
  scriptChild(agentId: string, outcome: { output?: unknown; failureReason?: string }): void {
    const queue = this.childOutcomes.get(agentId) ?? [];
    queue.push(outcome);
    this.childOutcomes.set(agentId, queue);
  }

  private next(target: string): ScriptedDecision {
    const own = this.scripts.get(target);
    if (own !== undefined && own.length > 0) return own.shift() as ScriptedDecision;
    const any = this.scripts.get("*");
    if (any !== undefined && any.length > 0) return any.shift() as ScriptedDecision;
    return { kind: "proceed" };
  }

  private checkLease(): void {
    if (this.leaseLost) throw new LeaseSuperseded();
  }

  async submitStep(executionId: string, _lease: LeaseRef, body: SubmitStepBody): Promise<StepDecisionLike> {
    this.checkLease();
    const hash = argsHashFromText(body.args.text);
    const key = `${body.kind}\u0000${body.target}\u0000${hash}`;
    const occurrence = this.occurrences.get(key) ?? 0;
    const stepId = computeStepId(executionId, body.kind, body.target, hash, occurrence);
    const scripted = this.next(body.target);
    const record = (decision: string) =>
      this.submitted.push({
        stepId,
        kind: body.kind,
        target: body.target,
        args: JSON.parse(body.args.text),
        idempotency: body.idempotency,
        resources: body.resources,
        decision,
      });
    switch (scripted.kind) {
      case "proceed":
        this.occurrences.set(key, occurrence + 1);
        this.steps.set(stepId, { stepId, target: body.target, status: "executing" });
        record("proceed");
        return { decision: "proceed", stepId, resources: [] };
      case "replay":
        this.occurrences.set(key, occurrence + 1);
        record("replay");
        if ("error" in scripted) {
          const error = typeof scripted.error === "string" ? { message: scripted.error } : scripted.error;
          return { decision: "replay", stepId, error };
        }
        return { decision: "replay", stepId, result: scripted.result };
      case "deny":
        this.occurrences.set(key, occurrence + 1);
        record("denied");
        return {
          decision: "denied",
          stepId,
          reason: scripted.reason ?? "policy_denied",
          ruleId: scripted.ruleId,
        };
      case "block":
        record("blocked");
        return { decision: "blocked", stepId, approvalId: scripted.approvalId, reason: scripted.reason };
      case "rate_limit":
        record("rate_limited");
        return { decision: "rate_limited", reason: scripted.reason ?? "rate_limit_exceeded" };
      case "terminate":
        record("execution_terminal");
        return { decision: "execution_terminal" };
    }
  }

  async completeStep(
    _executionId: string,
    _lease: LeaseRef,
    stepId: string,
    body: { readonly result: unknown } & CaptureSet,
  ): Promise<unknown> {
    const row = this.steps.get(stepId);
    if (row !== undefined && row.status !== "executing") {
      return { decision: "replay", result: row.result, error: row.error };
    }
    const result = toValue(body.result);
    if (row !== undefined) Object.assign(row, { status: "succeeded", result });
    this.completed.push({ stepId, target: row?.target ?? "", result, ...capturesOf(body) });
    return { decision: "recorded" };
  }

  async failStep(
    _executionId: string,
    _lease: LeaseRef,
    stepId: string,
    body: { readonly error: { readonly message: string } } & CaptureSet,
  ): Promise<unknown> {
    const row = this.steps.get(stepId);
    if (row !== undefined) Object.assign(row, { status: "failed", error: body.error });
    this.failed.push({ stepId, target: row?.target ?? "", error: body.error, ...capturesOf(body) });
    return { decision: "recorded" };
  }

  async getStep(_executionId: string, stepId: string): Promise<StepLike | null> {
    const row = this.steps.get(stepId);
    if (row === undefined) return null;
    return {
      stepId: row.stepId,
      target: row.target,
      status: row.status,
      result: row.result,
      error: row.error,
    };
  }

  /**
   * Suspends unless every child created so far has a scripted outcome; those settle their
   * parent steps first (like the kernel's settlement, docs/protocol.md §8.5).
   */
  async suspend(): Promise<boolean> {
    this.checkLease();
    this.suspendCalls++;
    if (this.suspendFailures.length > 0) throw this.suspendFailures.shift();
    let waiting = false;
    for (const [index, child] of this.children.entries()) {
      const stepId = child.spawnedBy?.stepId;
      const row = stepId === undefined ? undefined : this.steps.get(stepId);
      if (row === undefined || row.status !== "executing") continue;
      const outcome = this.childOutcomes.get(child.agentId)?.shift();
      if (outcome === undefined) {
        waiting = true;
      } else if (outcome.failureReason !== undefined) {
        Object.assign(row, {
          status: "failed",
          // The kernel's settlement record (docs/protocol.md §8.5); ids match `ToolTestContext.client`.
          error: {
            execution_id: `child-${index + 1}`,
            failure_reason: outcome.failureReason,
            reason: "subagent_failed",
          },
        });
      } else {
        Object.assign(row, { status: "succeeded", result: outcome.output ?? null });
      }
    }
    return waiting;
  }

  async publishStreamDelta(
    _executionId: string,
    _lease: LeaseRef,
    stepId: string,
    body: { readonly seq: number; readonly data: string },
  ): Promise<unknown> {
    this.deltas.push({ stepId, seq: body.seq, data: body.data });
    return undefined;
  }

  async getPrevious(): Promise<unknown> {
    return this.previousState;
  }

  async registerResource(
    _id: string,
    _lease: LeaseRef,
    body: RegisterResourceBody,
  ): Promise<ResourceViewLike> {
    this.checkLease();
    const existing = this.resources.get(body.key);
    return {
      key: body.key,
      generation: existing?.generation ?? 0,
      binding: existing?.binding ?? null,
      covered: false,
      everySteps: body.everySteps,
      onCompletion: body.onCompletion,
    };
  }

  async bindResource(_id: string, _lease: LeaseRef, key: string, binding: unknown): Promise<unknown> {
    this.checkLease();
    this.resources.set(key, { generation: 0, binding });
    return undefined;
  }

  async publishCheckpoints(_id: string, _lease: LeaseRef, body: CaptureSet): Promise<unknown> {
    this.checkLease();
    this.checkpoints.push(body);
    return undefined;
  }
}

// Results travel as RawJson text; tests want values.
function toValue(value: unknown): unknown {
  if (RawJson.isInstance(value)) return JSON.parse(value.text);
  return value;
}

function capturesOf(body: CaptureSet): { captures?: CaptureSet } {
  if (body.captures === undefined && body.captureFailures === undefined) return {};
  return { captures: { captures: body.captures, captureFailures: body.captureFailures } };
}
