/** Enumerations shared by wire schemas and models (docs/protocol.md §1, §4.8, §1.11). */
import { z } from "zod";

/** Execution statuses (docs/protocol.md §1.1). */
export const EXECUTION_STATUSES = [
  "pending",
  "running",
  "blocked",
  "completed",
  "failed",
  "cancelled",
] as const;
/** Status of an execution. `blocked` = waiting on an approval or on subagents. */
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
/** Final execution statuses: any further mutation is refused. */
export const TERMINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = ["completed", "failed", "cancelled"];
/** True for `completed`, `failed` and `cancelled`. */
export function isTerminalExecutionStatus(status: string): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** Step kinds (docs/protocol.md §1.2). */
export const STEP_KINDS = ["tool_call", "llm_call", "local"] as const;
/** Kind of a step. */
export type StepKind = (typeof STEP_KINDS)[number];

/** Step statuses (docs/protocol.md §1.2). */
export const STEP_STATUSES = [
  "proposed",
  "allowed",
  "executing",
  "awaiting_approval",
  "succeeded",
  "failed",
  "denied",
  "cancelled",
] as const;
/** Status of a step. */
export type StepStatus = (typeof STEP_STATUSES)[number];
/** Final step statuses (`GET …/steps?status=terminal`). */
export const TERMINAL_STEP_STATUSES: readonly StepStatus[] = ["succeeded", "failed", "denied", "cancelled"];

/** Idempotency modes; the default is `safe_to_retry`. */
export const IDEMPOTENCY_MODES = ["safe_to_retry", "at_most_once"] as const;
/** What the kernel does with a step found started but never finished. */
export type Idempotency = (typeof IDEMPOTENCY_MODES)[number];

/** Step decisions (docs/protocol.md §4.8, §6.4). */
export const DECISIONS = [
  "proceed",
  "replay",
  "denied",
  "blocked",
  "execution_blocked",
  "rate_limited",
  "execution_terminal",
] as const;
/** Answer to a step submission. */
export type Decision = (typeof DECISIONS)[number];

/** Approval statuses (docs/protocol.md §1.4). */
export const APPROVAL_STATUSES = ["pending", "granted", "denied", "expired"] as const;
/** Status of an approval. */
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** API key scopes (docs/protocol.md §1.11). */
export const API_KEY_SCOPES = [
  "executions:read",
  "executions:write",
  "approvals:read",
  "approvals:write",
  "agents:read",
  "agents:write",
  "policies:write",
  "api_keys:manage",
] as const;
/** A deployment-wide API key scope (`write` does not imply `read`). */
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Stream delta `data` limit in UTF-8 bytes (larger → 400). */
export const STREAM_DELTA_MAX_BYTES = 7000;
/** Resource keys: `^[A-Za-z0-9_.-]{1,128}$`. */
export const RESOURCE_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

// Pure: a bundle that needs only the constants above (the browser client) drops zod entirely.
export const ExecutionStatusSchema = /* @__PURE__ */ z.enum(EXECUTION_STATUSES);
export const StepKindSchema = /* @__PURE__ */ z.enum(STEP_KINDS);
export const StepStatusSchema = /* @__PURE__ */ z.enum(STEP_STATUSES);
export const IdempotencySchema = /* @__PURE__ */ z.enum(IDEMPOTENCY_MODES);
export const DecisionSchema = /* @__PURE__ */ z.enum(DECISIONS);
export const ApprovalStatusSchema = /* @__PURE__ */ z.enum(APPROVAL_STATUSES);
export const ApiKeyScopeSchema = /* @__PURE__ */ z.enum(API_KEY_SCOPES);

/** Any JSON value (documentation: the kernel stores it as raw JSON). */
export const JsonValueSchema = /* @__PURE__ */ z.unknown();
