/**
 * Zod schemas of request bodies (snake_case, docs/protocol.md §4). Strict like the kernel's Go decoder
 * (`DisallowUnknownFields`): an unknown field is an error, at every level. Like Go, optional
 * fields accept `null` (Go leaves the field at its zero value).
 */

import { z } from "zod";
import { utf8Length } from "#crypto";
import { ValidationError, type ValidationIssue } from "./errors.js";
import {
  ApiKeyScopeSchema,
  IdempotencySchema,
  JsonValueSchema,
  RESOURCE_KEY_PATTERN,
  STREAM_DELTA_MAX_BYTES,
  StepKindSchema,
} from "./wire-common.js";

const optText = z.string().nullish();

/** A resource key (`^[A-Za-z0-9_.-]{1,128}$`). */
export const ResourceKeySchema = z.string().regex(RESOURCE_KEY_PATTERN, "invalid resource key");

/** A checkpoint taken for a resource (sent with a step outcome or `/resources/checkpoints`). */
export const CaptureSchema = z.strictObject({
  key: z.string(),
  generation: z.int(),
  checkpoint_ref: z.string(),
});
export type Capture = z.infer<typeof CaptureSchema>;

/** A checkpoint that could not be taken. */
export const CaptureFailureSchema = z.strictObject({
  key: z.string(),
  generation: z.int(),
  error: z.string(),
});
export type CaptureFailure = z.infer<typeof CaptureFailureSchema>;

/** `POST /v0/executions/{id}/steps` (docs/protocol.md §4.8). */
export const SubmitStepRequestSchema = z.strictObject({
  kind: StepKindSchema,
  target: z.string(),
  args: JsonValueSchema.optional(),
  idempotency: IdempotencySchema.nullish(),
  resources: z.array(z.string()).nullish(),
});
export type SubmitStepRequest = z.infer<typeof SubmitStepRequestSchema>;

/** `POST …/steps/{step_id}/complete` (docs/protocol.md §4.9). */
export const CompleteStepRequestSchema = z.strictObject({
  result: JsonValueSchema.optional(),
  captures: z.array(CaptureSchema).nullish(),
  capture_failures: z.array(CaptureFailureSchema).nullish(),
});
export type CompleteStepRequest = z.infer<typeof CompleteStepRequestSchema>;

/** `POST …/steps/{step_id}/fail` (docs/protocol.md §4.9); SDKs send `{"error":{"message":…}}`. */
export const FailStepRequestSchema = z.strictObject({
  error: JsonValueSchema.optional(),
  captures: z.array(CaptureSchema).nullish(),
  capture_failures: z.array(CaptureFailureSchema).nullish(),
});
export type FailStepRequest = z.infer<typeof FailStepRequestSchema>;

/** `{execution_id, step_id}` naming the parent step of a subagent (docs/protocol.md §8.2). */
export const SpawnedBySchema = z.strictObject({ execution_id: z.string(), step_id: z.string() });

/** `POST /v0/executions` (docs/protocol.md §4.1). */
export const CreateExecutionRequestSchema = z.strictObject({
  agent_id: z.string(),
  input: JsonValueSchema.optional(),
  agent_version: optText,
  session: optText,
  parent_execution_id: optText,
  idempotency_key: optText,
  spawned_by: SpawnedBySchema.nullish(),
  // Sent by the official Python SDK 0.29.2 (`Client.create(on_behalf_of=…)`); see docs/interop.md O3.
  on_behalf_of: optText,
});
export type CreateExecutionRequest = z.infer<typeof CreateExecutionRequestSchema>;

/** `POST …/complete` (docs/protocol.md §4.13); SDKs add `state` only when non-null. */
export const CompleteExecutionRequestSchema = z.strictObject({
  output: JsonValueSchema.optional(),
  state: JsonValueSchema.optional(),
});
export type CompleteExecutionRequest = z.infer<typeof CompleteExecutionRequestSchema>;

