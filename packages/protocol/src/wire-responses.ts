/**
 * Zod schemas of the kernel's response bodies (snake_case, docs/protocol.md §1, §4, §10). Unknown fields
 * are tolerated (`z.looseObject`) and optional text fields may be absent, `null` or `""`
 * (docs/protocol.md §1.1). These document the wire and back the dev kernel's tests; the SDK's hot paths
 * use the hand-written parsers in parse-models.ts.
 */
import { z } from "zod";
import {
  ApprovalStatusSchema,
  DecisionSchema,
  ExecutionStatusSchema,
  IdempotencySchema,
  JsonValueSchema,
  StepKindSchema,
  StepStatusSchema,
} from "./wire-common.js";

const optText = z.string().nullish();
const optInt = z.int().nullish();

export const SpawnedByWire = z.looseObject({ execution_id: z.string(), step_id: z.string() });
export type SpawnedByWire = z.infer<typeof SpawnedByWire>;

export const RestorationEntryWire = z.looseObject({
  checkpoint_ref: optText,
  checkpoint_seq: optInt,
  covered: z.boolean(),
});
export type RestorationEntryWire = z.infer<typeof RestorationEntryWire>;

/** Execution (docs/protocol.md §1.1). */
export const ExecutionWire = z.looseObject({
  id: z.string(),
  agent_id: z.string(),
  agent_version: optText,
  input: JsonValueSchema.optional(),
  status: ExecutionStatusSchema,
  output: JsonValueSchema.optional(),
  failure_reason: optText,
  created_at: z.string(),
  updated_at: z.string(),
  deadline_at: optText,
  session: optText,
  parent_execution_id: optText,
  idempotency_key: optText,
  spawned_by: SpawnedByWire.nullish(),
  forked_from: optText,
  fork_seq: optInt,
  restoration: z.record(z.string(), RestorationEntryWire).nullish(),
  on_behalf_of: optText,
});
export type ExecutionWire = z.infer<typeof ExecutionWire>;

/** `GET /v0/executions` (docs/protocol.md §4.2). */
export const ExecutionListWire = z.looseObject({
  executions: z.array(ExecutionWire).nullish(),
  next_cursor: optText,
});
export type ExecutionListWire = z.infer<typeof ExecutionListWire>;

/** Step (docs/protocol.md §1.2). */
export const StepWire = z.looseObject({
  step_id: z.string(),
  execution_id: z.string(),
  kind: StepKindSchema,
  target: z.string(),
  args_hash: z.string(),
  occurrence: z.int().min(0),
  status: StepStatusSchema,
  idempotency: IdempotencySchema.or(z.literal("")).nullish(),
  args: JsonValueSchema.optional(),
  result: JsonValueSchema.optional(),
  error: JsonValueSchema.optional(),
  started_at: optText,
  completed_at: optText,
});
export type StepWire = z.infer<typeof StepWire>;

/** `{key, generation, due}` in a `proceed` decision (docs/protocol.md §1.10). */
export const StepResourceWire = z.looseObject({ key: z.string(), generation: z.int(), due: z.boolean() });
export type StepResourceWire = z.infer<typeof StepResourceWire>;

/** Answer to `POST …/steps` (docs/protocol.md §4.8). */
export const StepDecisionWire = z.looseObject({
  decision: DecisionSchema,
  step_id: optText,
  result: JsonValueSchema.optional(),
  error: JsonValueSchema.optional(),
  approval_id: optText,
  reason: optText,
  rule_id: optText,
  resources: z.array(StepResourceWire).nullish(),
});
export type StepDecisionWire = z.infer<typeof StepDecisionWire>;

/** Answer to step complete/fail (docs/protocol.md §4.9; SDKs ignore it). */
export const StepOutcomeWire = z.looseObject({
  decision: z.enum(["recorded", "replay", "execution_terminal"]),
  result: JsonValueSchema.optional(),
  error: JsonValueSchema.optional(),
});
export type StepOutcomeWire = z.infer<typeof StepOutcomeWire>;

/** Event envelope (docs/protocol.md §1.6); payload shapes in docs/protocol.md §10 (see the *EventPayloadWire schemas). */
export const EventWire = z.looseObject({
  execution_id: z.string(),
  event_seq: z.int().min(1),
  type: z.string(),
  payload: z.record(z.string(), z.unknown()).nullish(),
  occurred_at: z.string(),
});
export type EventWire = z.infer<typeof EventWire>;

/** Approval (docs/protocol.md §1.4). */
export const ApprovalWire = z.looseObject({
  id: z.string(),
  step_id: z.string(),
  execution_id: z.string(),
  status: ApprovalStatusSchema,
  approvers: z.array(z.string()).nullish(),
  message: optText,
  timeout_at: z.string(),
  decided_by: optText,
  decided_at: optText,
  rationale: optText,
  created_at: z.string(),
});
export type ApprovalWire = z.infer<typeof ApprovalWire>;

/** Agent read shape (docs/protocol.md §1.5); the secret is never returned. */
export const AgentWire = z.looseObject({
  id: z.string(),
  webhook_url: z.string(),
  policy_bundle: optText,
  registered_at: z.string(),
  lease_timeout_seconds: z.number().nullish(),
  // Published by the agent through `PUT /v0/agents/{id}/metadata` (docs/interop.md O1).
  description: optText,
  input_schema: z.record(z.string(), JsonValueSchema).nullish(),
  output_schema: z.record(z.string(), JsonValueSchema).nullish(),
});
export type AgentWire = z.infer<typeof AgentWire>;

