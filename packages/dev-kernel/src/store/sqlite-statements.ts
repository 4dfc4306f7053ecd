// The SQL of the SQLite store (sqlite.ts) besides the INSERTs and UPDATEs of sqlite-rows.ts.
import { TERMINAL as terminal } from "./sqlite-schema.js";
import type { ExecutionListQuery } from "./types.js";

/** By the store method that runs it (`many`/`first` in sqlite.ts), or by what it does. */
export const SQL = {
  getExecution: "SELECT * FROM executions WHERE id = ?",
  findExecutionByIdempotencyKey: "SELECT * FROM executions WHERE agent_id = ? AND idempotency_key = ?",
  countExecutions: "SELECT count(*) FROM executions",
  listSessionExecutions: "SELECT * FROM executions WHERE session = ? ORDER BY created_at, id",
  listChildExecutions: "SELECT * FROM executions WHERE spawned_by_execution_id = ? ORDER BY created_at, id",
  listExecutionsPastDeadline: `SELECT * FROM executions WHERE deadline_at IS NOT NULL AND status NOT IN ${terminal} AND deadline_at <= ?`,
  // Terminal children of running parents whose spawning step still executes, and running
  // children of terminal parents (both sides through the partial and spawned_by indexes).
  listUnsettledSubagents: `SELECT c.* FROM executions p JOIN executions c ON c.spawned_by_execution_id = p.id
         JOIN steps s ON s.execution_id = p.id AND s.step_id = c.spawned_by_step_id
       WHERE p.status NOT IN ${terminal} AND c.status IN ${terminal} AND s.status = 'executing'
       UNION ALL
       SELECT c.* FROM executions c JOIN executions p ON p.id = c.spawned_by_execution_id
       WHERE c.spawned_by_execution_id IS NOT NULL AND c.status NOT IN ${terminal} AND p.status IN ${terminal}`,
  listTerminalExecutionsBefore: `SELECT * FROM executions INDEXED BY executions_terminal_idx WHERE status IN ${terminal} AND updated_at < ? ORDER BY updated_at LIMIT ?`,
  insertEvent:
    "INSERT INTO events (execution_id, event_seq, type, payload, occurred_at) VALUES (?, ?, ?, ?, ?)",
  listEvents: "SELECT * FROM events WHERE execution_id = ? AND event_seq > ? ORDER BY event_seq LIMIT ?",
  lastEventSeq: "SELECT coalesce(max(event_seq), 0) FROM events WHERE execution_id = ?",
  getStep: "SELECT * FROM steps WHERE execution_id = ? AND step_id = ?",
  listSteps: "SELECT * FROM steps WHERE execution_id = ? ORDER BY step_id",
  // The planner would walk all of the execution's steps in step_id order instead (format 6).
  listFailedStepsForCall:
    "SELECT * FROM steps INDEXED BY steps_failed_call_idx WHERE execution_id = ? AND kind = ? AND target = ? AND args_hash = ? AND status = 'failed' ORDER BY step_id",
  getOccurrence:
    "SELECT consumed FROM dispatch_step_counters WHERE dispatch_id = ? AND kind = ? AND target = ? AND args_hash = ?",
  setOccurrence:
    // An upsert, not INSERT OR REPLACE (a delete and an insert of the same key).
    "INSERT INTO dispatch_step_counters (dispatch_id, kind, target, args_hash, consumed) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET consumed = excluded.consumed",
  clearOccurrences: "DELETE FROM dispatch_step_counters WHERE dispatch_id = ?",
  getDispatch: "SELECT * FROM dispatches WHERE id = ?",
  listActiveDispatches:
    "SELECT * FROM dispatches WHERE execution_id = ? AND status <> 'exhausted' ORDER BY rowid",
  listDueDispatches:
    "SELECT * FROM dispatches WHERE status IN ('pending', 'failed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
  nextDue: "SELECT min(next_attempt_at) FROM dispatches WHERE status IN ('pending', 'failed')",
  listExpiredLeases:
    "SELECT * FROM dispatches WHERE status = 'in_flight' AND coalesce(locked_at, 0) + lease_ms < ?",
  getApproval: "SELECT * FROM approvals WHERE id = ?",
  allApprovals: "SELECT * FROM approvals ORDER BY created_at, rowid",
  approvalsWithStatus: "SELECT * FROM approvals WHERE status = ? ORDER BY created_at, rowid",
  listPendingApprovals:
    "SELECT * FROM approvals WHERE execution_id = ? AND status = 'pending' ORDER BY created_at, rowid",
  findPendingApprovalForStep:
    "SELECT * FROM approvals WHERE execution_id = ? AND step_id = ? AND status = 'pending' ORDER BY created_at, rowid LIMIT 1",
  listExpiredApprovals:
    "SELECT * FROM approvals WHERE status = 'pending' AND timeout_at <= ? ORDER BY created_at, rowid",
  getAgent: "SELECT * FROM agents WHERE id = ?",
  listAgents: "SELECT * FROM agents ORDER BY id",
  deleteAgent: "DELETE FROM agents WHERE id = ?",
  getApiKey: "SELECT * FROM api_keys WHERE id = ?",
  findApiKeyByTokenHash: "SELECT * FROM api_keys WHERE token_hash = ?",
  listApiKeys: "SELECT * FROM api_keys ORDER BY rowid",
  getResource: "SELECT * FROM resources WHERE execution_id = ? AND key = ?",
  listResources: "SELECT * FROM resources WHERE execution_id = ? ORDER BY rowid",
  lastCheckpointSeq: "SELECT coalesce(max(seq), 0) FROM checkpoints WHERE execution_id = ? AND key = ?",
  allCheckpoints: "SELECT * FROM checkpoints WHERE execution_id = ? ORDER BY rowid",
  keyCheckpoints: "SELECT * FROM checkpoints WHERE execution_id = ? AND key = ? ORDER BY rowid",
} as const;

/** An execution's rows, table by table (`deleteExecution`). */
export const DELETE_EXECUTION = [
  "DELETE FROM dispatch_step_counters WHERE dispatch_id IN (SELECT id FROM dispatches WHERE execution_id = ?)",
  ...["dispatches", "events", "steps", "approvals", "resources", "checkpoints"].map(
    (table) => `DELETE FROM ${table} WHERE execution_id = ?`,
  ),
  "DELETE FROM executions WHERE id = ?",
];

/** `listExecutions`: the SQL of a query's filters (at most 16 shapes) and its arguments. */
export function executionListSql(query: ExecutionListQuery): [string, unknown[]] {
  const filters = [
    ["agent_id = ?", query.agentId],
    ["session = ?", query.session],
    ["status = ?", query.status],
    ["id < ?", query.beforeId],
  ].filter(([, value]) => value !== undefined);
  const where = filters.length > 0 ? `WHERE ${filters.map(([sql]) => sql).join(" AND ")} ` : "";
  const args = [...filters.map(([, value]) => value), query.limit];
  return [`SELECT * FROM executions ${where}ORDER BY id DESC LIMIT ?`, args];
}

/** `listStepsWithStatus`: one statement per number of statuses (the execution's rows by primary key). */
export function stepsWithStatusSql(count: number): string {
  const list = Array.from({ length: count }, () => "?").join(", ");
  return `SELECT * FROM steps WHERE execution_id = ? AND status IN (${list}) ORDER BY step_id`;
}
