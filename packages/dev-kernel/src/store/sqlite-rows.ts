/**
 * The store's row objects (types.ts) as columns of the SQLite tables (sqlite-schema.ts), and back.
 * Each table is a list of `field:column:kind` specs: a NULL column is an absent field; `bool` is
 * 0/1; `list` is a JSON array of strings; a dotted field (`spawnedBy.executionId`) is a field of a
 * nested object, present when its column is not NULL.
 */

/** A row as better-sqlite3 returns it, or the named parameters of a statement. */
export type Columns = Record<string, string | number | null>;

interface ColumnSpec {
  /** The row's field, or for a dotted field the nested object's (`spawnedBy`). */
  readonly field: string;
  /** For a dotted field, the field inside the nested object (`executionId`). */
  readonly inner: string | undefined;
  readonly column: string;
  readonly kind: "plain" | "bool" | "list";
}

export type TableSpec = readonly ColumnSpec[];

/** `"field"` (column = field), `"field:column"`, `"field:column:bool|list"`, separated by spaces. */
function spec(text: string): TableSpec {
  return text
    .trim()
    .split(/\s+/)
    .map((token) => {
      const [path, column = path, kind = "plain"] = token.split(":") as [string, string?, string?];
      const [field, inner] = path.split(".") as [string, string?];
      return { field, inner, column, kind: kind as ColumnSpec["kind"] };
    });
}

export const EXECUTIONS = spec(`id agentId:agent_id agentVersion:agent_version inputJson:input status
  outputJson:output stateJson:state failureReason:failure_reason createdAt:created_at updatedAt:updated_at
  deadlineAt:deadline_at session parentExecutionId:parent_execution_id idempotencyKey:idempotency_key
  spawnedBy.executionId:spawned_by_execution_id spawnedBy.stepId:spawned_by_step_id forkedFrom:forked_from
  forkSeq:fork_seq restorationJson:restoration policyBundle:policy_bundle
  rateLimitParked:rate_limit_parked:bool tokensUsed:tokens_used onBehalfOf:on_behalf_of`);
export const STEPS = spec(`executionId:execution_id stepId:step_id kind target argsHash:args_hash occurrence
  status idempotency argsJson:args resultJson:result errorJson:error resources:resources:list
  inputTokens:input_tokens outputTokens:output_tokens createdAt:created_at startedAt:started_at
  completedAt:completed_at`);
export const EVENTS = spec(
  "executionId:execution_id seq:event_seq type payloadJson:payload occurredAt:occurred_at",
);
export const DISPATCHES = spec(`id executionId:execution_id status attempt maxAttempts:max_attempts
  nextAttemptAt:next_attempt_at lockedBy:locked_by lockedAt:locked_at leaseMs:lease_ms createdAt:created_at`);
export const APPROVALS = spec(`id executionId:execution_id stepId:step_id status approvers:approvers:list
  message timeoutAt:timeout_at decidedBy:decided_by decidedAt:decided_at rationale createdAt:created_at`);
export const AGENTS =
  spec(`id webhookUrl:webhook_url secret policyBundle:policy_bundle registeredAt:registered_at
  leaseTimeoutSeconds:lease_timeout_seconds description inputSchemaJson:input_schema
  outputSchemaJson:output_schema`);
export const API_KEYS = spec(`id name scopes:scopes:list tokenHash:token_hash createdAt:created_at
  rotatedAt:rotated_at revokedAt:revoked_at`);
export const RESOURCES = spec(`executionId:execution_id key driverId:driver_id configurationJson:configuration
  configurationHash:configuration_hash coverageReuse:coverage_reuse:bool everySteps:every_steps
  onCompletion:on_completion:bool generation count registeredSeq:registered_seq bindingJson:binding
  checkpointRef:checkpoint_ref`);
export const CHECKPOINTS = spec(`executionId:execution_id key seq generation checkpointRef:checkpoint_ref
  coveredSeq:covered_seq invalidatedSeq:invalidated_seq`);

/** The named parameters (by column) that write `row` into a table of `table`'s spec. */
export function toColumns(table: TableSpec, row: object): Columns {
  const out: Columns = {};
  for (const { field, inner, column, kind } of table) {
    const value: unknown =
      inner === undefined
        ? (row as Record<string, unknown>)[field]
        : (row as Record<string, Record<string, unknown> | undefined>)[field]?.[inner];
    out[column] =
      value === undefined
        ? null
        : kind === "bool"
          ? value
            ? 1
            : 0
          : kind === "list"
            ? JSON.stringify(value)
            : (value as string | number);
  }
  return out;
}

/** The row object a table row reads as (see the module comment). */
export function fromColumns<T>(table: TableSpec, c: Columns): T {
  const row: Record<string, unknown> = {};
  for (const { field, inner, column, kind } of table) {
    const value = c[column];
    if (value === null || value === undefined) continue;
    const read = kind === "bool" ? value === 1 : kind === "list" ? JSON.parse(value as string) : value;
    if (inner === undefined) row[field] = read;
    else ((row[field] ??= {}) as Record<string, unknown>)[inner] = read;
  }
  return row as T;
}
