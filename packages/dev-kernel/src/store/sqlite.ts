import { SqliteAccess } from "./sqlite-access.js";
import type { SqliteStoreOptions } from "./sqlite-connection.js";
import { copyInto } from "./sqlite-format3.js";
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
export class SqliteStore extends SqliteAccess implements Store {
  constructor(path: string, options: SqliteStoreOptions = {}) {
    super(path, options);
    try {
      if (this.file.converted !== undefined) copyInto(this, this.file.converted);
    } catch (err) {
      throw this.file.abandon(err); // nothing of a conversion is committed
    }
    this.file.finishOpen();
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

  // --- executions -----------------------------------------------------------------------------

  insertExecution(row: ExecutionRow): void {
    this.put(this.executions, row.id, this.q.insertExecution, EXECUTIONS, row, undefined);
  }

  updateExecution(row: ExecutionRow): void {
    this.put(this.executions, row.id, this.q.updateExecution, EXECUTIONS, row, `execution ${row.id}`);
  }

  getExecution(id: string): ExecutionRow | undefined {
    return this.read(this.executions, id, this.q.getExecution, EXECUTIONS, id);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return this.one(this.q.executionByKey, EXECUTIONS, agentId, idempotencyKey);
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const [sql, args] = executionListSql(query);
    return this.all(this.q.cached(sql), EXECUTIONS, ...args);
  }

  countExecutions(): number {
    return this.q.countExecutions.pluck().get() as number;
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return this.all(this.q.sessionExecutions, EXECUTIONS, session);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return this.all(this.q.childExecutions, EXECUTIONS, parentId);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return this.all(this.q.pastDeadline, EXECUTIONS, now);
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return this.all(this.q.unsettledSubagents, EXECUTIONS);
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    return this.all(this.q.terminalBefore, EXECUTIONS, cutoff, limit);
  }

  deleteExecution(id: string): void {
    this.file.write(() => {
      for (const stmt of this.q.deleteExecution) stmt.run(id);
    });
    this.executions.set(id, null);
    this.lastSeqs.set(id, 0);
    this.steps.clear(); // keyed by step and dispatch: rare enough to drop them all
    this.dispatches.clear();
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    return this.file.write(() => {
      const seq = this.lastEventSeq(executionId) + 1;
      this.q.insertEvent.run(executionId, seq, type, payloadJson, occurredAt);
      this.lastSeqs.set(executionId, seq);
      return seq;
    });
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    return this.all(this.q.listEvents, EVENTS, executionId, afterSeq, limit);
  }

  lastEventSeq(executionId: string): number {
    let seq = this.lastSeqs.get(executionId);
    if (seq === undefined) {
      seq = this.q.lastEventSeq.get(executionId) as number;
      this.lastSeqs.set(executionId, seq);
    }
    return seq;
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.put(this.steps, `${row.executionId}\n${row.stepId}`, this.q.insertStep, STEPS, row, undefined);
  }

  updateStep(row: StepRow): void {
    const key = `${row.executionId}\n${row.stepId}`;
    this.put(this.steps, key, this.q.updateStep, STEPS, row, `step ${row.stepId}`);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.read(this.steps, `${executionId}\n${stepId}`, this.q.getStep, STEPS, executionId, stepId);
  }

  listSteps(executionId: string): StepRow[] {
    return this.all(this.q.listSteps, STEPS, executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.all(this.q.cached(stepsWithStatusSql(statuses.length)), STEPS, executionId, ...statuses);
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.all(this.q.failedForCall, STEPS, executionId, kind, target, argsHash);
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    return this.q.getOccurrence.get(dispatchId, kind, target, argsHash) as number | undefined;
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    this.file.write(() => this.q.setOccurrence.run(dispatchId, kind, target, argsHash, consumed));
  }

  clearOccurrences(dispatchId: string): void {
    this.file.write(() => this.q.clearOccurrences.run(dispatchId));
  }

  // --- dispatches -----------------------------------------------------------------------------

  insertDispatch(row: DispatchRow): void {
    this.put(this.dispatches, row.id, this.q.insertDispatch, DISPATCHES, row, undefined);
  }

  updateDispatch(row: DispatchRow): void {
    this.file.write(() => {
      this.put(this.dispatches, row.id, this.q.updateDispatch, DISPATCHES, row, `dispatch ${row.id}`);
      // No lease of an exhausted dispatch is ever live again, so nobody reads its counters.
      if (row.status === "exhausted") this.q.clearOccurrences.run(row.id);
    });
  }

  getDispatch(id: string): DispatchRow | undefined {
    return this.read(this.dispatches, id, this.q.getDispatch, DISPATCHES, id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return this.all(this.q.activeDispatches, DISPATCHES, executionId);
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    return this.all(this.q.dueDispatches, DISPATCHES, now, limit);
  }

  nextDispatchDueAt(): number | undefined {
    return (this.q.nextDue.get() as number | null) ?? undefined;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return this.all(this.q.expiredLeases, DISPATCHES, now);
  }

  // --- approvals ------------------------------------------------------------------------------

  insertApproval(row: ApprovalRow): void {
    this.file.write(() => this.q.insertApproval.run(toColumns(APPROVALS, row)));
  }

  updateApproval(row: ApprovalRow): void {
    this.update(this.q.updateApproval, toColumns(APPROVALS, row), `approval ${row.id}`);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return this.one(this.q.getApproval, APPROVALS, id);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return status === undefined
      ? this.all(this.q.allApprovals, APPROVALS)
      : this.all(this.q.approvalsWithStatus, APPROVALS, status);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.all(this.q.pendingApprovals, APPROVALS, executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.one(this.q.pendingApprovalForStep, APPROVALS, executionId, stepId);
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return this.all(this.q.expiredApprovals, APPROVALS, now);
  }

  // --- agents ---------------------------------------------------------------------------------

  putAgent(row: AgentRow): void {
    this.put(this.agents, row.id, this.q.putAgent, AGENTS, row, undefined);
  }

  getAgent(id: string): AgentRow | undefined {
    return this.read(this.agents, id, this.q.getAgent, AGENTS, id);
  }

  listAgents(): AgentRow[] {
    return this.all(this.q.listAgents, AGENTS);
  }

  deleteAgent(id: string): void {
    this.file.write(() => this.q.deleteAgent.run(id));
    this.agents.set(id, null);
  }

  // --- api keys -------------------------------------------------------------------------------

  insertApiKey(row: ApiKeyRow): void {
    this.file.write(() => this.q.insertApiKey.run(toColumns(API_KEYS, row)));
  }

  updateApiKey(row: ApiKeyRow): void {
    this.update(this.q.updateApiKey, toColumns(API_KEYS, row), `api key ${row.id}`);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return this.one(this.q.getApiKey, API_KEYS, id);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    return this.one(this.q.apiKeyByHash, API_KEYS, tokenHash);
  }

  listApiKeys(): ApiKeyRow[] {
    return this.all(this.q.listApiKeys, API_KEYS);
  }

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    this.file.write(() => this.q.putResource.run(toColumns(RESOURCES, row)));
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.one(this.q.getResource, RESOURCES, executionId, key);
  }

  listResources(executionId: string): ResourceRow[] {
    return this.all(this.q.listResources, RESOURCES, executionId);
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.file.write(() => {
      const seq = (this.q.lastCheckpointSeq.get(row.executionId, row.key) as number) + 1;
      this.q.insertCheckpoint.run(toColumns(CHECKPOINTS, { ...row, seq }));
      return seq;
    });
  }

  updateCheckpoint(row: CheckpointRow): void {
    this.update(this.q.updateCheckpoint, toColumns(CHECKPOINTS, row), `checkpoint ${row.key}#${row.seq}`);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return key === undefined
      ? this.all(this.q.allCheckpoints, CHECKPOINTS, executionId)
      : this.all(this.q.keyCheckpoints, CHECKPOINTS, executionId, key);
  }
}
