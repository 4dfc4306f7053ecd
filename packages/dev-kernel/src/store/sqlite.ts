import { SqliteTables } from "./sqlite-access.js";
import { copyInto } from "./sqlite-format3.js";
import type { SqliteStoreOptions } from "./sqlite-options.js";
import {
  AGENTS,
  API_KEYS,
  APPROVALS,
  CHECKPOINTS,
  DISPATCHES,
  EVENTS,
  EXECUTIONS,
  RESOURCES,
  STEPS,
  toColumns,
} from "./sqlite-rows.js";
import { executionListSql, stepsWithStatusSql } from "./sqlite-statements.js";
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

export type { SqliteStoreOptions };

/**
 * {@link Store} on one SQLite file, in ordinary tables (sqlite-schema.ts) that `sqlite3` and any
 * SQL tool can read. Every write is a statement on those tables; every read an indexed query.
 * Memory holds SQLite's page cache and two bounded caches, nothing per stored execution. Transactions and group commit are the
 * connection's (sqlite-connection.ts): nothing may be acknowledged before `whenDurable()` resolved.
 * The file is locked for as long as the store is open (a second store on it fails with
 * `StoreLockedError`).
 */
export class SqliteStore implements Store {
  /** The connection, statements and caches (sqlite-access.ts). */
  private readonly t: SqliteTables;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.t = new SqliteTables(path, options);
    try {
      if (this.t.file.converted !== undefined) copyInto(this, this.t.file.converted);
    } catch (err) {
      throw this.t.file.abandon(err); // nothing of a conversion is committed
    }
    this.t.file.finishOpen();
  }

  transaction<T>(fn: () => T): T {
    return this.t.file.transaction(fn);
  }

  whenDurable(): Promise<void> {
    return this.t.file.whenDurable();
  }

  /** Commit what is pending and release the file. Throws if committing failed. Idempotent. */
  close(): void {
    this.t.file.close();
  }

  // --- executions -----------------------------------------------------------------------------

  insertExecution(row: ExecutionRow): void {
    this.t.put(this.t.executions, row.id, this.t.q.insertExecution, EXECUTIONS, row, undefined);
  }

  updateExecution(row: ExecutionRow): void {
    this.t.put(this.t.executions, row.id, this.t.q.updateExecution, EXECUTIONS, row, `execution ${row.id}`);
  }

  getExecution(id: string): ExecutionRow | undefined {
    return this.t.read(this.t.executions, id, this.t.q.getExecution, EXECUTIONS, id);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return this.t.one(this.t.q.executionByKey, EXECUTIONS, agentId, idempotencyKey);
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const [sql, args] = executionListSql(query);
    return this.t.all(this.t.q.cached(sql), EXECUTIONS, ...args);
  }

  countExecutions(): number {
    return this.t.q.countExecutions.pluck().get() as number;
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return this.t.all(this.t.q.sessionExecutions, EXECUTIONS, session);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return this.t.all(this.t.q.childExecutions, EXECUTIONS, parentId);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return this.t.all(this.t.q.pastDeadline, EXECUTIONS, now);
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return this.t.all(this.t.q.unsettledSubagents, EXECUTIONS);
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    return this.t.all(this.t.q.terminalBefore, EXECUTIONS, cutoff, limit);
  }

  deleteExecution(id: string): void {
    this.t.file.write(() => {
      for (const stmt of this.t.q.deleteExecution) stmt.run(id);
    });
    this.t.executions.set(id, null);
    this.t.lastSeqs.set(id, 0);
    this.t.steps.clear(); // keyed by step and dispatch: rare enough to drop them all
    this.t.dispatches.clear();
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    return this.t.file.write(() => {
      const seq = this.lastEventSeq(executionId) + 1;
      this.t.q.insertEvent.run(executionId, seq, type, payloadJson, occurredAt);
      this.t.lastSeqs.set(executionId, seq);
      return seq;
    });
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    return this.t.all(this.t.q.listEvents, EVENTS, executionId, afterSeq, limit);
  }

  lastEventSeq(executionId: string): number {
    let seq = this.t.lastSeqs.get(executionId);
    if (seq === undefined) {
      seq = this.t.q.lastEventSeq.get(executionId) as number;
      this.t.lastSeqs.set(executionId, seq);
    }
    return seq;
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.t.put(this.t.steps, `${row.executionId}\n${row.stepId}`, this.t.q.insertStep, STEPS, row, undefined);
  }

  updateStep(row: StepRow): void {
    const key = `${row.executionId}\n${row.stepId}`;
    this.t.put(this.t.steps, key, this.t.q.updateStep, STEPS, row, `step ${row.stepId}`);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.t.read(
      this.t.steps,
      `${executionId}\n${stepId}`,
      this.t.q.getStep,
      STEPS,
      executionId,
      stepId,
    );
  }

  listSteps(executionId: string): StepRow[] {
    return this.t.all(this.t.q.listSteps, STEPS, executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.t.all(this.t.q.cached(stepsWithStatusSql(statuses.length)), STEPS, executionId, ...statuses);
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.t.all(this.t.q.failedForCall, STEPS, executionId, kind, target, argsHash);
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    return this.t.q.getOccurrence.get(dispatchId, kind, target, argsHash) as number | undefined;
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    this.t.file.write(() => this.t.q.setOccurrence.run(dispatchId, kind, target, argsHash, consumed));
  }

  clearOccurrences(dispatchId: string): void {
    this.t.file.write(() => this.t.q.clearOccurrences.run(dispatchId));
  }

  // --- dispatches -----------------------------------------------------------------------------

  insertDispatch(row: DispatchRow): void {
    this.t.put(this.t.dispatches, row.id, this.t.q.insertDispatch, DISPATCHES, row, undefined);
  }

  updateDispatch(row: DispatchRow): void {
    this.t.file.write(() => {
      this.t.put(this.t.dispatches, row.id, this.t.q.updateDispatch, DISPATCHES, row, `dispatch ${row.id}`);
      // No lease of an exhausted dispatch is ever live again, so nobody reads its counters.
      if (row.status === "exhausted") this.t.q.clearOccurrences.run(row.id);
    });
  }

  getDispatch(id: string): DispatchRow | undefined {
    return this.t.read(this.t.dispatches, id, this.t.q.getDispatch, DISPATCHES, id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return this.t.all(this.t.q.activeDispatches, DISPATCHES, executionId);
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    return this.t.all(this.t.q.dueDispatches, DISPATCHES, now, limit);
  }

  nextDispatchDueAt(): number | undefined {
    return (this.t.q.nextDue.get() as number | null) ?? undefined;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return this.t.all(this.t.q.expiredLeases, DISPATCHES, now);
  }

  // --- approvals ------------------------------------------------------------------------------

  insertApproval(row: ApprovalRow): void {
    this.t.file.write(() => this.t.q.insertApproval.run(toColumns(APPROVALS, row)));
  }

  updateApproval(row: ApprovalRow): void {
    this.t.update(this.t.q.updateApproval, toColumns(APPROVALS, row), `approval ${row.id}`);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return this.t.one(this.t.q.getApproval, APPROVALS, id);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return status === undefined
      ? this.t.all(this.t.q.allApprovals, APPROVALS)
      : this.t.all(this.t.q.approvalsWithStatus, APPROVALS, status);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.t.all(this.t.q.pendingApprovals, APPROVALS, executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.t.one(this.t.q.pendingApprovalForStep, APPROVALS, executionId, stepId);
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return this.t.all(this.t.q.expiredApprovals, APPROVALS, now);
  }

  // --- agents ---------------------------------------------------------------------------------

  putAgent(row: AgentRow): void {
    this.t.put(this.t.agents, row.id, this.t.q.putAgent, AGENTS, row, undefined);
  }

  getAgent(id: string): AgentRow | undefined {
    return this.t.read(this.t.agents, id, this.t.q.getAgent, AGENTS, id);
  }

  listAgents(): AgentRow[] {
    return this.t.all(this.t.q.listAgents, AGENTS);
  }

  deleteAgent(id: string): void {
    this.t.file.write(() => this.t.q.deleteAgent.run(id));
    this.t.agents.set(id, null);
  }

  // --- api keys -------------------------------------------------------------------------------

  insertApiKey(row: ApiKeyRow): void {
    this.t.file.write(() => this.t.q.insertApiKey.run(toColumns(API_KEYS, row)));
  }

  updateApiKey(row: ApiKeyRow): void {
    this.t.update(this.t.q.updateApiKey, toColumns(API_KEYS, row), `api key ${row.id}`);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return this.t.one(this.t.q.getApiKey, API_KEYS, id);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    return this.t.one(this.t.q.apiKeyByHash, API_KEYS, tokenHash);
  }

  listApiKeys(): ApiKeyRow[] {
    return this.t.all(this.t.q.listApiKeys, API_KEYS);
  }

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    this.t.file.write(() => this.t.q.putResource.run(toColumns(RESOURCES, row)));
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.t.one(this.t.q.getResource, RESOURCES, executionId, key);
  }

  listResources(executionId: string): ResourceRow[] {
    return this.t.all(this.t.q.listResources, RESOURCES, executionId);
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.t.file.write(() => {
      const seq = (this.t.q.lastCheckpointSeq.get(row.executionId, row.key) as number) + 1;
      this.t.q.insertCheckpoint.run(toColumns(CHECKPOINTS, { ...row, seq }));
      return seq;
    });
  }

  updateCheckpoint(row: CheckpointRow): void {
    this.t.update(this.t.q.updateCheckpoint, toColumns(CHECKPOINTS, row), `checkpoint ${row.key}#${row.seq}`);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return key === undefined
      ? this.t.all(this.t.q.allCheckpoints, CHECKPOINTS, executionId)
      : this.t.all(this.t.q.keyCheckpoints, CHECKPOINTS, executionId, key);
  }
}