/** `POST …/fail` (docs/protocol.md §4.13): `error` is the failure-reason string. */
export const FailExecutionRequestSchema = z.strictObject({ error: optText });
export type FailExecutionRequest = z.infer<typeof FailExecutionRequestSchema>;

/** `POST /v0/agents` (docs/protocol.md §4.14). */
export const RegisterAgentRequestSchema = z.strictObject({
  id: z.string(),
  webhook_url: z.string(),
  secret: z.string(),
  lease_timeout_seconds: z.number().nullish(),
});
export type RegisterAgentRequest = z.infer<typeof RegisterAgentRequestSchema>;

/**
 * `PUT /v0/agents/{id}/metadata`: sent by the official Python SDK 0.29.2 (`KernelClient.set_metadata`)
 * at agent start-up; not in docs/protocol.md (docs/interop.md D1/O1). The schemas are opaque JSON objects.
 */
export const SetAgentMetadataRequestSchema = z.strictObject({
  description: optText,
  input_schema: z.record(z.string(), JsonValueSchema).nullish(),
  output_schema: z.record(z.string(), JsonValueSchema).nullish(),
});
export type SetAgentMetadataRequest = z.infer<typeof SetAgentMetadataRequestSchema>;

/** `POST /v0/policies/{agent_id}` (docs/protocol.md §4.14). */
export const SetPolicyRequestSchema = z.strictObject({ bundle: z.string() });
export type SetPolicyRequest = z.infer<typeof SetPolicyRequestSchema>;

/**
 * `POST /v0/policies/{agent_id}/test` (docs/protocol.md §4.14). Field names of `cases` follow the CLI
 * cases file; the server shape is not documented (docs/protocol.md §16.13).
 */
export const TestPolicyRequestSchema = z.strictObject({
  bundle: optText,
  cases: z
    .array(
      z.strictObject({
        name: optText,
        target: z.string(),
        kind: StepKindSchema.nullish(),
        args: JsonValueSchema.optional(),
        agent_id: optText,
        expect: optText,
        expect_rule: optText,
      }),
    )
    .nullish(),
  execution_id: optText,
  executions: z.strictObject({ session: optText, since: optText, limit: z.int().nullish() }).nullish(),
});
export type TestPolicyRequest = z.infer<typeof TestPolicyRequestSchema>;

/** `POST /v0/approvals/{id}/grant|deny` (docs/protocol.md §4.15). */
// `decided_by` is optional: the official Python SDK omits it when empty (docs/interop.md O2); the
// kernel then treats the decider as "" (allowed only when the approval names no approvers).
export const DecideApprovalRequestSchema = z.strictObject({ decided_by: optText, rationale: optText });
export type DecideApprovalRequest = z.infer<typeof DecideApprovalRequestSchema>;

/** `POST /v0/api-keys` (docs/protocol.md §4.16). */
export const CreateApiKeyRequestSchema = z.strictObject({
  name: z.string(),
  scopes: z.array(ApiKeyScopeSchema),
});
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequestSchema>;

/** `POST …/steps/{step_id}/stream` (docs/protocol.md §4.10): `data` at most 7000 UTF-8 bytes. */
export const StreamDeltaRequestSchema = z.strictObject({
  seq: z.int(),
  data: z
    .string()
    .refine(
      (d) => d.length <= STREAM_DELTA_MAX_BYTES / 3 || utf8Length(d) <= STREAM_DELTA_MAX_BYTES,
      `stream delta data exceeds ${STREAM_DELTA_MAX_BYTES} bytes`,
    ),
});
export type StreamDeltaRequest = z.infer<typeof StreamDeltaRequestSchema>;

/** `POST …/resources` (docs/protocol.md §4.17). */
export const RegisterResourceRequestSchema = z.strictObject({
  key: ResourceKeySchema,
  driver_id: z.string(),
  configuration: JsonValueSchema.optional(),
  coverage_reuse: z.boolean().nullish(),
  every_steps: z.int().min(0).nullish(),
  on_completion: z.boolean().nullish(),
});
export type RegisterResourceRequest = z.infer<typeof RegisterResourceRequestSchema>;

