/**
 * camelCase models returned by the parsers in parse-models.ts. Optional wire fields that are
 * absent, `null` or `""` are left out (docs/protocol.md §1.1); JSON-valued fields (`output`, `result`,
 * `args`…) are present whenever the field was present, `null` included.
 */
import type { z } from "zod";
import type {
  ApprovalStatus,
  Decision,
  ExecutionStatus,
  Idempotency,
  StepKind,
  StepStatus,
} from "./wire-common.js";
import type {
  ApprovalEventPayloadWire,
  DispatchEventPayloadWire,
  EventType,
  ExecutionEventPayloadWire,
  ResourceEventPayloadWire,
  StepEventPayloadWire,
} from "./wire-responses.js";

/** Parent step of a subagent execution. */
export interface SpawnedBy {
  readonly executionId: string;
  readonly stepId: string;
}

/** Per-resource restoration state of a fork. */
export interface RestorationEntry {
  readonly checkpointRef?: string | undefined;
  readonly checkpointSeq?: number | undefined;
  readonly covered: boolean;
}

/** One run of one agent against one input (docs/protocol.md §1.1). */
export interface Execution {
  readonly id: string;
  readonly agentId: string;
  readonly agentVersion?: string | undefined;
  /** `null` when the create omitted it. */
  readonly input: unknown;
  readonly status: ExecutionStatus;
  /** Present once completed with an output. */
  readonly output?: unknown;
  readonly failureReason?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly deadlineAt?: string | undefined;
  readonly session?: string | undefined;
  readonly parentExecutionId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly spawnedBy?: SpawnedBy | undefined;
  readonly forkedFrom?: string | undefined;
  readonly forkSeq?: number | undefined;
  readonly restoration?: Readonly<Record<string, RestorationEntry>> | undefined;
  /** Subject the execution was created for (`on_behalf_of` on create; docs/interop.md O3). */
  readonly onBehalfOf?: string | undefined;
}

/** A page of `GET /v0/executions`. */
export interface ExecutionList {
  readonly executions: readonly Execution[];
  readonly nextCursor?: string | undefined;
}

/** A single effect within an execution (docs/protocol.md §1.2). */
export interface Step {
  readonly stepId: string;
  readonly executionId: string;
  readonly kind: StepKind;
  readonly target: string;
  readonly argsHash: string;
  readonly occurrence: number;
  readonly status: StepStatus;
  /** Defaults to `safe_to_retry` when the wire omits it. */
  readonly idempotency: Idempotency;
  readonly args?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly startedAt?: string | undefined;
  readonly completedAt?: string | undefined;
}

/** Resource generation handed out with a `proceed` decision. */
export interface StepResource {
  readonly key: string;
  readonly generation: number;
  /** A checkpoint capture is scheduled after this step. */
  readonly due: boolean;
}

/**
 * Answer to a step submission (docs/protocol.md §4.8). For `replay`, `error` (never `null`) means the
 * step failed; otherwise `result` holds the recorded value (`null` when recorded as null or
 * absent).
 */
export interface StepDecision {
  readonly decision: Decision;
  readonly stepId?: string | undefined;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly approvalId?: string | undefined;
  readonly reason?: string | undefined;
  readonly ruleId?: string | undefined;
  /** Always an array (`[]` when the wire omits it). */
  readonly resources: readonly StepResource[];
}

/** Fields every event carries, whatever its type. */
interface EventEnvelope<T extends EventType, P> {
  readonly executionId: string;
  readonly eventSeq: number;
  readonly type: T;
  /** snake_case payload as sent (`{}` when absent); loose: newer kernels add fields. */
  readonly payload: P;
  readonly occurredAt: string;
}

/** Payload of `execution.*` events (snake_case, as sent). */
export type ExecutionEventPayload = Readonly<z.infer<typeof ExecutionEventPayloadWire>>;
/** Payload of `step.*` events. */
export type StepEventPayload = Readonly<z.infer<typeof StepEventPayloadWire>>;
/** Payload of `resource.*` events. */
export type ResourceEventPayload = Readonly<z.infer<typeof ResourceEventPayloadWire>>;
/** Payload of `approval.*` events. */
export type ApprovalEventPayload = Readonly<z.infer<typeof ApprovalEventPayloadWire>>;
/** Payload of `dispatch.*` events. */
export type DispatchEventPayload = Readonly<z.infer<typeof DispatchEventPayloadWire>>;

