import { ConfigurationError } from "@rebuno/protocol";
import type Database from "better-sqlite3";
import type { MemoryStore } from "./memory.js";
import { SqliteConnection } from "./sqlite-connection.js";
import {
  agentParams,
  agentRow,
  apiKeyParams,
  apiKeyRow,
  approvalParams,
  approvalRow,
  type Columns,
  checkpointParams,
  checkpointRow,
  dispatchParams,
  dispatchRow,
  eventRow,
  executionParams,
  executionRow,
  resourceParams,
  resourceRow,
  stepParams,
  stepRow,
} from "./sqlite-rows.js";
import { TERMINAL_SQL } from "./sqlite-schema.js";
import type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  ApprovalStatus,
  CheckpointRow,
  DispatchRow,
  EventRow,
  ExecutionListQuery,
  ExecutionRow,
  ResourceRow,
  StepKind,
  StepRow,
  StepStatus,
  Store,
} from "./types.js";

/** Options for {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * `NORMAL` (default) survives a process crash (SIGKILL) without losing a committed batch: in WAL
   * mode the log is written before the commit returns, only an OS crash can lose the tail. `FULL`
   * also fsyncs on every commit, for power-loss durability.
   */
  readonly synchronous?: "NORMAL" | "FULL";
  /**
   * Run SQLite's `PRAGMA quick_check` over the whole file at open (default true). It reads every
   * page, about a second per GB: turn it off for very large stores whose disk you trust. The seal
   * (acknowledged commits) is checked either way.
   */
  readonly quickCheck?: boolean;
  /** Path of a `better_sqlite3.node` built for another Node ABI (passed to better-sqlite3). */
  readonly nativeBinding?: string;
}

