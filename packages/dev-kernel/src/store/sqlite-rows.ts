/**
 * Conversions between the store's row objects (types.ts) and the columns of the SQLite tables
 * (sqlite-schema.ts). A column that is NULL is an absent field; booleans are 0/1; string lists
 * (step resources, approvers, key scopes) are JSON arrays.
 */
import type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  CheckpointRow,
  DispatchRow,
  EventRow,
  ExecutionRow,
  ResourceRow,
  StepRow,
} from "./types.js";

/** A row as better-sqlite3 returns it. */
export type Columns = Record<string, string | number | null>;
type Params = Record<string, string | number | null>;

const opt = (v: string | number | undefined): string | number | null => v ?? null;
const bit = (v: boolean): number => (v ? 1 : 0);

/** Copy the non-NULL columns named in `map` (column → field) onto `row`. */
function optional<T>(row: T, c: Columns, map: Readonly<Record<string, string>>): T {
  for (const column in map) {
    const v = c[column];
    if (v !== null && v !== undefined) (row as Record<string, unknown>)[map[column]!] = v;
  }
  return row;
}

export function executionParams(r: ExecutionRow): Params {
  return {
    id: r.id,
    agent_id: r.agentId,
    agent_version: opt(r.agentVersion),
    input: r.inputJson,
    status: r.status,
    output: opt(r.outputJson),
    state: opt(r.stateJson),
    failure_reason: opt(r.failureReason),
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    deadline_at: opt(r.deadlineAt),
    session: opt(r.session),
    parent_execution_id: opt(r.parentExecutionId),
    idempotency_key: opt(r.idempotencyKey),
    spawned_by_execution_id: opt(r.spawnedBy?.executionId),
    spawned_by_step_id: opt(r.spawnedBy?.stepId),
    forked_from: opt(r.forkedFrom),
    fork_seq: opt(r.forkSeq),
    restoration: opt(r.restorationJson),
    policy_bundle: opt(r.policyBundle),
    rate_limit_parked: bit(r.rateLimitParked),
    tokens_used: r.tokensUsed,
    on_behalf_of: opt(r.onBehalfOf),
  };
}

export function executionRow(c: Columns): ExecutionRow {
  const row = optional(
    {
      id: c.id as string,
      agentId: c.agent_id as string,
      inputJson: c.input as string,
      status: c.status as ExecutionRow["status"],
      createdAt: c.created_at as number,
      updatedAt: c.updated_at as number,
      rateLimitParked: c.rate_limit_parked === 1,
      tokensUsed: c.tokens_used as number,
    } as ExecutionRow & { spawnedBy?: ExecutionRow["spawnedBy"] },
    c,
    {
      agent_version: "agentVersion",
      output: "outputJson",
      state: "stateJson",
      failure_reason: "failureReason",
      deadline_at: "deadlineAt",
      session: "session",
      parent_execution_id: "parentExecutionId",
      idempotency_key: "idempotencyKey",
      forked_from: "forkedFrom",
      fork_seq: "forkSeq",
      restoration: "restorationJson",
      policy_bundle: "policyBundle",
      on_behalf_of: "onBehalfOf",
    },
  );
  if (c.spawned_by_execution_id !== null) {
    row.spawnedBy = {
      executionId: c.spawned_by_execution_id as string,
      stepId: c.spawned_by_step_id as string,
    };
  }
  return row;
}

export function eventRow(c: Columns): EventRow {
  return {
    executionId: c.execution_id as string,
    seq: c.event_seq as number,
    type: c.type as string,
    payloadJson: c.payload as string,
    occurredAt: c.occurred_at as number,
  };
}

export function stepParams(r: StepRow): Params {
  return {
    execution_id: r.executionId,
    step_id: r.stepId,
    kind: r.kind,
    target: r.target,
    args_hash: r.argsHash,
    occurrence: r.occurrence,
    status: r.status,
    idempotency: r.idempotency,
    args: opt(r.argsJson),
    result: opt(r.resultJson),
    error: opt(r.errorJson),
    resources: JSON.stringify(r.resources),
    input_tokens: opt(r.inputTokens),
    output_tokens: opt(r.outputTokens),
    created_at: r.createdAt,
    started_at: opt(r.startedAt),
    completed_at: opt(r.completedAt),
  };
}

export function stepRow(c: Columns): StepRow {
  return optional(
    {
      executionId: c.execution_id as string,
      stepId: c.step_id as string,
      kind: c.kind as StepRow["kind"],
      target: c.target as string,
      argsHash: c.args_hash as string,
      occurrence: c.occurrence as number,
      status: c.status as StepRow["status"],
      idempotency: c.idempotency as StepRow["idempotency"],
      resources: JSON.parse(c.resources as string) as string[],
      createdAt: c.created_at as number,
    } as StepRow,
    c,
    {
      args: "argsJson",
      result: "resultJson",
      error: "errorJson",
      input_tokens: "inputTokens",
      output_tokens: "outputTokens",
      started_at: "startedAt",
      completed_at: "completedAt",
    },
  );
}

export function dispatchParams(r: DispatchRow): Params {
  return {
    id: r.id,
    execution_id: r.executionId,
    status: r.status,
    attempt: r.attempt,
    max_attempts: r.maxAttempts,
    next_attempt_at: r.nextAttemptAt,
    locked_by: opt(r.lockedBy),
    locked_at: opt(r.lockedAt),
    lease_ms: r.leaseMs,
    created_at: r.createdAt,
  };
}