type EventTypeOf<Prefix extends string> = Extract<EventType, `${Prefix}.${string}`>;

/** `execution.created`, `execution.started`, … `execution.cancelled`. */
export type ExecutionEvent = EventEnvelope<EventTypeOf<"execution">, ExecutionEventPayload>;
/** `step.proposed`, `step.allowed`, … `step.cancelled`. */
export type StepEvent = EventEnvelope<EventTypeOf<"step">, StepEventPayload>;
/** `resource.registered`, … `resource.checkpoint_failed`. */
export type ResourceEvent = EventEnvelope<EventTypeOf<"resource">, ResourceEventPayload>;
/** `approval.requested`, `approval.granted`, `approval.denied`, `approval.expired`. */
export type ApprovalEvent = EventEnvelope<EventTypeOf<"approval">, ApprovalEventPayload>;
/** `dispatch.queued`, `dispatch.acked`, `dispatch.failed`, `dispatch.discarded`. */
export type DispatchEvent = EventEnvelope<EventTypeOf<"dispatch">, DispatchEventPayload>;

/**
 * One entry of an execution's append-only log (docs/protocol.md §1.6, §10): a union discriminated by
 * `type`, so `if (event.type === "step.succeeded") event.payload.step_id` is typed. The payload is
 * passed on as the kernel sent it, unchecked. A newer kernel may send types not listed in
 * `EVENT_TYPES`; keep a `default` branch when switching on `type`.
 */
export type Event = ExecutionEvent | StepEvent | ResourceEvent | ApprovalEvent | DispatchEvent;

/** A human approval request (docs/protocol.md §1.4). */
export interface Approval {
  readonly id: string;
  readonly stepId: string;
  readonly executionId: string;
  readonly status: ApprovalStatus;
  /** Empty = anyone may decide. */
  readonly approvers: readonly string[];
  readonly message?: string | undefined;
  readonly timeoutAt: string;
  readonly decidedBy?: string | undefined;
  readonly decidedAt?: string | undefined;
  readonly rationale?: string | undefined;
  readonly createdAt: string;
}

/** A registered agent (docs/protocol.md §1.5). */
export interface Agent {
  readonly id: string;
  readonly webhookUrl: string;
  readonly policyBundle?: string | undefined;
  readonly registeredAt: string;
  readonly leaseTimeoutSeconds?: number | undefined;
}

/** An API key's metadata; `token` only right after create/rotate. */
export interface ApiKey {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly createdAt: string;
  readonly token?: string | undefined;
  readonly revokedAt?: string | undefined;
  readonly revoked: boolean;
}

/** State of a registered resource (docs/protocol.md §4.17). */
export interface ResourceView {
  readonly key: string;
  readonly driverId: string;
  readonly configuration: unknown;
  readonly coverageReuse: boolean;
  readonly everySteps: number;
  readonly onCompletion: boolean;
  readonly generation: number;
  readonly count: number;
  readonly registeredSeq: number;
  readonly binding?: unknown;
  readonly checkpointRef?: string | undefined;
  readonly covered: boolean;
}

/** Body of a kernel → agent webhook (docs/protocol.md §7.2). */
export interface WebhookPayload {
  readonly executionId: string;
  readonly dispatchId: string;
  /** Integer ≥ 1. */
  readonly dispatchAttempt: number;
  /** Seconds, > 0, may be fractional. */
  readonly leaseTimeoutSeconds: number;
}

/** A checkpoint usable for a fork. */
export interface ForkCheckpoint {
  readonly key: string;
  readonly generation: number;
  readonly checkpointRef: string;
  readonly coveredSeq: number;
  readonly invalidatedSeq?: number | undefined;
}

/** `GET …/fork-points` (docs/protocol.md §4.17). */
export interface ForkPoints {
  readonly latestSeq: number;
  /** Resource key → `registered_seq`. */
  readonly resources: Readonly<Record<string, number>>;
  readonly checkpoints: readonly ForkCheckpoint[];
}
