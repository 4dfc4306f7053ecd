/**
 * Hand-written snake_case → camelCase parsers. They check what the SDK relies on (types of the
 * fields it reads, enum values), tolerate unknown fields, and normalize absent/`null`/`""`
 * optional text to "absent" (docs/protocol.md §1.1). Hand-written rather than zod because
 * `parseStepDecision` sits on the per-step hot path. Failures are `ValidationError`s naming the
 * entity and field.
 */
import { RebunoError, ValidationError } from "./errors.js";
import type {
  Agent,
  ApiKey,
  Approval,
  Event,
  Execution,
  ExecutionList,
  ForkCheckpoint,
  ForkPoints,
  ResourceView,
  RestorationEntry,
  SpawnedBy,
  Step,
  StepDecision,
  StepResource,
  WebhookPayload,
} from "./models.js";
import {
  APPROVAL_STATUSES,
  type ApprovalStatus,
  DECISIONS,
  type Decision,
  EXECUTION_STATUSES,
  type ExecutionStatus,
  IDEMPOTENCY_MODES,
  type Idempotency,
  STEP_KINDS,
  STEP_STATUSES,
  type StepKind,
  type StepStatus,
} from "./wire-common.js";

type Obj = Record<string, unknown>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function fail(entity: string, key: string, expected: string): never {
  throw new ValidationError(`invalid ${entity}: ${key} must be ${expected}`, {
    issues: [{ path: key === "" ? [] : [key], message: `must be ${expected}` }],
  });
}

function asObj(value: unknown, entity: string): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(entity, "body", "an object");
  return value as Obj;
}

function str(o: Obj, key: string, entity: string): string {
  const v = o[key];
  if (typeof v !== "string") fail(entity, key, "a string");
  return v;
}

function optStr(o: Obj, key: string, entity: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") fail(entity, key, "a string");
  return v;
}

function int(o: Obj, key: string, entity: string, min = Number.MIN_SAFE_INTEGER): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) {
    fail(entity, key, min === 0 ? "a non-negative integer" : min === 1 ? "a positive integer" : "an integer");
  }
  return v;
}

function optInt(o: Obj, key: string, entity: string, fallback?: number): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) fail(entity, key, "an integer");
  return v;
}

function optNum(o: Obj, key: string, entity: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) fail(entity, key, "a number");
  return v;
}

function bool(o: Obj, key: string, entity: string, fallback: boolean): boolean {
  const v = o[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "boolean") fail(entity, key, "a boolean");
  return v;
}

function oneOf<T extends string>(o: Obj, key: string, entity: string, allowed: ReadonlySet<string>): T {
  const v = o[key];
  if (typeof v !== "string" || !allowed.has(v)) fail(entity, key, `one of ${[...allowed].join(", ")}`);
  return v as T;
}

function strings(o: Obj, key: string, entity: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) fail(entity, key, "an array of strings");
  return v as string[];
}

const EXECUTION_STATUS_SET: ReadonlySet<string> = new Set(EXECUTION_STATUSES);
const STEP_KIND_SET: ReadonlySet<string> = new Set(STEP_KINDS);
const STEP_STATUS_SET: ReadonlySet<string> = new Set(STEP_STATUSES);
const IDEMPOTENCY_SET: ReadonlySet<string> = new Set(IDEMPOTENCY_MODES);
const DECISION_SET: ReadonlySet<string> = new Set(DECISIONS);
const APPROVAL_STATUS_SET: ReadonlySet<string> = new Set(APPROVAL_STATUSES);

function parseSpawnedBy(v: unknown): SpawnedBy | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObj(v, "spawned_by");
  return { executionId: str(o, "execution_id", "spawned_by"), stepId: str(o, "step_id", "spawned_by") };
}