export function dispatchRow(c: Columns): DispatchRow {
  return optional(
    {
      id: c.id as string,
      executionId: c.execution_id as string,
      status: c.status as DispatchRow["status"],
      attempt: c.attempt as number,
      maxAttempts: c.max_attempts as number,
      nextAttemptAt: c.next_attempt_at as number,
      leaseMs: c.lease_ms as number,
      createdAt: c.created_at as number,
    } as DispatchRow,
    c,
    { locked_by: "lockedBy", locked_at: "lockedAt" },
  );
}

export function approvalParams(r: ApprovalRow): Params {
  return {
    id: r.id,
    execution_id: r.executionId,
    step_id: r.stepId,
    status: r.status,
    approvers: r.approvers === undefined ? null : JSON.stringify(r.approvers),
    message: opt(r.message),
    timeout_at: r.timeoutAt,
    decided_by: opt(r.decidedBy),
    decided_at: opt(r.decidedAt),
    rationale: opt(r.rationale),
    created_at: r.createdAt,
  };
}

export function approvalRow(c: Columns): ApprovalRow {
  const row = optional(
    {
      id: c.id as string,
      executionId: c.execution_id as string,
      stepId: c.step_id as string,
      status: c.status as ApprovalRow["status"],
      timeoutAt: c.timeout_at as number,
      createdAt: c.created_at as number,
    } as ApprovalRow & { approvers?: readonly string[] },
    c,
    { message: "message", decided_by: "decidedBy", decided_at: "decidedAt", rationale: "rationale" },
  );
  if (c.approvers !== null) row.approvers = JSON.parse(c.approvers as string) as string[];
  return row;
}

export function agentParams(r: AgentRow): Params {
  return {
    id: r.id,
    webhook_url: r.webhookUrl,
    secret: r.secret,
    policy_bundle: opt(r.policyBundle),
    registered_at: r.registeredAt,
    lease_timeout_seconds: opt(r.leaseTimeoutSeconds),
    description: opt(r.description),
    input_schema: opt(r.inputSchemaJson),
    output_schema: opt(r.outputSchemaJson),
  };
}

export function agentRow(c: Columns): AgentRow {
  return optional(
    {
      id: c.id as string,
      webhookUrl: c.webhook_url as string,
      secret: c.secret as string,
      registeredAt: c.registered_at as number,
    } as AgentRow,
    c,
    {
      policy_bundle: "policyBundle",
      lease_timeout_seconds: "leaseTimeoutSeconds",
      description: "description",
      input_schema: "inputSchemaJson",
      output_schema: "outputSchemaJson",
    },
  );
}

export function apiKeyParams(r: ApiKeyRow): Params {
  return {
    id: r.id,
    name: r.name,
    scopes: JSON.stringify(r.scopes),
    token_hash: r.tokenHash,
    created_at: r.createdAt,
    rotated_at: opt(r.rotatedAt),
    revoked_at: opt(r.revokedAt),
  };
}

export function apiKeyRow(c: Columns): ApiKeyRow {
  return optional(
    {
      id: c.id as string,
      name: c.name as string,
      scopes: JSON.parse(c.scopes as string) as string[],
      tokenHash: c.token_hash as string,
      createdAt: c.created_at as number,
    } as ApiKeyRow,
    c,
    { rotated_at: "rotatedAt", revoked_at: "revokedAt" },
  );
}

export function resourceParams(r: ResourceRow): Params {
  return {
    execution_id: r.executionId,
    key: r.key,
    driver_id: r.driverId,
    configuration: r.configurationJson,
    configuration_hash: r.configurationHash,
    coverage_reuse: bit(r.coverageReuse),
    every_steps: r.everySteps,
    on_completion: bit(r.onCompletion),
    generation: r.generation,
    count: r.count,
    registered_seq: r.registeredSeq,
    binding: opt(r.bindingJson),
    checkpoint_ref: opt(r.checkpointRef),
  };
}

export function resourceRow(c: Columns): ResourceRow {
  return optional(
    {
      executionId: c.execution_id as string,
      key: c.key as string,
      driverId: c.driver_id as string,
      configurationJson: c.configuration as string,
      configurationHash: c.configuration_hash as string,
      coverageReuse: c.coverage_reuse === 1,
      everySteps: c.every_steps as number,
      onCompletion: c.on_completion === 1,
      generation: c.generation as number,
      count: c.count as number,
      registeredSeq: c.registered_seq as number,
    } as ResourceRow,
    c,
    { binding: "bindingJson", checkpoint_ref: "checkpointRef" },
  );
}

export function checkpointParams(r: CheckpointRow): Params {
  return {
    execution_id: r.executionId,
    key: r.key,
    seq: r.seq,
    generation: r.generation,
    checkpoint_ref: r.checkpointRef,
    covered_seq: r.coveredSeq,
    invalidated_seq: opt(r.invalidatedSeq),
  };
}

export function checkpointRow(c: Columns): CheckpointRow {
  return optional(
    {
      executionId: c.execution_id as string,
      key: c.key as string,
      seq: c.seq as number,
      generation: c.generation as number,
      checkpointRef: c.checkpoint_ref as string,
      coveredSeq: c.covered_seq as number,
    } as CheckpointRow,
    c,
    { invalidated_seq: "invalidatedSeq" },
  );
}