/**
 * API key (docs/protocol.md §4.16). `token` only on create/rotate. The list shape is not documented
 * (docs/protocol.md §16.13): `revoked_at`/`revoked` are accepted when present.
 */
export const ApiKeyWire = z.looseObject({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()).nullish(),
  created_at: z.string(),
  token: optText,
  revoked_at: optText,
  revoked: z.boolean().nullish(),
});
export type ApiKeyWire = z.infer<typeof ApiKeyWire>;

/** Resource view returned by `POST …/resources` (docs/protocol.md §4.17). */
export const ResourceViewWire = z.looseObject({
  key: z.string(),
  driver_id: z.string(),
  configuration: JsonValueSchema.optional(),
  coverage_reuse: z.boolean().nullish(),
  every_steps: optInt,
  on_completion: z.boolean().nullish(),
  generation: optInt,
  count: optInt,
  registered_seq: optInt,
  binding: JsonValueSchema.optional(),
  checkpoint_ref: optText,
  covered: z.boolean().nullish(),
});
export type ResourceViewWire = z.infer<typeof ResourceViewWire>;

/** Kernel → agent webhook body (docs/protocol.md §7.2). Required fields are checked strictly by agents. */
export const WebhookPayloadWire = z.looseObject({
  execution_id: z.string().min(1),
  dispatch_id: z.string().min(1),
  dispatch_attempt: z.int().positive(),
  lease_timeout_seconds: z.number().positive(),
});
export type WebhookPayloadWire = z.infer<typeof WebhookPayloadWire>;

export const ForkCheckpointWire = z.looseObject({
  key: z.string(),
  generation: z.int(),
  checkpoint_ref: z.string(),
  covered_seq: z.int(),
  invalidated_seq: optInt,
});
export type ForkCheckpointWire = z.infer<typeof ForkCheckpointWire>;

/** `GET …/fork-points` (docs/protocol.md §4.17). */
export const ForkPointsWire = z.looseObject({
  latest_seq: z.int(),
  resources: z.record(z.string(), z.int()).nullish(),
  checkpoints: z.array(ForkCheckpointWire).nullish(),
});
export type ForkPointsWire = z.infer<typeof ForkPointsWire>;

/** `GET …/previous`. */
export const PreviousWire = z.looseObject({ state: JsonValueSchema.optional() });
/** `POST …/suspend`. */
export const SuspendWire = z.looseObject({ suspended: z.boolean() });
/** Error envelope (docs/protocol.md §2). */
export const ErrorEnvelopeWire = z.looseObject({ code: z.string(), message: z.string(), details: optText });
export type ErrorEnvelopeWire = z.infer<typeof ErrorEnvelopeWire>;
/** One SSE `data:` frame of `GET …/stream` (docs/protocol.md §4.5). */
export const StreamFrameWire = z.looseObject({ step_id: z.string(), seq: z.int(), data: z.string() });
export type StreamFrameWire = z.infer<typeof StreamFrameWire>;
/** `GET /v0/health` and `/v0/ready`. */
export const HealthWire = z.looseObject({ status: z.string() });

// Event payloads (docs/protocol.md §10). Loose: payloads gain fields across kernel versions.

/** `execution.*` payloads. */
export const ExecutionEventPayloadWire = z.looseObject({
  execution_id: z.string(),
  status: ExecutionStatusSchema,
  session: optText,
  deadline_at: optText,
  reason: optText,
  output: JsonValueSchema.optional(),
  parent_execution_id: optText,
  spawned_by: SpawnedByWire.nullish(),
  source_execution_id: optText,
  fork_seq: optInt,
});
/** `step.*` payloads. */
export const StepEventPayloadWire = z.looseObject({
  step_id: z.string(),
  step_type: StepKindSchema.nullish(),
  target: optText,
  rule_id: optText,
  policy_hash: optText,
  error: JsonValueSchema.optional(),
  reason: optText,
  usage: z.looseObject({ input_tokens: z.number(), output_tokens: z.number() }).nullish(),
  resources: z.array(z.string()).nullish(),
  generations: z.unknown().optional(),
});
/** `resource.*` payloads. */
export const ResourceEventPayloadWire = z.looseObject({
  key: z.string(),
  driver_id: optText,
  configuration: JsonValueSchema.optional(),
  coverage_reuse: z.boolean().nullish(),
  every_steps: optInt,
  on_completion: z.boolean().nullish(),
  generation: optInt,
  checkpoint_ref: optText,
  covered_seq: optInt,
  binding: JsonValueSchema.optional(),
  error: JsonValueSchema.optional(),
});
/** `approval.*` payloads. */
export const ApprovalEventPayloadWire = z.looseObject({
  approval_id: z.string(),
  step_id: z.string(),
  execution_id: z.string(),
  status: ApprovalStatusSchema,
  decided_by: optText,
  rationale: optText,
});
/** `dispatch.*` payloads. */
export const DispatchEventPayloadWire = z.looseObject({
  dispatch_id: z.string(),
  execution_id: z.string(),
  status: z.enum(["pending", "acked", "failed", "exhausted"]),
  attempt: z.int().min(0),
});

// The event type list lives in a zod-free module so that importing it keeps zod out of browser bundles.
export { EVENT_TYPES, type EventType } from "./event-types.js";
