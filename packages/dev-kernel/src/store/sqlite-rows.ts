/**
 * The store's row objects (types.ts) as rows of the SQLite tables (sqlite-schema.ts) and back, with
 * the statements that write them. A NULL column is an absent field; `bool` is 0/1; `list` a JSON
 * array of strings; a dotted field (`spawnedBy.executionId`) a field of a nested object, present
 * when its column is not NULL. Parameters are positional, in column order.
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
  readonly field: string; // for a dotted field, the nested object's (`spawnedBy`)
  readonly inner: string | undefined; // for a dotted field, the field inside it (`executionId`)
  readonly column: string;
  readonly kind: string;
  readonly json: boolean; // a `…Json` field (spliced raw into answers) or a `list`
}

const value = (row: object, c: Column): unknown =>
  c.inner === undefined
    ? (row as Record<string, unknown>)[c.field]
    : (row as Record<string, Record<string, unknown> | undefined>)[c.field]?.[c.inner];

const param = (c: Column, v: unknown): unknown =>
  v === undefined ? null : c.kind === "bool" ? (v ? 1 : 0) : c.kind === "list" ? JSON.stringify(v) : v;

const snake = (path: string): string =>
  path.replace(/Json$/, "").replace(/[.A-Z]/g, (c) => (c === "." ? "_" : `_${c.toLowerCase()}`));

/** One table: its name, its columns, the first `keys` of which are its primary key. */
export class Table<T extends object> {
  readonly name: string;
  readonly columns: readonly Column[];
  private readonly keys: number;
  readonly insert: string;
  /** The bits of every non-key column: an update of a row whose old version is unknown. */
  readonly all: number;
  private readonly updates = new Map<number, string>();

  /**
   * `spec`: `name (key fields) fields`, by spaces, each field `field`, `field:bool|list` or
   * `field=column`. A field's column is its name in snake case without a `Json` suffix
   * (`inputSchemaJson` → `input_schema`). `upsert`: inserting an existing key updates its row.
   */
  constructor(spec: string, upsert = false) {
    const [, name, key, rest] = /^(\w+) \(([^)]*)\)(.*)$/s.exec(spec)!;
    this.name = name!;
    this.keys = key!.split(" ").length;
    this.columns = `${key} ${rest}`
      .trim()
      .split(/\s+/)
      .map((token) => {
        const [named, kind = "plain"] = token.split(":") as [string, string?];
        const [path, column = snake(path)] = named.split("=") as [string, string?];
        const [field, inner] = path.split(".") as [string, string?];
        return { field, inner, column, kind, json: path.endsWith("Json") || kind === "list" };
      });
    const names = this.columns.map((c) => c.column);
    const set = names.slice(this.keys).map((c) => `${c} = excluded.${c}`);
    const conflict = upsert
      ? ` ON CONFLICT (${names.slice(0, this.keys)}) DO UPDATE SET ${set.join(", ")}`
      : "";
    this.insert = `INSERT INTO ${name} (${names.join(", ")}) VALUES (${names.map(() => "?")})${conflict}`;
    this.all = (2 ** this.columns.length - 1) & ~(2 ** this.keys - 1);
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

  /** The characters of JSON text (`…Json` fields) `row` holds. */
  textLength(row: T | null): number {
    let n = 0;
    for (const c of row === null ? [] : this.columns)
      if (c.json && c.kind !== "list") n += (value(row!, c) as string | undefined)?.length ?? 0;
    return n;
  }

  /** The first JSON column of `c` whose text does not parse, and why. */
  invalidJson(c: Columns): { column: string; cause: unknown } | undefined {
    for (const { column, json } of this.columns) {
      const text = c[column];
      if (!json || typeof text !== "string") continue;
      try {
        JSON.parse(text);
      } catch (cause) {
        return { column, cause };
      }
    }
    return undefined;
  }

  /** The primary key of `c`, by column. */
  keyOf(c: Columns): Record<string, string | number> {
    return Object.fromEntries(this.columns.slice(0, this.keys).map(({ column }) => [column, c[column]!]));
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
      sql = `UPDATE ${this.name} SET ${set.join(", ")} WHERE ${where.join(" AND ")}`;
      this.updates.set(mask, sql);
    }
    return [sql, params];
  }
}

export const EXECUTIONS = new Table<ExecutionRow>(
  `executions (id) agentId agentVersion inputJson status outputJson stateJson failureReason createdAt
  updatedAt deadlineAt session parentExecutionId idempotencyKey spawnedBy.executionId spawnedBy.stepId
  forkedFrom forkSeq restorationJson policyBundle rateLimitParked:bool tokensUsed onBehalfOf`,
);
export const STEPS = new Table<StepRow>(
  `steps (executionId stepId) kind target argsHash occurrence status idempotency argsJson resultJson
  errorJson resources:list inputTokens outputTokens createdAt startedAt completedAt`,
);
export const EVENTS = new Table<EventRow>("events (executionId seq=event_seq) type payloadJson occurredAt");
export const DISPATCHES = new Table<DispatchRow>(
  "dispatches (id) executionId status attempt maxAttempts nextAttemptAt lockedBy lockedAt leaseMs createdAt",
);
export const APPROVALS = new Table<ApprovalRow>(
  "approvals (id) executionId stepId status approvers:list message timeoutAt decidedBy decidedAt rationale createdAt",
);
export const AGENTS = new Table<AgentRow>(
  `agents (id) webhookUrl secret policyBundle registeredAt leaseTimeoutSeconds description inputSchemaJson
  outputSchemaJson`,
  true,
);
export const API_KEYS = new Table<ApiKeyRow>(
  "api_keys (id) name scopes:list tokenHash createdAt rotatedAt revokedAt",
);
// The upsert keeps the row (and its rowid: registration order).
export const RESOURCES = new Table<ResourceRow>(
  `resources (executionId key) driverId configurationJson configurationHash coverageReuse:bool everySteps
  onCompletion:bool generation count registeredSeq bindingJson checkpointRef`,
  true,
);
export const CHECKPOINTS = new Table<CheckpointRow>(
  "checkpoints (executionId key seq) generation checkpointRef coveredSeq invalidatedSeq",
);