function parseRestoration(v: unknown): Record<string, RestorationEntry> | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObj(v, "restoration");
  const out: Record<string, RestorationEntry> = {};
  for (const key of Object.keys(o)) {
    const e = asObj(o[key], "restoration entry");
    const entry: Mutable<RestorationEntry> = { covered: bool(e, "covered", "restoration entry", false) };
    const ref = optStr(e, "checkpoint_ref", "restoration entry");
    if (ref !== undefined) entry.checkpointRef = ref;
    const seq = optInt(e, "checkpoint_seq", "restoration entry");
    if (seq !== undefined) entry.checkpointSeq = seq;
    out[key] = entry;
  }
  return out;
}

/** Parse an execution object (docs/protocol.md §1.1). */
export function parseExecution(body: unknown): Execution {
  const E = "execution";
  const o = asObj(body, E);
  const out: Mutable<Execution> = {
    id: str(o, "id", E),
    agentId: str(o, "agent_id", E),
    input: o.input === undefined ? null : o.input,
    status: oneOf<ExecutionStatus>(o, "status", E, EXECUTION_STATUS_SET),
    createdAt: str(o, "created_at", E),
    updatedAt: str(o, "updated_at", E),
  };
  if (o.output !== undefined) out.output = o.output;
  const texts = [
    ["agent_version", "agentVersion"],
    ["failure_reason", "failureReason"],
    ["deadline_at", "deadlineAt"],
    ["session", "session"],
    ["parent_execution_id", "parentExecutionId"],
    ["idempotency_key", "idempotencyKey"],
    ["forked_from", "forkedFrom"],
    ["on_behalf_of", "onBehalfOf"],
  ] as const;
  for (const [wire, model] of texts) {
    const v = optStr(o, wire, E);
    if (v !== undefined) out[model] = v;
  }
  const spawnedBy = parseSpawnedBy(o.spawned_by);
  if (spawnedBy !== undefined) out.spawnedBy = spawnedBy;
  const forkSeq = optInt(o, "fork_seq", E);
  if (forkSeq !== undefined) out.forkSeq = forkSeq;
  const restoration = parseRestoration(o.restoration);
  if (restoration !== undefined) out.restoration = restoration;
  return out;
}

/** Parse a `GET /v0/executions` page. */
export function parseExecutionList(body: unknown): ExecutionList {
  const o = asObj(body, "execution list");
  const items = o.executions ?? [];
  if (!Array.isArray(items)) fail("execution list", "executions", "an array");
  const out: Mutable<ExecutionList> = { executions: items.map(parseExecution) };
  const next = optStr(o, "next_cursor", "execution list");
  if (next !== undefined) out.nextCursor = next;
  return out;
}

/** Parse a step (docs/protocol.md §1.2). */
export function parseStep(body: unknown): Step {
  const E = "step";
  const o = asObj(body, E);
  const idem = o.idempotency;
  const out: Mutable<Step> = {
    stepId: str(o, "step_id", E),
    executionId: str(o, "execution_id", E),
    kind: oneOf<StepKind>(o, "kind", E, STEP_KIND_SET),
    target: str(o, "target", E),
    argsHash: str(o, "args_hash", E),
    occurrence: int(o, "occurrence", E, 0),
    status: oneOf<StepStatus>(o, "status", E, STEP_STATUS_SET),
    idempotency:
      idem === undefined || idem === null || idem === ""
        ? "safe_to_retry"
        : oneOf<Idempotency>(o, "idempotency", E, IDEMPOTENCY_SET),
  };
  if (o.args !== undefined) out.args = o.args;
  if (o.result !== undefined) out.result = o.result;
  if (o.error !== undefined && o.error !== null) out.error = o.error;
  const startedAt = optStr(o, "started_at", E);
  if (startedAt !== undefined) out.startedAt = startedAt;
  const completedAt = optStr(o, "completed_at", E);
  if (completedAt !== undefined) out.completedAt = completedAt;
  return out;
}

function parseStepResource(v: unknown): StepResource {
  const E = "step resource";
  const o = asObj(v, E);
  return { key: str(o, "key", E), generation: int(o, "generation", E), due: bool(o, "due", E, false) };
}

