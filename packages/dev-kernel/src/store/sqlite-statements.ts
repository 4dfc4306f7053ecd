/**
 * Every statement of the SQLite store (sqlite.ts), prepared once at open. INSERT and UPDATE column
 * lists come from the row conversions (sqlite-rows.ts), so a column cannot be forgotten in one.
 */
import type Database from "better-sqlite3";
import {
  agentParams,
  apiKeyParams,
  approvalParams,
  checkpointParams,
  dispatchParams,
  executionParams,
  resourceParams,
  stepParams,
} from "./sqlite-rows.js";
import { TERMINAL_SQL } from "./sqlite-schema.js";

/** Column lists for INSERT and UPDATE statements built from a row's parameter names. */
function insertSql(table: string, columns: readonly string[], conflict = ""): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})${conflict}`;
}
function updateSql(table: string, columns: readonly string[], keys: readonly string[]): string {
  const set = columns.filter((c) => !keys.includes(c)).map((c) => `${c} = @${c}`);
  return `UPDATE ${table} SET ${set.join(", ")} WHERE ${keys.map((k) => `${k} = @${k}`).join(" AND ")}`;
}

type StatementName =
  | "insertExecution"
  | "updateExecution"
  | "getExecution"
  | "executionByKey"
  | "countExecutions"
  | "sessionExecutions"
  | "childExecutions"
  | "pastDeadline"
  | "unsettledSubagents"
  | "terminalBefore"
  | "insertEvent"
  | "listEvents"
  | "lastEventSeq"
  | "insertStep"
  | "updateStep"
  | "getStep"
  | "listSteps"
  | "failedForCall"
  | "getOccurrence"
  | "setOccurrence"
  | "clearOccurrences"
  | "insertDispatch"
  | "updateDispatch"
  | "getDispatch"
  | "activeDispatches"
  | "dueDispatches"
  | "nextDue"
  | "expiredLeases"
  | "insertApproval"
  | "updateApproval"
  | "getApproval"
  | "allApprovals"
  | "approvalsWithStatus"
  | "pendingApprovals"
  | "pendingApprovalForStep"
  | "expiredApprovals"
  | "putAgent"
  | "getAgent"
  | "listAgents"
  | "deleteAgent"
  | "insertApiKey"
  | "updateApiKey"
  | "getApiKey"
  | "apiKeyByHash"
  | "listApiKeys"
  | "putResource"
  | "getResource"
  | "listResources"
  | "lastCheckpointSeq"
  | "insertCheckpoint"
  | "updateCheckpoint"
  | "allCheckpoints"
  | "keyCheckpoints";

/** The prepared statements, by name. */
export type Statements = { readonly [K in StatementName]: Database.Statement } & {
  /** The few statements built from a query's filters (at most 16 shapes). */
  cached(sql: string): Database.Statement;
  /** An execution's rows, table by table. */
  readonly deleteExecution: readonly Database.Statement[];
};

/** Every statement of the store, prepared once. */
export function prepareStatements(db: Database.Database): Statements {
  const p = (sql: string): Database.Statement => db.prepare(sql);
  const columns = (sample: Record<string, unknown>): string[] => Object.keys(sample);
  const executionColumns = columns(
    executionParams({
      id: "",
      agentId: "",
      inputJson: "",
      status: "pending",
      createdAt: 0,
      updatedAt: 0,
      rateLimitParked: false,
      tokensUsed: 0,
    }),
  );
  const stepColumns = columns(
    stepParams({
      executionId: "",
      stepId: "",
      kind: "tool_call",
      target: "",
      argsHash: "",
      occurrence: 0,
      status: "executing",
      idempotency: "safe_to_retry",
      resources: [],
      createdAt: 0,
    }),
  );
  const dispatchColumns = columns(
    dispatchParams({
      id: "",
      executionId: "",
      status: "pending",
      attempt: 0,
      maxAttempts: 0,
      nextAttemptAt: 0,
      leaseMs: 0,
      createdAt: 0,
    }),
  );
  const approvalColumns = columns(
    approvalParams({ id: "", executionId: "", stepId: "", status: "pending", timeoutAt: 0, createdAt: 0 }),
  );
  const agentColumns = columns(agentParams({ id: "", webhookUrl: "", secret: "", registeredAt: 0 }));
  const apiKeyColumns = columns(apiKeyParams({ id: "", name: "", scopes: [], tokenHash: "", createdAt: 0 }));
  const resourceColumns = columns(
    resourceParams({
      executionId: "",
      key: "",
      driverId: "",
      configurationJson: "",
      configurationHash: "",
      coverageReuse: false,
      everySteps: 0,
      onCompletion: false,
      generation: 0,
      count: 0,
      registeredSeq: 0,
    }),
  );
  const checkpointColumns = columns(
    checkpointParams({ executionId: "", key: "", seq: 0, generation: 0, checkpointRef: "", coveredSeq: 0 }),
  );
  const cache = new Map<string, Database.Statement>();
  const terminal = TERMINAL_SQL;
  return {
    /** The few statements built from a query's filters (at most 16 shapes). */
    cached(sql: string): Database.Statement {
      let stmt = cache.get(sql);
      if (stmt === undefined) cache.set(sql, (stmt = p(sql)));
      return stmt;
    },
    insertExecution: p(insertSql("executions", executionColumns)),
    updateExecution: p(updateSql("executions", executionColumns, ["id"])),
    getExecution: p("SELECT * FROM executions WHERE id = ?"),
    executionByKey: p("SELECT * FROM executions WHERE agent_id = ? AND idempotency_key = ?"),
    countExecutions: p("SELECT count(*) FROM executions"),
    sessionExecutions: p("SELECT * FROM executions WHERE session = ? ORDER BY created_at, id"),
    childExecutions: p("SELECT * FROM executions WHERE spawned_by_execution_id = ? ORDER BY created_at, id"),
    pastDeadline: p(
      `SELECT * FROM executions WHERE deadline_at IS NOT NULL AND status NOT IN ${terminal} AND deadline_at <= ?`,
    ),
    // Terminal children of running parents whose spawning step still executes, and running
    // children of terminal parents (both sides through the partial and spawned_by indexes).
    unsettledSubagents: p(
      `SELECT c.* FROM executions p JOIN executions c ON c.spawned_by_execution_id = p.id
         JOIN steps s ON s.execution_id = p.id AND s.step_id = c.spawned_by_step_id
       WHERE p.status NOT IN ${terminal} AND c.status IN ${terminal} AND s.status = 'executing'
       UNION ALL
       SELECT c.* FROM executions c JOIN executions p ON p.id = c.spawned_by_execution_id
       WHERE c.spawned_by_execution_id IS NOT NULL AND c.status NOT IN ${terminal} AND p.status IN ${terminal}`,
    ),
    terminalBefore: p(
      `SELECT * FROM executions WHERE status IN ${terminal} AND updated_at < ? ORDER BY updated_at LIMIT ?`,
    ),
    deleteExecution: [
      "DELETE FROM dispatch_step_counters WHERE dispatch_id IN (SELECT id FROM dispatches WHERE execution_id = ?)",
      "DELETE FROM dispatches WHERE execution_id = ?",
      "DELETE FROM events WHERE execution_id = ?",
      "DELETE FROM steps WHERE execution_id = ?",
      "DELETE FROM approvals WHERE execution_id = ?",
      "DELETE FROM resources WHERE execution_id = ?",
      "DELETE FROM checkpoints WHERE execution_id = ?",
      "DELETE FROM executions WHERE id = ?",
    ].map(p),
    insertEvent: p(
      "INSERT INTO events (execution_id, event_seq, type, payload, occurred_at) VALUES (?, ?, ?, ?, ?)",
    ),
    listEvents: p("SELECT * FROM events WHERE execution_id = ? AND event_seq > ? ORDER BY event_seq LIMIT ?"),
    lastEventSeq: p("SELECT coalesce(max(event_seq), 0) FROM events WHERE execution_id = ?").pluck(),
    insertStep: p(insertSql("steps", stepColumns)),
    updateStep: p(updateSql("steps", stepColumns, ["execution_id", "step_id"])),
    getStep: p("SELECT * FROM steps WHERE execution_id = ? AND step_id = ?"),
    listSteps: p("SELECT * FROM steps WHERE execution_id = ? ORDER BY step_id"),
    failedForCall: p(
      "SELECT * FROM steps WHERE execution_id = ? AND kind = ? AND target = ? AND args_hash = ? AND status = 'failed' ORDER BY step_id",
    ),
    getOccurrence: p(
      "SELECT consumed FROM dispatch_step_counters WHERE dispatch_id = ? AND kind = ? AND target = ? AND args_hash = ?",
    ).pluck(),
    setOccurrence: p(
      "INSERT OR REPLACE INTO dispatch_step_counters (dispatch_id, kind, target, args_hash, consumed) VALUES (?, ?, ?, ?, ?)",
    ),
    clearOccurrences: p("DELETE FROM dispatch_step_counters WHERE dispatch_id = ?"),
    insertDispatch: p(insertSql("dispatches", dispatchColumns)),
    updateDispatch: p(updateSql("dispatches", dispatchColumns, ["id"])),
    getDispatch: p("SELECT * FROM dispatches WHERE id = ?"),
    activeDispatches: p(
      "SELECT * FROM dispatches WHERE execution_id = ? AND status <> 'exhausted' ORDER BY rowid",
    ),
    dueDispatches: p(
      "SELECT * FROM dispatches WHERE status IN ('pending', 'failed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
    ),
    nextDue: p("SELECT min(next_attempt_at) FROM dispatches WHERE status IN ('pending', 'failed')").pluck(),
    expiredLeases: p(
      "SELECT * FROM dispatches WHERE status = 'in_flight' AND coalesce(locked_at, 0) + lease_ms < ?",
    ),
    insertApproval: p(insertSql("approvals", approvalColumns)),
    updateApproval: p(updateSql("approvals", approvalColumns, ["id"])),
    getApproval: p("SELECT * FROM approvals WHERE id = ?"),
    allApprovals: p("SELECT * FROM approvals ORDER BY created_at, rowid"),
    approvalsWithStatus: p("SELECT * FROM approvals WHERE status = ? ORDER BY created_at, rowid"),
    pendingApprovals: p(
      "SELECT * FROM approvals WHERE execution_id = ? AND status = 'pending' ORDER BY created_at, rowid",
    ),
    pendingApprovalForStep: p(
      "SELECT * FROM approvals WHERE execution_id = ? AND step_id = ? AND status = 'pending' ORDER BY created_at, rowid LIMIT 1",
    ),
    expiredApprovals: p(
      "SELECT * FROM approvals WHERE status = 'pending' AND timeout_at <= ? ORDER BY created_at, rowid",
    ),
    putAgent: p(
      insertSql(
        "agents",
        agentColumns,
        " ON CONFLICT (id) DO UPDATE SET " +
          agentColumns
            .filter((c) => c !== "id")
            .map((c) => `${c} = excluded.${c}`)
            .join(", "),
      ),
    ),
    getAgent: p("SELECT * FROM agents WHERE id = ?"),
    listAgents: p("SELECT * FROM agents ORDER BY id"),
    deleteAgent: p("DELETE FROM agents WHERE id = ?"),
    insertApiKey: p(insertSql("api_keys", apiKeyColumns)),
    updateApiKey: p(updateSql("api_keys", apiKeyColumns, ["id"])),
    getApiKey: p("SELECT * FROM api_keys WHERE id = ?"),
    apiKeyByHash: p("SELECT * FROM api_keys WHERE token_hash = ?"),
    listApiKeys: p("SELECT * FROM api_keys ORDER BY rowid"),
    // ON CONFLICT … DO UPDATE keeps the row (and its rowid: registration order).
    putResource: p(
      insertSql(
        "resources",
        resourceColumns,
        " ON CONFLICT (execution_id, key) DO UPDATE SET " +
          resourceColumns
            .filter((c) => c !== "execution_id" && c !== "key")
            .map((c) => `${c} = excluded.${c}`)
            .join(", "),
      ),
    ),
    getResource: p("SELECT * FROM resources WHERE execution_id = ? AND key = ?"),
    listResources: p("SELECT * FROM resources WHERE execution_id = ? ORDER BY rowid"),
    lastCheckpointSeq: p(
      "SELECT coalesce(max(seq), 0) FROM checkpoints WHERE execution_id = ? AND key = ?",
    ).pluck(),
    insertCheckpoint: p(insertSql("checkpoints", checkpointColumns)),
    updateCheckpoint: p(updateSql("checkpoints", checkpointColumns, ["execution_id", "key", "seq"])),
    allCheckpoints: p("SELECT * FROM checkpoints WHERE execution_id = ? ORDER BY rowid"),
    keyCheckpoints: p("SELECT * FROM checkpoints WHERE execution_id = ? AND key = ? ORDER BY rowid"),
  };
}
