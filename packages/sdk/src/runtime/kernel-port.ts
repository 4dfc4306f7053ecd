/**
 * The narrow slice of the agent→kernel API the SDK runtime uses. `AgentTransport` from
 * `@rebuno/kernel-transport` satisfies it structurally; `@rebuno/testing`'s `ToolTestContext`
 * implements it in memory so one tool body can be exercised without a kernel. Keeping the port
 * small keeps both implementations honest.
 */
import type { RawJson } from "@rebuno/protocol";
import type { CallKind } from "../tool-spec.js";
import type { Idempotency } from "../tool-types.js";

/** The dispatch lease every write carries (same shape as kernel-transport's `DispatchLease`). */
export interface LeaseRef {
  readonly dispatchId: string;
  readonly attempt: number;
  readonly timeoutMs: number;
}

/** A resource the kernel marked on a `proceed` decision (`due` → capture after the body). */
export interface StepResourceRef {
  readonly key: string;
  readonly generation: number;
  readonly due?: boolean | undefined;
}

/** The kernel's answer to a step submission (docs/protocol.md §6.4). */
export interface StepDecisionLike {
  readonly decision: string;
  readonly stepId?: string | undefined;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly approvalId?: string | undefined;
  readonly reason?: string | undefined;
  readonly ruleId?: string | undefined;
  readonly resources?: readonly StepResourceRef[] | undefined;
}

/** The fields of a stored step the runtime reads after a subagent settled. */
export interface StepLike {
  readonly stepId: string;
  readonly target: string;
  readonly status: string;
  readonly result?: unknown;
  readonly error?: unknown;
}

/** A step submission body. `args` is pre-serialized (strict JSON) to keep one serialization. */
export interface SubmitStepBody {
  readonly kind: CallKind;
  readonly target: string;
  readonly args: RawJson;
  readonly idempotency: Idempotency;
  readonly resources: readonly string[];
}

/** A checkpoint taken after a step body (docs/protocol.md §1.10). */
export interface CaptureRef {
  readonly key: string;
  readonly generation: number;
  readonly checkpointRef: string;
}

/** A checkpoint that failed; the step outcome is still recorded. */
export interface CaptureFailureRef {
  readonly key: string;
  readonly generation: number;
  readonly error: string;
}

/** Captures that travel with a step outcome. */
export interface CaptureSet {
  readonly captures?: readonly CaptureRef[] | undefined;
  readonly captureFailures?: readonly CaptureFailureRef[] | undefined;
}

/** The kernel's view of a registered resource (the fields the SDK reads). */
export interface ResourceViewLike {
  readonly key: string;
  readonly generation: number;
  readonly binding?: unknown;
  readonly checkpointRef?: string | null | undefined;
  readonly covered?: boolean | undefined;
  readonly everySteps?: number | undefined;
  readonly onCompletion?: boolean | undefined;
}

/** Body of `POST .../resources`. */
export interface RegisterResourceBody {
  readonly key: string;
  readonly driverId: string;
  readonly configuration: unknown;
  readonly coverageReuse: boolean;
  readonly everySteps: number;
  readonly onCompletion: boolean;
}

/** What the SDK runtime needs from the kernel. */
export interface KernelPort {
  submitStep(executionId: string, lease: LeaseRef, body: SubmitStepBody): Promise<StepDecisionLike>;
  completeStep(
    executionId: string,
    lease: LeaseRef,
    stepId: string,
    body: { readonly result: unknown } & CaptureSet,
  ): Promise<unknown>;
  failStep(
    executionId: string,
    lease: LeaseRef,
    stepId: string,
    body: { readonly error: { readonly message: string } } & CaptureSet,
  ): Promise<unknown>;
  getStep(executionId: string, stepId: string): Promise<StepLike | null>;
  suspend(executionId: string, lease: LeaseRef): Promise<boolean>;
  getPrevious(executionId: string): Promise<unknown>;
  registerResource(
    executionId: string,
    lease: LeaseRef,
    body: RegisterResourceBody,
  ): Promise<ResourceViewLike>;
  bindResource(executionId: string, lease: LeaseRef, key: string, binding: unknown): Promise<unknown>;
  publishCheckpoints(executionId: string, lease: LeaseRef, body: CaptureSet): Promise<unknown>;
  /** Live stream deltas of an LLM call (best effort; optional for test ports). */
  publishStreamDelta?(
    executionId: string,
    lease: LeaseRef,
    stepId: string,
    body: { readonly seq: number; readonly data: string },
  ): Promise<unknown>;
}

/** The part of `Client` that `subagent()` uses to create the child execution. */
export interface SubagentClient {
  create(
    agentId: string,
    input?: unknown,
    options?: {
      readonly session?: string;
      readonly idempotencyKey?: string;
      readonly spawnedBy?: { readonly executionId: string; readonly stepId: string };
    },
  ): Promise<unknown>;
}
