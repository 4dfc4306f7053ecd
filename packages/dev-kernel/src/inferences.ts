/**
 * Every open question of docs/protocol.md §16 (where the protocol is silent) — or where this
 * project deliberately differs from the production kernel — is decided here, so changing a guess
 * is a one-line edit. Each constant names the open question it answers.
 *
 * Inferences that are structure rather than a value (kept in code, listed here so they are found):
 * - docs/protocol.md §16.16/§16.26: reads of an unknown execution (events, steps, stream) answer 404.
 * - docs/protocol.md §16.25: new-step checks run policy match → token budget → judge → rate limit → record
 *   (`engine/decide.ts`).
 * - docs/protocol.md §16.13: `GET /v0/api-keys` answers a bare array of key metadata; `POST /policies/{id}/test`
 *   answers `{results: [{name?, execution_id?, kind, target, decision, rule_id, reason?, expect?,
 *   expect_rule?, matched}], mismatches, policy_hash?}` (`routes/agents.ts`).
 * - Create with `parent_execution_id`: unknown → 404, another agent's → 400, not completed → 409,
 *   a `session` that already has executions → 409 (`engine/executions.ts`).
 * - Resources: `covered` = an open checkpoint exists; `duplicate_capture` = the key twice in one
 *   request or a checkpoint already recorded for that generation (`engine/resources.ts`).
 */

import type { StepStatus } from "./store/types.js";

/** docs/protocol.md §16.1: `execution.blocked` reason written by `POST /suspend` (docs string). */
export const REASON_AWAITING_STEPS = "awaiting_steps";

/** docs/protocol.md §16.1: reason of a subagent cancelled because its parent ended (docs string). */
export const REASON_PARENT_TERMINAL = "parent_agent_terminal";

/** docs/protocol.md §16.2: HTTP status of an idempotent repeat create (same body shape as a fresh create). */
export const IDEMPOTENT_REPEAT_CREATE_STATUS = 201;

/**
 * docs/protocol.md §16.3: cancelling a terminal execution answers 409 with this code (newest docs); agent
 * complete/fail/suspend on a terminal execution answer 409 `execution_terminal`.
 */
export const CANCEL_TERMINAL_CODE: "conflict" | "execution_terminal" = "conflict";

/**
 * docs/protocol.md §16.6: a `judge` rule that cannot be judged (no judge configured) denies with the rule's
 * `reason`, else `policy_denied`; `rule_id` is the rule's id.
 */
export function judgeUnavailableReason(ruleReason: string | undefined): string {
  return ruleReason !== undefined && ruleReason !== "" ? ruleReason : "policy_denied";
}

/**
 * docs/protocol.md §16.7: `step.rate_limited` payload carries `step_id` (the id the call would have had; no step
 * row exists), `step_type`, `target`, `rule_id`, `reason`.
 */
export const RATE_LIMITED_EVENT_HAS_STEP_ID = true;

/**
 * docs/protocol.md §16.8: a rate-limit park happens at most once per execution lifetime. `false` lets every new
 * dispatch park again (a park retires the dispatch, so that is "once per dispatch").
 */
export const RATE_LIMIT_PARK_ONCE_PER_EXECUTION = true;

/**
 * docs/protocol.md §16.9 / §11: after an approval is granted, denied or expires, the execution resumes only when
 * nothing else waits (same rule as subagent settlement). `false` resumes unconditionally like the
 * Aug 2026 source.
 */
export const RESUME_APPROVALS_ONLY_WHEN_IDLE = true;

/** docs/protocol.md §16.11: token budget is exhausted once `spent ≥ max_tokens`. */
export function budgetExhausted(spent: number, maxTokens: number): boolean {
  return spent >= maxTokens;
}

/** docs/protocol.md §16.12: base scope of `POST /fork` (plus `policies:write` with `policy_bundle`). */
export const FORK_SCOPE = "executions:write";

/**
 * docs/protocol.md §16.14: lease check on `POST …/steps/{id}/stream`: the lease must be *current* when the lease
 * headers are present; they are not required.
 */
export const STREAM_LEASE_CHECK: "current_when_present" | "none" = "current_when_present";

/** docs/protocol.md §16.15: `every_steps: 0` disables checkpointing (docs), instead of being coerced to 1. */
export const EVERY_STEPS_ZERO_DISABLES = true;

/** docs/protocol.md §16.17: headers of a webhook delivery besides `Content-Type` and `Rebuno-Signature`. */
export const WEBHOOK_EXTRA_HEADERS: readonly ("execution_id" | "lease")[] = ["execution_id"];

/** docs/protocol.md §16.18: replayed denials include `rule_id` from the stored error. */
export const REPLAYED_DENIAL_HAS_RULE_ID = true;

/** docs/protocol.md §16.19: `GET /v0/approvals` without `?status=` lists pending approvals; other statuses filter. */
export const APPROVALS_DEFAULT_STATUS = "pending";

/** docs/protocol.md §16.21: in dev mode a supplied bearer token that is neither the bootstrap token nor a live key → 401. */
export const DEV_MODE_REJECTS_UNKNOWN_TOKENS = true;

/** docs/protocol.md §16.22: `POST /v0/agents` on an existing agent keeps its stored policy bundle. */
export const REREGISTER_KEEPS_BUNDLE = true;

/** docs/protocol.md §16.23: status of `POST /v0/executions/{id}/resources`. */
export const RESOURCE_REGISTER_STATUS = 200;

/**
 * docs/protocol.md §16.24: completing/failing a step in one of these statuses → 409 `conflict` (only
 * `awaiting_approval` is confirmed).
 */
export const OUTCOME_CONFLICT_STATUSES: ReadonlySet<StepStatus> = new Set([
  "awaiting_approval",
  "proposed",
  "allowed",
]);

/**
 * A request body over the 10 MiB limit is answered `400 validation_error`, as docs/protocol.md §2 and the
 * production kernel do (its JSON decoding fails past the limit). The message names the cause,
 * where the production kernel says only `validation error`.
 */
export const BODY_TOO_LARGE_STATUS = 400;
/** Message of the answer to a body over the limit. */
export const BODY_TOO_LARGE_MESSAGE = "validation error: request body over the 10 MiB limit";

/**
 * Maximum nesting depth of request JSON. Go's decoder allows 10 000; we bound at 512 so hostile
 * input never reaches recursive code (the canonicalizer, `JSON.stringify`). Deeper → 400.
 */
export const MAX_JSON_DEPTH = 512;

/*
 * Interop O1 (docs/interop.md D1), structural — implemented by `setMetadata` and `agentView` in
 * routes/agents.ts: `PUT /v0/agents/{id}/metadata` replaces the agent's published
 * metadata as a whole (PUT semantics: an absent or `null` field clears it). The read shape is our
 * inference: `GET /v0/agents[/{id}]` shows `description` (non-empty string), `input_schema` and
 * `output_schema` (objects, byte-exact as sent) when set, and omits them otherwise. Re-registering
 * an agent (`POST /v0/agents`, provisioning) keeps its metadata, like its bundle (docs/protocol.md §16.22).
 */

/*
 * Interop O3 (docs/interop.md D2), structural — `createExecution` and `executionView` in
 * engine/executions.ts: `on_behalf_of` on create is stored and echoed as `on_behalf_of`
 * on the Execution JSON when non-empty. `created_by` / `subject_groups` (present in the Python
 * SDK's model) are not produced: their semantics are unknown. Forks and session turns do not
 * inherit it (each create names its own subject).
 */
