import { parseRow, parseRows, type Row, SqliteConnection, stepKey } from "./sqlite-base.js";
import { TERMINAL } from "./sqlite-schema.js";
import type {
  DispatchRow,
  EventRow,
  ExecutionListQuery,
  ExecutionRow,
  StepKind,
  StepRow,
  StepStatus,
  Store,
} from "./types.js";

export type { SqliteStoreOptions } from "./sqlite-base.js";

/**
 * {@link Store} on SQLite (better-sqlite3, WAL). better-sqlite3 is synchronous, which is exactly
 * what the store contract needs: a request's reads and writes run in one transaction without
 * yielding to the event loop. Transactions are group-committed (group-commit.ts): each runs under
 * a SAVEPOINT of a batch that commits at the end of the event-loop turn. A kernel killed with
 * SIGKILL and restarted on the same file finds every acknowledged write, because nothing is
 * acknowledged before `whenDurable()` resolved (the HTTP core and the dispatcher await it).
 */
export class SqliteStore extends SqliteConnection implements Store {
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
    this.executionCache.set(row.id, row);
  }

  updateExecution(row: ExecutionRow): void {
    const r = this.q(
      "UPDATE executions SET status = ?, deadline_at = ?, updated_at = ?, row = ? WHERE id = ?",
    ).run(row.status, row.deadlineAt ?? null, row.updatedAt, JSON.stringify(row), row.id);
    if (r.changes === 0) throw new Error(`execution ${row.id} does not exist`);
    this.executionCache.set(row.id, row);
  }

  getExecution(id: string): ExecutionRow | undefined {
    const cached = this.executionCache.get(id);
    if (cached !== undefined) return cached;
    const row = parseRow<ExecutionRow>(
      this.q("SELECT row FROM executions WHERE id = ?").get(id) as Row | undefined,
    );
    if (row !== undefined) this.executionCache.set(id, row);
    return row;
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
      this.lastSeqCache.delete(id);
      this.executionCache.delete(id);
      // Its steps and dispatches are keyed otherwise; deletions are rare (retention), start over.
      this.stepCache.clear();
      this.dispatchCache.clear();
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
    this.lastSeqCache.set(executionId, seq);
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
    const cached = this.lastSeqCache.get(executionId);
    if (cached !== undefined) return cached;
    const r = this.q("SELECT MAX(seq) AS m FROM events WHERE execution_id = ?").get(executionId) as {
      m: number | null;
    };
    const seq = r.m ?? 0;
    this.lastSeqCache.set(executionId, seq);
    return seq;
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.q(
      "INSERT INTO steps (execution_id, step_id, kind, target, args_hash, status, row) VALUES (?,?,?,?,?,?,?)",
    ).run(row.executionId, row.stepId, row.kind, row.target, row.argsHash, row.status, JSON.stringify(row));
    this.stepCache.set(stepKey(row.executionId, row.stepId), row);
  }

  updateStep(row: StepRow): void {
    const r = this.q("UPDATE steps SET status = ?, row = ? WHERE execution_id = ? AND step_id = ?").run(
      row.status,
      JSON.stringify(row),
      row.executionId,
      row.stepId,
    );
    if (r.changes === 0) throw new Error(`step ${row.stepId} does not exist`);
    this.stepCache.set(stepKey(row.executionId, row.stepId), row);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    const key = stepKey(executionId, stepId);
    const cached = this.stepCache.get(key);
    if (cached !== undefined) return cached;
    const row = parseRow<StepRow>(
      this.q("SELECT row FROM steps WHERE execution_id = ? AND step_id = ?").get(executionId, stepId) as
        | Row
        | undefined,
    );
    if (row !== undefined) this.stepCache.set(key, row);
    return row;
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

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return parseRows(
      this.q(
        // INDEXED BY: without statistics the planner prefers the primary key (execution_id
        // prefix) for the ORDER BY, i.e. a scan of every step of the execution.
        `SELECT row FROM steps INDEXED BY steps_failed_call
         WHERE execution_id = ? AND kind = ? AND target = ? AND args_hash = ? AND status = 'failed'
         ORDER BY step_id`,
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
    this.dispatchCache.set(row.id, row);
  }

  updateDispatch(row: DispatchRow): void {
    const prev = this.dispatchCache.get(row.id);
    // A lease renewal (every accepted agent write) changes only `locked_at`: leaving the indexed
    // columns out of the SET list spares SQLite rewriting their index entries (a WAL frame each).
    const r =
      prev !== undefined &&
      prev.status === row.status &&
      prev.nextAttemptAt === row.nextAttemptAt &&
      prev.leaseMs === row.leaseMs
        ? this.q("UPDATE dispatches SET locked_at = ?, row = ? WHERE id = ?").run(
            row.lockedAt ?? null,
            JSON.stringify(row),
            row.id,
          )
        : this.q(
            "UPDATE dispatches SET status = ?, next_attempt_at = ?, locked_at = ?, lease_ms = ?, row = ? WHERE id = ?",
          ).run(
            row.status,
            row.nextAttemptAt,
            row.lockedAt ?? null,
            row.leaseMs,
            JSON.stringify(row),
            row.id,
          );
    if (r.changes === 0) throw new Error(`dispatch ${row.id} does not exist`);
    this.dispatchCache.set(row.id, row);
    // Counters of an exhausted dispatch are never read again (store contract).
    if (row.status === "exhausted") this.clearOccurrences(row.id);
  }

  getDispatch(id: string): DispatchRow | undefined {
    const cached = this.dispatchCache.get(id);
    if (cached !== undefined) return cached;
    const row = parseRow<DispatchRow>(
      this.q("SELECT row FROM dispatches WHERE id = ?").get(id) as Row | undefined,
    );
    if (row !== undefined) this.dispatchCache.set(id, row);
    return row;
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
}