const NO_RESOURCES: readonly StepResource[] = Object.freeze([]);

/**
 * Parse a step decision (docs/protocol.md §4.8). An unknown `decision` string throws
 * `RebunoError("unexpected step decision: <decision>")` (code `unexpected_decision`).
 */
export function parseStepDecision(body: unknown): StepDecision {
  const E = "step decision";
  const o = asObj(body, E);
  const decision = o.decision;
  if (typeof decision !== "string") fail(E, "decision", "a string");
  if (!DECISION_SET.has(decision)) {
    throw new RebunoError(`unexpected step decision: ${decision}`, { code: "unexpected_decision" });
  }
  const out: Mutable<StepDecision> = { decision: decision as Decision, resources: NO_RESOURCES };
  const stepId = optStr(o, "step_id", E);
  if (stepId !== undefined) out.stepId = stepId;
  if (o.error !== undefined && o.error !== null) out.error = o.error;
  if (o.result !== undefined) out.result = o.result;
  else if (decision === "replay" && out.error === undefined) out.result = null;
  const approvalId = optStr(o, "approval_id", E);
  if (approvalId !== undefined) out.approvalId = approvalId;
  const reason = optStr(o, "reason", E);
  if (reason !== undefined) out.reason = reason;
  const ruleId = optStr(o, "rule_id", E);
  if (ruleId !== undefined) out.ruleId = ruleId;
  const resources = o.resources;
  if (resources !== undefined && resources !== null) {
    if (!Array.isArray(resources)) fail(E, "resources", "an array");
    if (resources.length > 0) out.resources = resources.map(parseStepResource);
  }
  return out;
}

/** Parse an event (docs/protocol.md §1.6). The payload stays snake_case. */
export function parseEvent(body: unknown): Event {
  const E = "event";
  const o = asObj(body, E);
  const payload = o.payload === undefined || o.payload === null ? {} : asObj(o.payload, "event payload");
  // Typed by `type` (models.ts); the payload is not validated, and a newer kernel's other types pass.
  return {
    executionId: str(o, "execution_id", E),
    eventSeq: int(o, "event_seq", E, 1),
    type: str(o, "type", E),
    payload,
    occurredAt: str(o, "occurred_at", E),
  } as Event;
}

/** Parse an approval (docs/protocol.md §1.4). */
export function parseApproval(body: unknown): Approval {
  const E = "approval";
  const o = asObj(body, E);
  const out: Mutable<Approval> = {
    id: str(o, "id", E),
    stepId: str(o, "step_id", E),
    executionId: str(o, "execution_id", E),
    status: oneOf<ApprovalStatus>(o, "status", E, APPROVAL_STATUS_SET),
    approvers: strings(o, "approvers", E),
    timeoutAt: str(o, "timeout_at", E),
    createdAt: str(o, "created_at", E),
  };
  const texts = [
    ["message", "message"],
    ["decided_by", "decidedBy"],
    ["decided_at", "decidedAt"],
    ["rationale", "rationale"],
  ] as const;
  for (const [wire, model] of texts) {
    const v = optStr(o, wire, E);
    if (v !== undefined) out[model] = v;
  }
  return out;
}

/** Parse an agent (docs/protocol.md §1.5). */
export function parseAgent(body: unknown): Agent {
  const E = "agent";
  const o = asObj(body, E);
  const out: Mutable<Agent> = {
    id: str(o, "id", E),
    webhookUrl: str(o, "webhook_url", E),
    registeredAt: str(o, "registered_at", E),
  };
  const bundle = optStr(o, "policy_bundle", E);
  if (bundle !== undefined) out.policyBundle = bundle;
  const lease = optNum(o, "lease_timeout_seconds", E);
  if (lease !== undefined && lease !== 0) out.leaseTimeoutSeconds = lease;
  return out;
}