/** Column lists for INSERT and UPDATE statements built from a row's parameter names. */
function insertSql(table: string, columns: readonly string[], conflict = ""): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})${conflict}`;
}
function updateSql(table: string, columns: readonly string[], keys: readonly string[]): string {
  const set = columns.filter((c) => !keys.includes(c)).map((c) => `${c} = @${c}`);
  return `UPDATE ${table} SET ${set.join(", ")} WHERE ${keys.map((k) => `${k} = @${k}`).join(" AND ")}`;
}

/**
 * {@link Store} on one SQLite file, in ordinary tables (sqlite-schema.ts) that `sqlite3` and any
 * SQL tool can read. Every write is a statement on those tables; every read an indexed query.
 * Nothing is kept in memory beyond SQLite's page cache. Transactions and group commit are the
 * connection's (sqlite-connection.ts): nothing may be acknowledged before `whenDurable()` resolved.
 * The file is locked for as long as the store is open (a second store on it fails with
 * `StoreLockedError`).
 */
export class SqliteStore implements Store {
  private readonly file: SqliteConnection;
  private readonly q: ReturnType<typeof prepare>;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    const synchronous = options.synchronous ?? "NORMAL";
    if (synchronous !== "NORMAL" && synchronous !== "FULL") {
      throw new ConfigurationError(
        `SqliteStore: synchronous must be "NORMAL" or "FULL", got ${JSON.stringify(synchronous)}`,
      );
    }
    this.file = new SqliteConnection(path, {
      synchronous,
      quickCheck: options.quickCheck ?? true,
      nativeBinding: options.nativeBinding,
    });
    try {
      this.q = prepare(this.file.db);
      if (this.file.converted !== undefined) this.copyFrom(this.file.converted);
    } catch (err) {
      this.file.close();
      throw err;
    }
    this.file.finishOpen();
  }

  /** Write a converted redo-log file's state (sqlite-format3.ts) into the tables. */
  private copyFrom(memory: MemoryStore): void {
    const c = memory.contents();
    this.transaction(() => {
      for (const row of c.executions) this.insertExecution(row);
      for (const log of c.eventLogs) for (const e of log) this.appendEvent(e.executionId, e.type, e.payloadJson, e.occurredAt);
      for (const row of c.steps) this.insertStep(row);
      for (const row of c.dispatches) this.insertDispatch(row);
      for (const o of c.occurrences) this.setOccurrence(o.dispatchId, o.kind, o.target, o.argsHash, o.consumed);
      for (const row of c.approvals) this.insertApproval(row);
      for (const row of c.agents) this.putAgent(row);
      for (const row of c.apiKeys) this.insertApiKey(row);
      for (const row of c.resources) this.putResource(row);
      for (const row of c.checkpoints) this.file.write(() => this.q.insertCheckpoint.run(checkpointParams(row)));
    });
  }

  transaction<T>(fn: () => T): T {
    return this.file.transaction(fn);
  }

  whenDurable(): Promise<void> {
    return this.file.whenDurable();
  }

  /** Commit what is pending and release the file. Throws if committing failed. Idempotent. */
  close(): void {
    this.file.close();
  }

  private all<T>(stmt: Database.Statement, map: (c: Columns) => T, ...args: unknown[]): T[] {
    return (stmt.all(...args) as Columns[]).map(map);
  }

  private one<T>(stmt: Database.Statement, map: (c: Columns) => T, ...args: unknown[]): T | undefined {
    const c = stmt.get(...args) as Columns | undefined;
    return c === undefined ? undefined : map(c);
  }

  /** Run an UPDATE that must find its row (like the memory store, which throws otherwise). */
  private update(stmt: Database.Statement, params: Record<string, unknown>, what: string): void {
    this.file.write(() => {
      if (stmt.run(params).changes === 0) throw new Error(`${what} does not exist`);
    });
  }

  // --- executions -----------------------------------------------------------------------------

  insertExecution(row: ExecutionRow): void {
    this.file.write(() => this.q.insertExecution.run(executionParams(row)));
  }

  updateExecution(row: ExecutionRow): void {
    this.update(this.q.updateExecution, executionParams(row), `execution ${row.id}`);
  }

  getExecution(id: string): ExecutionRow | undefined {
    return this.one(this.q.getExecution, executionRow, id);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return this.one(this.q.executionByKey, executionRow, agentId, idempotencyKey);
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.agentId !== undefined) where.push("agent_id = ?") && args.push(query.agentId);
    if (query.session !== undefined) where.push("session = ?") && args.push(query.session);
    if (query.status !== undefined) where.push("status = ?") && args.push(query.status);
    if (query.beforeId !== undefined) where.push("id < ?") && args.push(query.beforeId);
    const sql = `SELECT * FROM executions ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return this.all(this.q.cached(sql), executionRow, ...args, query.limit);
  }

  countExecutions(): number {
    return this.q.countExecutions.pluck().get() as number;
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return this.all(this.q.sessionExecutions, executionRow, session);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return this.all(this.q.childExecutions, executionRow, parentId);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return this.all(this.q.pastDeadline, executionRow, now);
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return this.all(this.q.unsettledSubagents, executionRow);
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    return this.all(this.q.terminalBefore, executionRow, cutoff, limit);
  }

  deleteExecution(id: string): void {
    this.file.write(() => {
      for (const stmt of this.q.deleteExecution) stmt.run(id);
    });
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    return this.file.write(() => {
      const seq = this.lastEventSeq(executionId) + 1;
      this.q.insertEvent.run(executionId, seq, type, payloadJson, occurredAt);
      return seq;
    });
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    return this.all(this.q.listEvents, eventRow, executionId, afterSeq, limit);
  }

  lastEventSeq(executionId: string): number {
    return this.q.lastEventSeq.get(executionId) as number;
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.file.write(() => this.q.insertStep.run(stepParams(row)));
  }

  updateStep(row: StepRow): void {
    this.update(this.q.updateStep, stepParams(row), `step ${row.stepId}`);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.one(this.q.getStep, stepRow, executionId, stepId);
  }

  listSteps(executionId: string): StepRow[] {
    return this.all(this.q.listSteps, stepRow, executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.listSteps(executionId).filter((s) => statuses.includes(s.status));
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.all(this.q.failedForCall, stepRow, executionId, kind, target, argsHash);
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    return this.q.getOccurrence.get(dispatchId, kind, target, argsHash) as number | undefined;
  }

  setOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string, consumed: number): void {
    this.file.write(() => this.q.setOccurrence.run(dispatchId, kind, target, argsHash, consumed));
  }

  clearOccurrences(dispatchId: string): void {
    this.file.write(() => this.q.clearOccurrences.run(dispatchId));
  }

  // --- dispatches -----------------------------------------------------------------------------

  insertDispatch(row: DispatchRow): void {
    this.file.write(() => this.q.insertDispatch.run(dispatchParams(row)));
  }

  updateDispatch(row: DispatchRow): void {
    this.file.write(() => {
      this.update(this.q.updateDispatch, dispatchParams(row), `dispatch ${row.id}`);
      // No lease of an exhausted dispatch is ever live again, so nobody reads its counters.
      if (row.status === "exhausted") this.q.clearOccurrences.run(row.id);
    });
  }

  getDispatch(id: string): DispatchRow | undefined {
    return this.one(this.q.getDispatch, dispatchRow, id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return this.all(this.q.activeDispatches, dispatchRow, executionId);
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    return this.all(this.q.dueDispatches, dispatchRow, now, limit);
  }

  nextDispatchDueAt(): number | undefined {
    return (this.q.nextDue.get() as number | null) ?? undefined;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return this.all(this.q.expiredLeases, dispatchRow, now);
  }

  // --- approvals ------------------------------------------------------------------------------

  insertApproval(row: ApprovalRow): void {
    this.file.write(() => this.q.insertApproval.run(approvalParams(row)));
  }

  updateApproval(row: ApprovalRow): void {
    this.update(this.q.updateApproval, approvalParams(row), `approval ${row.id}`);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return this.one(this.q.getApproval, approvalRow, id);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return status === undefined
      ? this.all(this.q.allApprovals, approvalRow)
      : this.all(this.q.approvalsWithStatus, approvalRow, status);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.all(this.q.pendingApprovals, approvalRow, executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.one(this.q.pendingApprovalForStep, approvalRow, executionId, stepId);
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return this.all(this.q.expiredApprovals, approvalRow, now);
  }

  // --- agents ---------------------------------------------------------------------------------

  putAgent(row: AgentRow): void {
    this.file.write(() => this.q.putAgent.run(agentParams(row)));
  }

  getAgent(id: string): AgentRow | undefined {
    return this.one(this.q.getAgent, agentRow, id);
  }

  listAgents(): AgentRow[] {
    return this.all(this.q.listAgents, agentRow);
  }

  deleteAgent(id: string): void {
    this.file.write(() => this.q.deleteAgent.run(id));
  }

  // --- api keys -------------------------------------------------------------------------------

  insertApiKey(row: ApiKeyRow): void {
    this.file.write(() => this.q.insertApiKey.run(apiKeyParams(row)));
  }

  updateApiKey(row: ApiKeyRow): void {
    this.update(this.q.updateApiKey, apiKeyParams(row), `api key ${row.id}`);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return this.one(this.q.getApiKey, apiKeyRow, id);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    return this.one(this.q.apiKeyByHash, apiKeyRow, tokenHash);
  }

  listApiKeys(): ApiKeyRow[] {
    return this.all(this.q.listApiKeys, apiKeyRow);
  }

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    this.file.write(() => this.q.putResource.run(resourceParams(row)));
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.one(this.q.getResource, resourceRow, executionId, key);
  }

  listResources(executionId: string): ResourceRow[] {
    return this.all(this.q.listResources, resourceRow, executionId);
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.file.write(() => {
      const seq = (this.q.lastCheckpointSeq.get(row.executionId, row.key) as number) + 1;
      this.q.insertCheckpoint.run(checkpointParams({ ...row, seq }));
      return seq;
    });
  }

  updateCheckpoint(row: CheckpointRow): void {
    this.update(this.q.updateCheckpoint, checkpointParams(row), `checkpoint ${row.key}#${row.seq}`);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return key === undefined
      ? this.all(this.q.allCheckpoints, checkpointRow, executionId)
      : this.all(this.q.keyCheckpoints, checkpointRow, executionId, key);
  }
}

