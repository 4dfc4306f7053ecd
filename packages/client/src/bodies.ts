/**
 * camelCase call options → exact snake_case request bodies for the bearer routes (docs/protocol.md §4).
 * The kernel decodes bodies strictly (an unknown field is a 400), so every builder emits only the
 * documented fields and leaves empty optional values out instead of sending `""` or `null`.
 */
import { type ApiKeyScope, type SpawnedBy, toWireJson, ValidationError } from "@rebuno/protocol";

/** Options of `Client.create`. Empty strings count as "not given". */
export interface CreateExecutionOptions {
  /** Session the execution joins; it runs once the session is free (docs/protocol.md §1.7). */
  readonly session?: string | undefined;
  /** Continue this completed execution of the same agent (a branch); the session must be new. */
  readonly parentExecutionId?: string | undefined;
  /**
   * Per-agent idempotency key: a repeat create returns the first execution unchanged. Setting it
   * also lets the client retry the create after a lost response.
   */
  readonly idempotencyKey?: string | undefined;
  /** Makes the execution a subagent of this parent step (docs/protocol.md §8). */
  readonly spawnedBy?: SpawnedBy | undefined;
}

/** Options of `Client.fork`. */
export interface ForkOptions {
  /** Copy the source's steps settled at or before this event sequence number. */
  readonly atSeq: number;
  /** A new session for the fork (must have no executions yet). */
  readonly session?: string | undefined;
  /** Policy bundle YAML for the fork; needs the `policies:write` scope. */
  readonly policyBundle?: string | undefined;
}

/** Options of `Client.grantApproval` / `Client.denyApproval`. */
export interface ApprovalDecisionOptions {
  /** Who decides; must be in the approval's `approvers` list when that list is non-empty. */
  readonly decidedBy: string;
  /** Free text; on a deny it becomes the step's denial reason. */
  readonly rationale?: string | undefined;
}

/** Options of `Client.registerAgent` (an upsert). */
export interface RegisterAgentOptions {
  readonly id: string;
  /** Where the kernel delivers dispatches. */
  readonly webhookUrl: string;
  /** Shared HMAC secret (never returned by the kernel). */
  readonly secret: string;
  /** Lease length for this agent's dispatches; values under 10 are ignored by the kernel. */
  readonly leaseTimeoutSeconds?: number | undefined;
}

/** Options of `Client.createApiKey`. */
export interface CreateApiKeyOptions {
  readonly name: string;
  /** Deployment-wide scopes; `write` does not imply `read`. */
  readonly scopes: readonly ApiKeyScope[];
}

/** Which past executions a policy test replays (docs/protocol.md §4.14). */
export interface PolicyTestExecutions {
  readonly session?: string | undefined;
  /** RFC 3339 lower bound on creation time. */
  readonly since?: string | undefined;
  /** Newest first; the kernel defaults to 100 and caps at 1000. */
  readonly limit?: number | undefined;
}

/** Body of `Client.testPolicy`: evaluates without storing anything. */
export interface PolicyTestRequest {
  /** Bundle YAML to test; the agent's stored bundle when absent. */
  readonly bundle?: string | undefined;
  /** Test cases, passed through as given (the `.policytest.yaml` case shape). */
  readonly cases?: readonly unknown[] | undefined;
  /** Replay the steps of this execution. */
  readonly executionId?: string | undefined;
  /** Replay the steps of recent executions. */
  readonly executions?: PolicyTestExecutions | undefined;
}

function given(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}

function requireText(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "")
    throw new ValidationError(`${what} must be a non-empty string`);
  return value;
}

/**
 * `POST /v0/executions`. `input` is left out when `undefined` (the kernel stores JSON `null`),
 * and an explicit `null` is sent as `null`. Non-JSON input (NaN, Date, Map…) throws a `TypeError`
 * naming the offending path before anything is sent.
 */
export function createExecutionBody(
  agentId: string,
  input: unknown,
  options: CreateExecutionOptions = {},
): string {
  const body: Record<string, unknown> = { agent_id: requireText(agentId, "agentId") };
  if (input !== undefined) body.input = input;
  if (given(options.session)) body.session = options.session;
  if (given(options.parentExecutionId)) body.parent_execution_id = options.parentExecutionId;
  if (given(options.idempotencyKey)) body.idempotency_key = options.idempotencyKey;
  if (options.spawnedBy !== undefined) {
    body.spawned_by = {
      execution_id: requireText(options.spawnedBy.executionId, "spawnedBy.executionId"),
      step_id: requireText(options.spawnedBy.stepId, "spawnedBy.stepId"),
    };
  }
  return toWireJson(body, "body");
}

/** `POST /v0/executions/{id}/fork`. */
export function forkBody(options: ForkOptions): string {
  if (!Number.isSafeInteger(options.atSeq) || options.atSeq < 0) {
    throw new ValidationError(`atSeq must be a non-negative integer, got ${options.atSeq}`);
  }
  const body: Record<string, unknown> = { at_seq: options.atSeq };
  if (given(options.session)) body.session = options.session;
  if (given(options.policyBundle)) body.policy_bundle = options.policyBundle;
  return toWireJson(body, "body");
}

/** `POST /v0/approvals/{id}/grant|deny`. */
export function approvalDecisionBody(options: ApprovalDecisionOptions): string {
  const body: Record<string, unknown> = { decided_by: requireText(options.decidedBy, "decidedBy") };
  if (given(options.rationale)) body.rationale = options.rationale;
  return toWireJson(body, "body");
}

/** `POST /v0/agents`. */
export function registerAgentBody(options: RegisterAgentOptions): string {
  const body: Record<string, unknown> = {
    id: requireText(options.id, "id"),
    webhook_url: requireText(options.webhookUrl, "webhookUrl"),
    secret: requireText(options.secret, "secret"),
  };
  if (options.leaseTimeoutSeconds !== undefined) {
    if (!Number.isFinite(options.leaseTimeoutSeconds) || options.leaseTimeoutSeconds <= 0) {
      throw new ValidationError(
        `leaseTimeoutSeconds must be a positive number, got ${options.leaseTimeoutSeconds}`,
      );
    }
    body.lease_timeout_seconds = options.leaseTimeoutSeconds;
  }
  return toWireJson(body, "body");
}

/** `POST /v0/policies/{agent_id}`. */
export function setPolicyBody(bundleYaml: string): string {
  if (typeof bundleYaml !== "string") throw new ValidationError("bundle must be a YAML string");
  return toWireJson({ bundle: bundleYaml }, "body");
}

/** `POST /v0/policies/{agent_id}/test`. */
export function testPolicyBody(request: PolicyTestRequest): string {
  const body: Record<string, unknown> = {};
  if (request.bundle !== undefined) body.bundle = request.bundle;
  if (request.cases !== undefined) body.cases = request.cases;
  if (given(request.executionId)) body.execution_id = request.executionId;
  if (request.executions !== undefined) {
    const e = request.executions;
    const sel: Record<string, unknown> = {};
    if (given(e.session)) sel.session = e.session;
    if (given(e.since)) sel.since = e.since;
    if (e.limit !== undefined) sel.limit = e.limit;
    body.executions = sel;
  }
  return toWireJson(body, "body");
}

/** `POST /v0/api-keys`. */
export function createApiKeyBody(options: CreateApiKeyOptions): string {
  if (!Array.isArray(options.scopes)) throw new ValidationError("scopes must be an array");
  return toWireJson({ name: requireText(options.name, "name"), scopes: [...options.scopes] }, "body");
}
