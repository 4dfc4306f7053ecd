import Database from "better-sqlite3";
import { GroupCommit } from "./group-commit.js";
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
   * `NORMAL` (default) survives a process crash (SIGKILL) without losing a committed transaction:
   * in WAL mode the log is written before commit returns, only an OS crash can lose the tail.
   * `FULL` also fsyncs on every commit, for power-loss durability.
   */
  readonly synchronous?: "NORMAL" | "FULL";
  /** Path of a `better_sqlite3.node` built for another Node ABI (passed to better-sqlite3). */
  readonly nativeBinding?: string;
}

const TERMINAL = "('completed','failed','cancelled')";

// Each table keeps the whole row as JSON (`row`) plus the columns its queries filter or sort on.
// Rows are small plain values, so one JSON column is simpler than mapping every field to a column,
// and payload texts inside it (`*Json` fields) stay byte-exact because they are JSON strings.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS executions (
  id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, status TEXT NOT NULL, session TEXT,
  idempotency_key TEXT, parent_id TEXT, parent_step_id TEXT, deadline_at INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, row TEXT NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS executions_idem ON executions(agent_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_session ON executions(session, created_at, id) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_parent ON executions(parent_id, created_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_deadline ON executions(deadline_at) WHERE deadline_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS events (
  execution_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
  occurred_at INTEGER NOT NULL, PRIMARY KEY (execution_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS steps (
  execution_id TEXT NOT NULL, step_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  args_hash TEXT NOT NULL, status TEXT NOT NULL, row TEXT NOT NULL, PRIMARY KEY (execution_id, step_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS steps_call ON steps(execution_id, kind, target, args_hash);
CREATE TABLE IF NOT EXISTS occurrences (
  dispatch_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL, args_hash TEXT NOT NULL,
  consumed INTEGER NOT NULL, PRIMARY KEY (dispatch_id, kind, target, args_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dispatches (
  id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, status TEXT NOT NULL, next_attempt_at INTEGER NOT NULL,
  locked_at INTEGER, lease_ms INTEGER NOT NULL, created_at INTEGER NOT NULL, row TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dispatches_execution ON dispatches(execution_id, created_at, id);
CREATE INDEX IF NOT EXISTS dispatches_due ON dispatches(next_attempt_at) WHERE status IN ('pending','failed');
CREATE INDEX IF NOT EXISTS dispatches_leases ON dispatches(status) WHERE status = 'in_flight';
CREATE TABLE IF NOT EXISTS approvals (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL, status TEXT NOT NULL, timeout_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_execution ON approvals(execution_id, status);
CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, row TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_keys (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, token_hash TEXT NOT NULL UNIQUE, row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resources (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, key TEXT NOT NULL, row TEXT NOT NULL,
  UNIQUE (execution_id, key)
);
CREATE TABLE IF NOT EXISTS checkpoints (
  ord INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
  row TEXT NOT NULL, UNIQUE (execution_id, key, seq)
);
`;

type Row = { row: string };
const parseRow = <T>(r: Row | undefined): T | undefined =>
  r === undefined ? undefined : (JSON.parse(r.row) as T);
const parseRows = <T>(rs: Row[]): T[] => rs.map((r) => JSON.parse(r.row) as T);

/**
 * {@link Store} on SQLite (better-sqlite3, WAL). better-sqlite3 is synchronous, which is exactly
 * what the store contract needs: a request's reads and writes run in one transaction without
 * yielding to the event loop. Transactions are group-committed (group-commit.ts): each runs under
 * a SAVEPOINT of a batch that commits at the end of the event-loop turn. A kernel killed with
 * SIGKILL and restarted on the same file finds every acknowledged write, because nothing is
 * acknowledged before `whenDurable()` resolved (the HTTP core and the dispatcher await it).
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly stmts = new Map<string, Database.Statement>();
  private readonly batches: GroupCommit;
  private closed = false;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.db = new Database(
      path,
      options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding },
    );
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${options.synchronous ?? "NORMAL"}`);
    this.db.pragma("foreign_keys = OFF");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    const db = this.db;
    this.batches = new GroupCommit({
      exec: (sql) => this.q(sql).run(),
      get inTransaction() {
        return db.inTransaction;
      },
    });
  }

  /** Prepared statements are cached by their SQL text: preparing costs far more than running. */
  private q(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (s === undefined) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  transaction<T>(fn: () => T): T {
    return this.batches.transaction(fn);
  }

  whenDurable(): Promise<void> {
    return this.batches.whenDurable();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Answers waiting on the open batch are released by this commit (or fail with it).
    this.batches.commit();
    this.db.close();
  }

  // --- executions -----------------------------------------------------------------------------

  insertExecution(row: ExecutionRow): void {
    this.q(
      `INSERT INTO executions (id, agent_id, status, session, idempotency_key, parent_id, parent_step_id,
        deadline_at, created_at, updated_at, row) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    ).run(
      row.id,
      row.agentId,
      row.status,
      row.session ?? null,
      row.idempotencyKey ?? null,
      row.spawnedBy?.executionId ?? null,
      row.spawnedBy?.stepId ?? null,
      row.deadlineAt ?? null,
      row.createdAt,
      row.updatedAt,
      JSON.stringify(row),
    );
  }

  updateExecution(row: ExecutionRow): void {
    const r = this.q(
      "UPDATE executions SET status = ?, deadline_at = ?, updated_at = ?, row = ? WHERE id = ?",
    ).run(row.status, row.deadlineAt ?? null, row.updatedAt, JSON.stringify(row), row.id);
    if (r.changes === 0) throw new Error(`execution ${row.id} does not exist`);
  }

  getExecution(id: string): ExecutionRow | undefined {
    return parseRow(this.q("SELECT row FROM executions WHERE id = ?").get(id) as Row | undefined);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return parseRow(
      this.q("SELECT row FROM executions WHERE agent_id = ? AND idempotency_key = ?").get(
        agentId,
        idempotencyKey,
      ) as Row | undefined,
    );
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.agentId !== undefined) where.push("agent_id = ?") && args.push(query.agentId);
    if (query.session !== undefined) where.push("session = ?") && args.push(query.session);
    if (query.status !== undefined) where.push("status = ?") && args.push(query.status);
    if (query.beforeId !== undefined) where.push("id < ?") && args.push(query.beforeId);
    const sql = `SELECT row FROM executions ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return parseRows(this.q(sql).all(...args, query.limit) as Row[]);
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return parseRows(
      this.q("SELECT row FROM executions WHERE session = ? ORDER BY created_at, id").all(session) as Row[],
    );
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return parseRows(
      this.q("SELECT row FROM executions WHERE parent_id = ? ORDER BY created_at, id").all(parentId) as Row[],
    );
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return parseRows(
      this.q(`SELECT row FROM executions WHERE deadline_at <= ? AND status NOT IN ${TERMINAL}`).all(
        now,
      ) as Row[],
    );
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return parseRows(
      this.q(
        `SELECT c.row FROM executions c JOIN executions p ON p.id = c.parent_id
         LEFT JOIN steps s ON s.execution_id = p.id AND s.step_id = c.parent_step_id
         WHERE (c.status IN ${TERMINAL} AND p.status NOT IN ${TERMINAL} AND s.status = 'executing')
            OR (c.status NOT IN ${TERMINAL} AND p.status IN ${TERMINAL})
         ORDER BY c.created_at, c.id`,
      ).all() as Row[],
    );
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    return parseRows(
      this.q(
        `SELECT row FROM executions WHERE status IN ${TERMINAL} AND updated_at < ? ORDER BY updated_at LIMIT ?`,
      ).all(cutoff, limit) as Row[],
    );
  }

  deleteExecution(id: string): void {
    this.transaction(() => {
      this.q(
        "DELETE FROM occurrences WHERE dispatch_id IN (SELECT id FROM dispatches WHERE execution_id = ?)",
      ).run(id);
      for (const table of ["events", "steps", "dispatches", "approvals", "resources", "checkpoints"]) {
        this.q(`DELETE FROM ${table} WHERE execution_id = ?`).run(id);
      }
      this.q("DELETE FROM executions WHERE id = ?").run(id);
    });
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    const seq = this.lastEventSeq(executionId) + 1;
    this.q("INSERT INTO events (execution_id, seq, type, payload, occurred_at) VALUES (?,?,?,?,?)").run(
      executionId,
      seq,
      type,
      payloadJson,
      occurredAt,
    );
    return seq;
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    const rows = this.q(
      "SELECT seq, type, payload, occurred_at FROM events WHERE execution_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    ).all(executionId, afterSeq, limit) as {
      seq: number;
      type: string;
      payload: string;
      occurred_at: number;
    }[];
    return rows.map((r) => ({
      executionId,
      seq: r.seq,
      type: r.type,
      payloadJson: r.payload,
      occurredAt: r.occurred_at,
    }));
  }

  lastEventSeq(executionId: string): number {
    const r = this.q("SELECT MAX(seq) AS m FROM events WHERE execution_id = ?").get(executionId) as {
      m: number | null;
    };
    return r.m ?? 0;
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.q(
      "INSERT INTO steps (execution_id, step_id, kind, target, args_hash, status, row) VALUES (?,?,?,?,?,?,?)",
    ).run(row.executionId, row.stepId, row.kind, row.target, row.argsHash, row.status, JSON.stringify(row));
  }

  updateStep(row: StepRow): void {
    const r = this.q("UPDATE steps SET status = ?, row = ? WHERE execution_id = ? AND step_id = ?").run(
      row.status,
      JSON.stringify(row),
      row.executionId,
      row.stepId,
    );
    if (r.changes === 0) throw new Error(`step ${row.stepId} does not exist`);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return parseRow(
      this.q("SELECT row FROM steps WHERE execution_id = ? AND step_id = ?").get(executionId, stepId) as
        | Row
        | undefined,
    );
  }

  listSteps(executionId: string): StepRow[] {
    return parseRows(
      this.q("SELECT row FROM steps WHERE execution_id = ? ORDER BY step_id").all(executionId) as Row[],
    );
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    if (statuses.length === 0) return [];
    const marks = statuses.map(() => "?").join(",");
    return parseRows(
      this.q(`SELECT row FROM steps WHERE execution_id = ? AND status IN (${marks}) ORDER BY step_id`).all(
        executionId,
        ...statuses,
      ) as Row[],
    );
  }

  listStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return parseRows(
      this.q(
        "SELECT row FROM steps WHERE execution_id = ? AND kind = ? AND target = ? AND args_hash = ? ORDER BY step_id",
      ).all(executionId, kind, target, argsHash) as Row[],
    );
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    const r = this.q(
      "SELECT consumed FROM occurrences WHERE dispatch_id = ? AND kind = ? AND target = ? AND args_hash = ?",
    ).get(dispatchId, kind, target, argsHash) as { consumed: number } | undefined;
    return r?.consumed;
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    this.q(
      `INSERT INTO occurrences (dispatch_id, kind, target, args_hash, consumed) VALUES (?,?,?,?,?)
       ON CONFLICT (dispatch_id, kind, target, args_hash) DO UPDATE SET consumed = excluded.consumed`,
    ).run(dispatchId, kind, target, argsHash, consumed);
  }

  clearOccurrences(dispatchId: string): void {
    this.q("DELETE FROM occurrences WHERE dispatch_id = ?").run(dispatchId);
  }

  // --- dispatches -----------------------------------------------------------------------------

  insertDispatch(row: DispatchRow): void {
    this.q(
      `INSERT INTO dispatches (id, execution_id, status, next_attempt_at, locked_at, lease_ms, created_at, row)
       VALUES (?,?,?,?,?,?,?,?)`,
    ).run(
      row.id,
      row.executionId,
      row.status,
      row.nextAttemptAt,
      row.lockedAt ?? null,
      row.leaseMs,
      row.createdAt,
      JSON.stringify(row),
    );
  }

  updateDispatch(row: DispatchRow): void {
    const r = this.q(
      "UPDATE dispatches SET status = ?, next_attempt_at = ?, locked_at = ?, lease_ms = ?, row = ? WHERE id = ?",
    ).run(row.status, row.nextAttemptAt, row.lockedAt ?? null, row.leaseMs, JSON.stringify(row), row.id);
    if (r.changes === 0) throw new Error(`dispatch ${row.id} does not exist`);
  }

  getDispatch(id: string): DispatchRow | undefined {
    return parseRow(this.q("SELECT row FROM dispatches WHERE id = ?").get(id) as Row | undefined);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return parseRows(
      this.q(
        "SELECT row FROM dispatches WHERE execution_id = ? AND status != 'exhausted' ORDER BY created_at, id",
      ).all(executionId) as Row[],
    );
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    return parseRows(
      this.q(
        `SELECT row FROM dispatches WHERE status IN ('pending','failed') AND next_attempt_at <= ?
         ORDER BY next_attempt_at, id LIMIT ?`,
      ).all(now, limit) as Row[],
    );
  }

  nextDispatchDueAt(): number | undefined {
    const r = this.q(
      "SELECT MIN(next_attempt_at) AS m FROM dispatches WHERE status IN ('pending','failed')",
    ).get() as {
      m: number | null;
    };
    return r.m ?? undefined;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return parseRows(
      this.q(
        "SELECT row FROM dispatches WHERE status = 'in_flight' AND COALESCE(locked_at, 0) + lease_ms < ?",
      ).all(now) as Row[],
    );
  }

  // --- approvals ------------------------------------------------------------------------------

  insertApproval(row: ApprovalRow): void {
    this.q(
      "INSERT INTO approvals (id, execution_id, step_id, status, timeout_at, row) VALUES (?,?,?,?,?,?)",
    ).run(row.id, row.executionId, row.stepId, row.status, row.timeoutAt, JSON.stringify(row));
  }

  updateApproval(row: ApprovalRow): void {
    const r = this.q("UPDATE approvals SET status = ?, timeout_at = ?, row = ? WHERE id = ?").run(
      row.status,
      row.timeoutAt,
      JSON.stringify(row),
      row.id,
    );
    if (r.changes === 0) throw new Error(`approval ${row.id} does not exist`);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return parseRow(this.q("SELECT row FROM approvals WHERE id = ?").get(id) as Row | undefined);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    if (status === undefined)
      return parseRows(this.q("SELECT row FROM approvals ORDER BY ord").all() as Row[]);
    return parseRows(this.q("SELECT row FROM approvals WHERE status = ? ORDER BY ord").all(status) as Row[]);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return parseRows(
      this.q("SELECT row FROM approvals WHERE execution_id = ? AND status = 'pending' ORDER BY ord").all(
        executionId,
      ) as Row[],
    );
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return parseRow(
      this.q(
        "SELECT row FROM approvals WHERE execution_id = ? AND step_id = ? AND status = 'pending' ORDER BY ord LIMIT 1",
      ).get(executionId, stepId) as Row | undefined,
    );
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return parseRows(
      this.q("SELECT row FROM approvals WHERE status = 'pending' AND timeout_at <= ? ORDER BY ord").all(
        now,
      ) as Row[],
    );
  }

  // --- agents ---------------------------------------------------------------------------------

  putAgent(row: AgentRow): void {
    this.q(
      "INSERT INTO agents (id, row) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET row = excluded.row",
    ).run(row.id, JSON.stringify(row));
  }

  getAgent(id: string): AgentRow | undefined {
    return parseRow(this.q("SELECT row FROM agents WHERE id = ?").get(id) as Row | undefined);
  }

  listAgents(): AgentRow[] {
    return parseRows(this.q("SELECT row FROM agents ORDER BY id").all() as Row[]);
  }

  deleteAgent(id: string): void {
    this.q("DELETE FROM agents WHERE id = ?").run(id);
  }

  // --- api keys -------------------------------------------------------------------------------

  insertApiKey(row: ApiKeyRow): void {
    this.q("INSERT INTO api_keys (id, token_hash, row) VALUES (?,?,?)").run(
      row.id,
      row.tokenHash,
      JSON.stringify(row),
    );
  }

  updateApiKey(row: ApiKeyRow): void {
    const r = this.q("UPDATE api_keys SET token_hash = ?, row = ? WHERE id = ?").run(
      row.tokenHash,
      JSON.stringify(row),
      row.id,
    );
    if (r.changes === 0) throw new Error(`api key ${row.id} does not exist`);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return parseRow(this.q("SELECT row FROM api_keys WHERE id = ?").get(id) as Row | undefined);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    return parseRow(
      this.q("SELECT row FROM api_keys WHERE token_hash = ?").get(tokenHash) as Row | undefined,
    );
  }

  listApiKeys(): ApiKeyRow[] {
    return parseRows(this.q("SELECT row FROM api_keys ORDER BY ord").all() as Row[]);
  }

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    // ON CONFLICT keeps the row's `ord`, so registration order survives updates.
    this.q(
      `INSERT INTO resources (execution_id, key, row) VALUES (?,?,?)
       ON CONFLICT (execution_id, key) DO UPDATE SET row = excluded.row`,
    ).run(row.executionId, row.key, JSON.stringify(row));
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return parseRow(
      this.q("SELECT row FROM resources WHERE execution_id = ? AND key = ?").get(executionId, key) as
        | Row
        | undefined,
    );
  }

  listResources(executionId: string): ResourceRow[] {
    return parseRows(
      this.q("SELECT row FROM resources WHERE execution_id = ? ORDER BY ord").all(executionId) as Row[],
    );
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    const r = this.q("SELECT MAX(seq) AS m FROM checkpoints WHERE execution_id = ? AND key = ?").get(
      row.executionId,
      row.key,
    ) as { m: number | null };
    const seq = (r.m ?? 0) + 1;
    this.q("INSERT INTO checkpoints (execution_id, key, seq, row) VALUES (?,?,?,?)").run(
      row.executionId,
      row.key,
      seq,
      JSON.stringify({ ...row, seq }),
    );
    return seq;
  }

  updateCheckpoint(row: CheckpointRow): void {
    const r = this.q("UPDATE checkpoints SET row = ? WHERE execution_id = ? AND key = ? AND seq = ?").run(
      JSON.stringify(row),
      row.executionId,
      row.key,
      row.seq,
    );
    if (r.changes === 0) throw new Error(`checkpoint ${row.key}#${row.seq} does not exist`);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    if (key === undefined) {
      return parseRows(
        this.q("SELECT row FROM checkpoints WHERE execution_id = ? ORDER BY ord").all(executionId) as Row[],
      );
    }
    return parseRows(
      this.q("SELECT row FROM checkpoints WHERE execution_id = ? AND key = ? ORDER BY ord").all(
        executionId,
        key,
      ) as Row[],
    );
  }
}