/** Parse an API key (docs/protocol.md §4.16). */
export function parseApiKey(body: unknown): ApiKey {
  const E = "api key";
  const o = asObj(body, E);
  const out: Mutable<ApiKey> = {
    id: str(o, "id", E),
    name: str(o, "name", E),
    scopes: strings(o, "scopes", E),
    createdAt: str(o, "created_at", E),
    revoked: false,
  };
  const token = optStr(o, "token", E);
  if (token !== undefined) out.token = token;
  const revokedAt = optStr(o, "revoked_at", E);
  if (revokedAt !== undefined) out.revokedAt = revokedAt;
  out.revoked = bool(o, "revoked", E, false) || revokedAt !== undefined;
  return out;
}

/** Parse a resource view (docs/protocol.md §4.17). Missing counters default to 0, flags to false. */
export function parseResourceView(body: unknown): ResourceView {
  const E = "resource";
  const o = asObj(body, E);
  const out: Mutable<ResourceView> = {
    key: str(o, "key", E),
    driverId: str(o, "driver_id", E),
    configuration: o.configuration === undefined ? null : o.configuration,
    coverageReuse: bool(o, "coverage_reuse", E, false),
    everySteps: optInt(o, "every_steps", E, 0) ?? 0,
    onCompletion: bool(o, "on_completion", E, false),
    generation: optInt(o, "generation", E, 0) ?? 0,
    count: optInt(o, "count", E, 0) ?? 0,
    registeredSeq: optInt(o, "registered_seq", E, 0) ?? 0,
    covered: bool(o, "covered", E, false),
  };
  if (o.binding !== undefined && o.binding !== null) out.binding = o.binding;
  const ref = optStr(o, "checkpoint_ref", E);
  if (ref !== undefined) out.checkpointRef = ref;
  return out;
}

/**
 * Parse a webhook body (docs/protocol.md §7.2) strictly: `execution_id` and `dispatch_id` non-empty
 * strings, integer `dispatch_attempt` ≥ 1, `lease_timeout_seconds` > 0. Agents answer 400 when
 * this throws.
 */
export function parseWebhookPayload(body: unknown): WebhookPayload {
  const E = "webhook payload";
  const o = asObj(body, E);
  const executionId = str(o, "execution_id", E);
  const dispatchId = str(o, "dispatch_id", E);
  if (executionId === "") fail(E, "execution_id", "a non-empty string");
  if (dispatchId === "") fail(E, "dispatch_id", "a non-empty string");
  const lease = o.lease_timeout_seconds;
  if (typeof lease !== "number" || !Number.isFinite(lease) || lease <= 0) {
    fail(E, "lease_timeout_seconds", "a positive number");
  }
  return {
    executionId,
    dispatchId,
    dispatchAttempt: int(o, "dispatch_attempt", E, 1),
    leaseTimeoutSeconds: lease,
  };
}

function parseForkCheckpoint(v: unknown): ForkCheckpoint {
  const E = "fork checkpoint";
  const o = asObj(v, E);
  const out: Mutable<ForkCheckpoint> = {
    key: str(o, "key", E),
    generation: int(o, "generation", E),
    checkpointRef: str(o, "checkpoint_ref", E),
    coveredSeq: int(o, "covered_seq", E),
  };
  const inv = optInt(o, "invalidated_seq", E);
  if (inv !== undefined) out.invalidatedSeq = inv;
  return out;
}

/** Parse `GET …/fork-points` (docs/protocol.md §4.17). */
export function parseForkPoints(body: unknown): ForkPoints {
  const E = "fork points";
  const o = asObj(body, E);
  const resources: Record<string, number> = {};
  if (o.resources !== undefined && o.resources !== null) {
    const r = asObj(o.resources, "fork points resources");
    for (const key of Object.keys(r)) resources[key] = int(r, key, "fork points resources");
  }
  const checkpoints = o.checkpoints ?? [];
  if (!Array.isArray(checkpoints)) fail(E, "checkpoints", "an array");
  return { latestSeq: int(o, "latest_seq", E), resources, checkpoints: checkpoints.map(parseForkCheckpoint) };
}
