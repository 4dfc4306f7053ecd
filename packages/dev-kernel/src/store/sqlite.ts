import { ConfigurationError } from "@rebuno/protocol";
import { DurableMemory } from "./durable-memory.js";
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
   * page, about a second per GB: turn it off for very large stores whose disk you trust. Row
   * checksums and the seal are checked either way.
   */
  readonly quickCheck?: boolean;
  /** Path of a `better_sqlite3.node` built for another Node ABI (passed to better-sqlite3). */
  readonly nativeBinding?: string;
}

/**
 * {@link Store} on one SQLite file: the memory store plus a durable redo log (durable-memory.ts,
 * sqlite-log.ts). Every read is the memory store's and never touches SQLite; every write is
 * applied to memory and recorded as an op, and the ops of one event-loop turn are appended to the
 * file together. Nothing may be acknowledged before `whenDurable()` resolved. The file is locked
 * for as long as the store is open (a second store on it fails with `StoreLockedError`).
 */
export class SqliteStore implements Store {
  private readonly state: DurableMemory;

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
    this.state = new DurableMemory(path, {
      synchronous,
      quickCheck: options.quickCheck ?? true,
      nativeBinding: options.nativeBinding,
    });
  }

  transaction<T>(fn: () => T): T {
    return this.state.transaction(fn);
  }

  whenDurable(): Promise<void> {
    return this.state.whenDurable();
  }

  /** Write what is pending, compact, and release the file. Throws if writing failed. Idempotent. */
  close(): void {
    this.state.close();
  }

  // --- executions -----------------------------------------------------------------------------

  insertExecution(row: ExecutionRow): void {
    this.state.apply(["insertExecution", row]);
  }

  updateExecution(row: ExecutionRow): void {
    this.state.apply(["updateExecution", row]);
  }

  getExecution(id: string): ExecutionRow | undefined {
    return this.state.memory.getExecution(id);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return this.state.memory.findExecutionByIdempotencyKey(agentId, idempotencyKey);
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    return this.state.memory.listExecutions(query);
  }

  countExecutions(): number {
    return this.state.memory.countExecutions();
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return this.state.memory.listSessionExecutions(session);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return this.state.memory.listChildExecutions(parentId);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return this.state.memory.listExecutionsPastDeadline(now);
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return this.state.memory.listUnsettledSubagents();
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    return this.state.memory.listTerminalExecutionsBefore(cutoff, limit);
  }

  deleteExecution(id: string): void {
    this.state.apply(["deleteExecution", id]);
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    return this.state.apply(["appendEvent", executionId, type, payloadJson, occurredAt])!;
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    return this.state.memory.listEvents(executionId, afterSeq, limit);
  }

  lastEventSeq(executionId: string): number {
    return this.state.memory.lastEventSeq(executionId);
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.state.apply(["insertStep", row]);
  }

  updateStep(row: StepRow): void {
    this.state.apply(["updateStep", row]);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.state.memory.getStep(executionId, stepId);
  }

  listSteps(executionId: string): StepRow[] {
    return this.state.memory.listSteps(executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.state.memory.listStepsWithStatus(executionId, statuses);
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.state.memory.listFailedStepsForCall(executionId, kind, target, argsHash);
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    return this.state.memory.getOccurrence(dispatchId, kind, target, argsHash);
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    this.state.apply(["setOccurrence", dispatchId, kind, target, argsHash, consumed]);
  }

  clearOccurrences(dispatchId: string): void {
    this.state.apply(["clearOccurrences", dispatchId]);
  }

  // --- dispatches -----------------------------------------------------------------------------

  insertDispatch(row: DispatchRow): void {
    this.state.apply(["insertDispatch", row]);
  }

  updateDispatch(row: DispatchRow): void {
    this.state.apply(["updateDispatch", row]);
  }

  getDispatch(id: string): DispatchRow | undefined {
    return this.state.memory.getDispatch(id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return this.state.memory.listActiveDispatches(executionId);
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    return this.state.memory.listDueDispatches(now, limit);
  }

  nextDispatchDueAt(): number | undefined {
    return this.state.memory.nextDispatchDueAt();
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return this.state.memory.listExpiredLeases(now);
  }

  // --- approvals ------------------------------------------------------------------------------

  insertApproval(row: ApprovalRow): void {
    this.state.apply(["insertApproval", row]);
  }

  updateApproval(row: ApprovalRow): void {
    this.state.apply(["updateApproval", row]);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return this.state.memory.getApproval(id);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return this.state.memory.listApprovals(status);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.state.memory.listPendingApprovals(executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.state.memory.findPendingApprovalForStep(executionId, stepId);
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return this.state.memory.listExpiredApprovals(now);
  }

  // --- agents ---------------------------------------------------------------------------------

  putAgent(row: AgentRow): void {
    this.state.apply(["putAgent", row]);
  }

  getAgent(id: string): AgentRow | undefined {
    return this.state.memory.getAgent(id);
  }

  listAgents(): AgentRow[] {
    return this.state.memory.listAgents();
  }

  deleteAgent(id: string): void {
    this.state.apply(["deleteAgent", id]);
  }

  // --- api keys -------------------------------------------------------------------------------

  insertApiKey(row: ApiKeyRow): void {
    this.state.apply(["insertApiKey", row]);
  }

  updateApiKey(row: ApiKeyRow): void {
    this.state.apply(["updateApiKey", row]);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return this.state.memory.getApiKey(id);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    return this.state.memory.findApiKeyByTokenHash(tokenHash);
  }

  listApiKeys(): ApiKeyRow[] {
    return this.state.memory.listApiKeys();
  }

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    this.state.apply(["putResource", row]);
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.state.memory.getResource(executionId, key);
  }

  listResources(executionId: string): ResourceRow[] {
    return this.state.memory.listResources(executionId);
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.state.apply(["insertCheckpoint", row])!;
  }

  updateCheckpoint(row: CheckpointRow): void {
    this.state.apply(["updateCheckpoint", row]);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return this.state.memory.listCheckpoints(executionId, key);
  }
}
