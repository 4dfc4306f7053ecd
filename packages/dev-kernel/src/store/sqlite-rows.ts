/**
 * The store's row objects (types.ts) as rows of the SQLite tables (sqlite-schema.ts), and back, with
 * the statements that write them. Each table is a list of `field:column:kind` specs: a NULL column
 * is an absent field; `bool` is 0/1; `list` is a JSON array of strings; a dotted field
 * (`spawnedBy.executionId`) is a field of a nested object, present when its column is not NULL.
 * Parameters are positional arrays in column order: no object of named parameters per write.
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

interface Column {
  /** The row's field, or for a dotted field the nested object's (`spawnedBy`). */
  readonly field: string;
  /** For a dotted field, the field inside the nested object (`executionId`). */
  readonly inner: string | undefined;
  readonly column: string;
  readonly kind: string;
}

const value = (row: object, c: Column): unknown =>
  c.inner === undefined
    ? (row as Record<string, unknown>)[c.field]
    : (row as Record<string, Record<string, unknown> | undefined>)[c.field]?.[c.inner];

const param = (c: Column, v: unknown): unknown =>
  v === undefined ? null : c.kind === "bool" ? (v ? 1 : 0) : c.kind === "list" ? JSON.stringify(v) : v;

/** One table: its columns, the first `keys` of which are its primary key. */
export class Table<T extends object> {
  readonly columns: readonly Column[];
  readonly insert: string;
  /** The bits of every non-key column: an update of a row whose old version is unknown. */
  readonly all: number;
  private readonly updates = new Map<number, string>();

  /** `spec`: `"field"` (column = field), `"field:column"` or `"field:column:bool|list"`, by spaces. */
  constructor(
    readonly name: string,
    private readonly keys: number,
    spec: string,
    upsert = false,
  ) {
    this.columns = spec
      .trim()
      .split(/\s+/)
      .map((token) => {
        const [path, column = path, kind = "plain"] = token.split(":") as [string, string?, string?];
        const [field, inner] = path.split(".") as [string, string?];
        return { field, inner, column, kind };
      });
    const names = this.columns.map((c) => c.column);
    const set = names.slice(keys).map((c) => `${c} = excluded.${c}`);
    const conflict = upsert ? ` ON CONFLICT (${names.slice(0, keys)}) DO UPDATE SET ${set.join(", ")}` : "";
    this.insert = `INSERT INTO ${name} (${names.join(", ")}) VALUES (${names.map(() => "?")})${conflict}`;
    this.all = (2 ** this.columns.length - 1) & ~(2 ** keys - 1);
  }

  /** Every column of `row`, in order (the INSERT's parameters). */
  params(row: T): unknown[] {
    return this.columns.map((c) => param(c, value(row, c)));
  }

  /** The row object a table row reads as (see the module comment). */
  read(c: Columns): T {
    const row: Record<string, unknown> = {};
    for (const { field, inner, column, kind } of this.columns) {
      const v = c[column];
      if (v === null || v === undefined) continue;
      const read = kind === "bool" ? v === 1 : kind === "list" ? JSON.parse(v as string) : v;
      if (inner === undefined) row[field] = read;
      else ((row[field] ??= {}) as Record<string, unknown>)[inner] = read;
    }
    return row as T;
  }

  /** The bits of the non-key columns that `next` stores differently from `prev`. */
  changed(prev: T, next: T): number {
    let mask = 0;
    for (let i = this.keys; i < this.columns.length; i++) {
      const c = this.columns[i]!;
      const a = value(prev, c);
      const b = value(next, c);
      if (a !== b && param(c, a) !== param(c, b)) mask |= 1 << i;
    }
    return mask;
  }

