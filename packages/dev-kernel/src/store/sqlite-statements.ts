/**
 * Every statement of the SQLite store (sqlite.ts), prepared once at open. INSERT and UPDATE column
 * lists come from the table specs (sqlite-rows.ts), so a column cannot be forgotten in one.
 */
import type Database from "better-sqlite3";
import { BoundedCache } from "./bounded-cache.js";
import {
  AGENTS,
  API_KEYS,
  APPROVALS,
  CHECKPOINTS,
  DISPATCHES,
  EXECUTIONS,
  RESOURCES,
  STEPS,
  type TableSpec,
} from "./sqlite-rows.js";
import { TERMINAL as terminal } from "./sqlite-schema.js";
import type { ExecutionListQuery } from "./types.js";

const names = (t: TableSpec): string[] => t.map((c) => c.column);

function insertSql(table: string, spec: TableSpec, keys: readonly string[] = []): string {
  const columns = names(spec);
  const upsert =
    keys.length === 0
      ? ""
      : ` ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${columns
          .filter((c) => !keys.includes(c))
          .map((c) => `${c} = excluded.${c}`)
          .join(", ")}`;
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})${upsert}`;
}

function updateSql(table: string, spec: TableSpec, keys: readonly string[]): string {
  const set = names(spec)
    .filter((c) => !keys.includes(c))
    .map((c) => `${c} = @${c}`);
  return `UPDATE ${table} SET ${set.join(", ")} WHERE ${keys.map((k) => `${k} = @${k}`).join(" AND ")}`;
}

/** The statements by name (their SQL). */
const SQL = {
  insertExecution: insertSql("executions", EXECUTIONS),
  updateExecution: updateSql("executions", EXECUTIONS, ["id"]),
  getExecution: "SELECT * FROM executions WHERE id = ?",
  executionByKey: "SELECT * FROM executions WHERE agent_id = ? AND idempotency_key = ?",
  countExecutions: "SELECT count(*) FROM executions",
  sessionExecutions: "SELECT * FROM executions WHERE session = ? ORDER BY created_at, id",
  childExecutions: "SELECT * FROM executions WHERE spawned_by_execution_id = ? ORDER BY created_at, id",
  pastDeadline: `SELECT * FROM executions WHERE deadline_at IS NOT NULL AND status NOT IN ${terminal} AND deadline_at <= ?`,
  // Terminal children of running parents whose spawning step still executes, and running
  // children of terminal parents (both sides through the partial and spawned_by indexes).
  unsettledSubagents: `SELECT c.* FROM executions p JOIN executions c ON c.spawned_by_execution_id = p.id
         JOIN steps s ON s.execution_id = p.id AND s.step_id = c.spawned_by_step_id
       WHERE p.status NOT IN ${terminal} AND c.status IN ${terminal} AND s.status = 'executing'
       UNION ALL
       SELECT c.* FROM executions c JOIN executions p ON p.id = c.spawned_by_execution_id
       WHERE c.spawned_by_execution_id IS NOT NULL AND c.status NOT IN ${terminal} AND p.status IN ${terminal}`,
  terminalBefore: `SELECT * FROM executions INDEXED BY executions_terminal_idx WHERE status IN ${terminal} AND updated_at < ? ORDER BY updated_at LIMIT ?`,
  insertEvent:
    "INSERT INTO events (execution_id, event_seq, type, payload, occurred_at) VALUES (?, ?, ?, ?, ?)",
  listEvents: "SELECT * FROM events WHERE execution_id = ? AND event_seq > ? ORDER BY event_seq LIMIT ?",
  lastEventSeq: "SELECT coalesce(max(event_seq), 0) FROM events WHERE execution_id = ?",
  insertStep: insertSql("steps", STEPS),
  updateStep: updateSql("steps", STEPS, ["execution_id", "step_id"]),
  getStep: "SELECT * FROM steps WHERE execution_id = ? AND step_id = ?",
  listSteps: "SELECT * FROM steps WHERE execution_id = ? ORDER BY step_id",
  failedForCall:
    "SELECT * FROM steps WHERE execution_id = ? AND kind = ? AND target = ? AND args_hash = ? AND status = 'failed' ORDER BY step_id",
  getOccurrence:
    "SELECT consumed FROM dispatch_step_counters WHERE dispatch_id = ? AND kind = ? AND target = ? AND args_hash = ?",
  setOccurrence:
    // An upsert, not INSERT OR REPLACE (a delete and an insert of the same key).
    "INSERT INTO dispatch_step_counters (dispatch_id, kind, target, args_hash, consumed) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET consumed = excluded.consumed",
  clearOccurrences: "DELETE FROM dispatch_step_counters WHERE dispatch_id = ?",
  insertDispatch: insertSql("dispatches", DISPATCHES),
  updateDispatch: updateSql("dispatches", DISPATCHES, ["id"]),
  getDispatch: "SELECT * FROM dispatches WHERE id = ?",
  activeDispatches:
    "SELECT * FROM dispatches WHERE execution_id = ? AND status <> 'exhausted' ORDER BY rowid",
  dueDispatches:
    "SELECT * FROM dispatches WHERE status IN ('pending', 'failed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
  nextDue: "SELECT min(next_attempt_at) FROM dispatches WHERE status IN ('pending', 'failed')",
  expiredLeases:
    "SELECT * FROM dispatches WHERE status = 'in_flight' AND coalesce(locked_at, 0) + lease_ms < ?",
  insertApproval: insertSql("approvals", APPROVALS),
  updateApproval: updateSql("approvals", APPROVALS, ["id"]),
  getApproval: "SELECT * FROM approvals WHERE id = ?",
  allApprovals: "SELECT * FROM approvals ORDER BY created_at, rowid",
  approvalsWithStatus: "SELECT * FROM approvals WHERE status = ? ORDER BY created_at, rowid",
  pendingApprovals:
    "SELECT * FROM approvals WHERE execution_id = ? AND status = 'pending' ORDER BY created_at, rowid",
  pendingApprovalForStep:
    "SELECT * FROM approvals WHERE execution_id = ? AND step_id = ? AND status = 'pending' ORDER BY created_at, rowid LIMIT 1",
  expiredApprovals:
    "SELECT * FROM approvals WHERE status = 'pending' AND timeout_at <= ? ORDER BY created_at, rowid",
  putAgent: insertSql("agents", AGENTS, ["id"]),
  getAgent: "SELECT * FROM agents WHERE id = ?",
  listAgents: "SELECT * FROM agents ORDER BY id",
  deleteAgent: "DELETE FROM agents WHERE id = ?",
  insertApiKey: insertSql("api_keys", API_KEYS),
  updateApiKey: updateSql("api_keys", API_KEYS, ["id"]),
  getApiKey: "SELECT * FROM api_keys WHERE id = ?",
  apiKeyByHash: "SELECT * FROM api_keys WHERE token_hash = ?",
  listApiKeys: "SELECT * FROM api_keys ORDER BY rowid",
  // ON CONFLICT … DO UPDATE keeps the row (and its rowid: registration order).
  putResource: insertSql("resources", RESOURCES, ["execution_id", "key"]),
  getResource: "SELECT * FROM resources WHERE execution_id = ? AND key = ?",
  listResources: "SELECT * FROM resources WHERE execution_id = ? ORDER BY rowid",
  lastCheckpointSeq: "SELECT coalesce(max(seq), 0) FROM checkpoints WHERE execution_id = ? AND key = ?",
  insertCheckpoint: insertSql("checkpoints", CHECKPOINTS),
  updateCheckpoint: updateSql("checkpoints", CHECKPOINTS, ["execution_id", "key", "seq"]),
  allCheckpoints: "SELECT * FROM checkpoints WHERE execution_id = ? ORDER BY rowid",
  keyCheckpoints: "SELECT * FROM checkpoints WHERE execution_id = ? AND key = ? ORDER BY rowid",
} as const;

/** Statements read with `.pluck()` (one value). */
const PLUCKED: ReadonlySet<string> = new Set([
  "countExecutions",
  "lastEventSeq",
  "getOccurrence",
  "nextDue",
  "lastCheckpointSeq",
]);

/** An execution's rows, table by table (`deleteExecution`). */
const DELETE_EXECUTION = [
  "DELETE FROM dispatch_step_counters WHERE dispatch_id IN (SELECT id FROM dispatches WHERE execution_id = ?)",
  "DELETE FROM dispatches WHERE execution_id = ?",
  "DELETE FROM events WHERE execution_id = ?",
  "DELETE FROM steps WHERE execution_id = ?",
  "DELETE FROM approvals WHERE execution_id = ?",
  "DELETE FROM resources WHERE execution_id = ?",
  "DELETE FROM checkpoints WHERE execution_id = ?",
  "DELETE FROM executions WHERE id = ?",
];

/** The prepared statements, by name. */
export type Statements = { readonly [K in keyof typeof SQL]: Database.Statement } & {
  /**
   * The statement of `sql`, prepared on first use: the shapes built from a query's filters or from
   * the columns an update changes (few in practice; the least recently used beyond 1 024 go).
   */
  cached(sql: string): Database.Statement;
  readonly deleteExecution: readonly Database.Statement[];
};

export function prepareStatements(db: Database.Database): Statements {
  const prepared: Record<string, Database.Statement> = {};
  for (const [name, sql] of Object.entries(SQL)) {
    const stmt = db.prepare(sql);
    prepared[name] = PLUCKED.has(name) ? stmt.pluck() : stmt;
  }
  const cache = new BoundedCache<Database.Statement>();
  return {
    ...(prepared as { [K in keyof typeof SQL]: Database.Statement }),
    cached(sql: string): Database.Statement {
      let stmt = cache.get(sql);
      if (stmt === undefined) cache.set(sql, (stmt = db.prepare(sql)));
      return stmt;
    },
    deleteExecution: DELETE_EXECUTION.map((sql) => db.prepare(sql)),
  };
}

/** `listExecutions`: the SQL of a query's filters (at most 16 shapes) and its arguments. */
export function executionListSql(query: ExecutionListQuery): [string, unknown[]] {
  const where: string[] = [];
  const args: unknown[] = [];
  const filters = [
    ["agent_id = ?", query.agentId],
    ["session = ?", query.session],
    ["status = ?", query.status],
    ["id < ?", query.beforeId],
  ] as const;
  for (const [sql, value] of filters) {
    if (value === undefined) continue;
    where.push(sql);
    args.push(value);
  }
  const filter = where.length > 0 ? `WHERE ${where.join(" AND ")} ` : "";
  return [`SELECT * FROM executions ${filter}ORDER BY id DESC LIMIT ?`, [...args, query.limit]];
}

/** `listStepsWithStatus`: one statement per number of statuses, over the execution's clustered rows. */
export function stepsWithStatusSql(count: number): string {
  const list = Array.from({ length: count }, () => "?").join(", ");
  return `SELECT * FROM steps WHERE execution_id = ? AND status IN (${list}) ORDER BY step_id`;
}