/** Every statement of the store, prepared once. */
function prepare(db: Database.Database) {
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
    expiredLeases: p("SELECT * FROM dispatches WHERE status = 'in_flight' AND coalesce(locked_at, 0) + lease_ms < ?"),
    insertApproval: p(insertSql("approvals", approvalColumns)),
    updateApproval: p(updateSql("approvals", approvalColumns, ["id"])),
    getApproval: p("SELECT * FROM approvals WHERE id = ?"),
    allApprovals: p("SELECT * FROM approvals ORDER BY created_at, rowid"),
    approvalsWithStatus: p("SELECT * FROM approvals WHERE status = ? ORDER BY created_at, rowid"),
    pendingApprovals: p("SELECT * FROM approvals WHERE execution_id = ? AND status = 'pending' ORDER BY created_at, rowid"),
    pendingApprovalForStep: p(
      "SELECT * FROM approvals WHERE execution_id = ? AND step_id = ? AND status = 'pending' ORDER BY created_at, rowid LIMIT 1",
    ),
    expiredApprovals: p("SELECT * FROM approvals WHERE status = 'pending' AND timeout_at <= ? ORDER BY created_at, rowid"),
    putAgent: p(insertSql("agents", agentColumns, " ON CONFLICT (id) DO UPDATE SET " + agentColumns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`).join(", "))),
    getAgent: p("SELECT * FROM agents WHERE id = ?"),
    listAgents: p("SELECT * FROM agents ORDER BY id"),
    deleteAgent: p("DELETE FROM agents WHERE id = ?"),
    insertApiKey: p(insertSql("api_keys", apiKeyColumns)),
    updateApiKey: p(updateSql("api_keys", apiKeyColumns, ["id"])),
    getApiKey: p("SELECT * FROM api_keys WHERE id = ?"),
    apiKeyByHash: p("SELECT * FROM api_keys WHERE token_hash = ?"),
    listApiKeys: p("SELECT * FROM api_keys ORDER BY rowid"),
    // ON CONFLICT … DO UPDATE keeps the row (and its rowid: registration order).
    putResource: p(insertSql("resources", resourceColumns, " ON CONFLICT (execution_id, key) DO UPDATE SET " + resourceColumns.filter((c) => c !== "execution_id" && c !== "key").map((c) => `${c} = excluded.${c}`).join(", "))),
    getResource: p("SELECT * FROM resources WHERE execution_id = ? AND key = ?"),
    listResources: p("SELECT * FROM resources WHERE execution_id = ? ORDER BY rowid"),
    lastCheckpointSeq: p("SELECT coalesce(max(seq), 0) FROM checkpoints WHERE execution_id = ? AND key = ?").pluck(),
    insertCheckpoint: p(insertSql("checkpoints", checkpointColumns)),
    updateCheckpoint: p(updateSql("checkpoints", checkpointColumns, ["execution_id", "key", "seq"])),
    allCheckpoints: p("SELECT * FROM checkpoints WHERE execution_id = ? ORDER BY rowid"),
    keyCheckpoints: p("SELECT * FROM checkpoints WHERE execution_id = ? AND key = ? ORDER BY rowid"),
  };
}