  /**
   * The UPDATE of the columns of `mask` (SQLite rewrites an index for every column SET names, so
   * only the changed ones are set) and its parameters: those columns, then the key.
   */
  update(row: T, mask: number): [string, unknown[]] {
    const params: unknown[] = [];
    const cols = this.columns;
    for (let i = this.keys; i < cols.length; i++)
      if (mask & (1 << i)) params.push(param(cols[i]!, value(row, cols[i]!)));
    for (let i = 0; i < this.keys; i++) params.push(value(row, cols[i]!));
    let sql = this.updates.get(mask);
    if (sql === undefined) {
      const set = cols.filter((_, i) => mask & (1 << i)).map((c) => `${c.column} = ?`);
      const where = cols.slice(0, this.keys).map((c) => `${c.column} = ?`);
      this.updates.set(
        mask,
        (sql = `UPDATE ${this.name} SET ${set.join(", ")} WHERE ${where.join(" AND ")}`),
      );
    }
    return [sql, params];
  }
}

export const EXECUTIONS = new Table<ExecutionRow>(
  "executions",
  1,
  `id agentId:agent_id agentVersion:agent_version inputJson:input status
  outputJson:output stateJson:state failureReason:failure_reason createdAt:created_at updatedAt:updated_at
  deadlineAt:deadline_at session parentExecutionId:parent_execution_id idempotencyKey:idempotency_key
  spawnedBy.executionId:spawned_by_execution_id spawnedBy.stepId:spawned_by_step_id forkedFrom:forked_from
  forkSeq:fork_seq restorationJson:restoration policyBundle:policy_bundle
  rateLimitParked:rate_limit_parked:bool tokensUsed:tokens_used onBehalfOf:on_behalf_of`,
);
export const STEPS = new Table<StepRow>(
  "steps",
  2,
  `executionId:execution_id stepId:step_id kind target argsHash:args_hash occurrence
  status idempotency argsJson:args resultJson:result errorJson:error resources:resources:list
  inputTokens:input_tokens outputTokens:output_tokens createdAt:created_at startedAt:started_at
  completedAt:completed_at`,
);
export const EVENTS = new Table<EventRow>(
  "events",
  2,
  "executionId:execution_id seq:event_seq type payloadJson:payload occurredAt:occurred_at",
);
export const DISPATCHES = new Table<DispatchRow>(
  "dispatches",
  1,
  `id executionId:execution_id status attempt maxAttempts:max_attempts
  nextAttemptAt:next_attempt_at lockedBy:locked_by lockedAt:locked_at leaseMs:lease_ms createdAt:created_at`,
);
export const APPROVALS = new Table<ApprovalRow>(
  "approvals",
  1,
  `id executionId:execution_id stepId:step_id status approvers:approvers:list
  message timeoutAt:timeout_at decidedBy:decided_by decidedAt:decided_at rationale createdAt:created_at`,
);
export const AGENTS = new Table<AgentRow>(
  "agents",
  1,
  `id webhookUrl:webhook_url secret policyBundle:policy_bundle registeredAt:registered_at
  leaseTimeoutSeconds:lease_timeout_seconds description inputSchemaJson:input_schema
  outputSchemaJson:output_schema`,
  true,
);
export const API_KEYS = new Table<ApiKeyRow>(
  "api_keys",
  1,
  "id name scopes:scopes:list tokenHash:token_hash createdAt:created_at rotatedAt:rotated_at revokedAt:revoked_at",
);
// ON CONFLICT … DO UPDATE keeps the row (and its rowid: registration order).
export const RESOURCES = new Table<ResourceRow>(
  "resources",
  2,
  `executionId:execution_id key driverId:driver_id configurationJson:configuration
  configurationHash:configuration_hash coverageReuse:coverage_reuse:bool everySteps:every_steps
  onCompletion:on_completion:bool generation count registeredSeq:registered_seq bindingJson:binding
  checkpointRef:checkpoint_ref`,
  true,
);
export const CHECKPOINTS = new Table<CheckpointRow>(
  "checkpoints",
  3,
  `executionId:execution_id key seq generation checkpointRef:checkpoint_ref
  coveredSeq:covered_seq invalidatedSeq:invalidated_seq`,
);