/** `POST …/resources/{key}/binding` (docs/protocol.md §4.17): any non-null JSON. */
export const BindResourceRequestSchema = z.strictObject({
  binding: z.unknown().refine((b) => b !== null && b !== undefined, "binding must not be null"),
});
export type BindResourceRequest = z.infer<typeof BindResourceRequestSchema>;

/** `POST …/resources/checkpoints` (docs/protocol.md §4.17). */
export const CheckpointsRequestSchema = z.strictObject({
  captures: z.array(CaptureSchema).nullish(),
  capture_failures: z.array(CaptureFailureSchema).nullish(),
});
export type CheckpointsRequest = z.infer<typeof CheckpointsRequestSchema>;

/** `POST …/fork` (docs/protocol.md §4.17). */
export const ForkRequestSchema = z.strictObject({
  at_seq: z.int().min(0),
  session: optText,
  policy_bundle: optText,
});
export type ForkRequest = z.infer<typeof ForkRequestSchema>;

function issueText(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    // Go's wording, so the dev kernel answers like the real one.
    const key = issue.keys[0] ?? "";
    return `json: unknown field ${JSON.stringify(path === "" ? key : `${path}.${key}`)}`;
  }
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}

// --- fast acceptance for the agent hot path -------------------------------------------------
//
// Every tool call is a submit plus a complete, and zod's generic walk (with a fresh output object
// per call) was a visible share of the dev kernel's CPU per step. These checks accept only bodies
// the schema certainly accepts, in their common shape, and then the parsed body itself is the
// result (zod would return an equal copy). Anything else — unknown keys, wrong types, non-empty
// captures — goes through zod, which produces the exact error or output as before.

function isJsonObject(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
  );
}

function isStepKind(v: unknown): boolean {
  return v === "tool_call" || v === "llm_call" || v === "local";
}

function isStringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
  return true;
}

function acceptsSubmitStep(v: unknown): boolean {
  if (!isJsonObject(v) || !isStepKind(v.kind) || typeof v.target !== "string") return false;
  for (const key of Object.keys(v)) {
    switch (key) {
      case "kind":
      case "target":
      case "args":
        break;
      case "idempotency": {
        const i = v.idempotency;
        if (i !== null && i !== "safe_to_retry" && i !== "at_most_once") return false;
        break;
      }
      case "resources":
        if (v.resources !== null && !isStringArray(v.resources)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// complete/fail: the value field plus captures and capture failures, when absent, null or empty.
function acceptsOutcome(valueKey: "result" | "error"): (v: unknown) => boolean {
  return (v) => {
    if (!isJsonObject(v)) return false;
    for (const key of Object.keys(v)) {
      if (key === valueKey) continue;
      if (key !== "captures" && key !== "capture_failures") return false;
      const list = v[key];
      if (list !== null && !(Array.isArray(list) && list.length === 0)) return false;
    }
    return true;
  };
}

const FAST_ACCEPT = new Map<z.ZodType, (value: unknown) => boolean>([
  [SubmitStepRequestSchema, acceptsSubmitStep],
  [CompleteStepRequestSchema, acceptsOutcome("result")],
  [FailStepRequestSchema, acceptsOutcome("error")],
]);

/**
 * Validate a parsed request body against one of the schemas above. Throws
 * `ValidationError("validation error: <first problem>")` with every problem in `issues`; unknown
 * fields read `json: unknown field "x"` like the kernel's.
 */
export function validateRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const fast = FAST_ACCEPT.get(schema);
  if (fast?.(body)) return body as z.output<S>;
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((i) => ({
    path: i.path,
    message: issueText(i),
    code: i.code,
  }));
  throw new ValidationError(`validation error: ${issues[0]?.message ?? "invalid request body"}`, { issues });
}
