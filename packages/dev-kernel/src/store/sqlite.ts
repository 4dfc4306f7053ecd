import { ConfigurationError } from "@rebuno/protocol";
import { DurableMemory } from "./durable-memory.js";
import type { MemoryStore } from "./memory.js";
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
  /**
   * Milliseconds without a write after which a settled execution (terminal, no dispatch that can
   * run, no pending approval, no running parent or child) leaves memory for the file's cold tables
   * (default 1000). Reads find it there; a later write brings it back. `Infinity` keeps every
   * retained execution in memory, as the memory store does.
   */
  readonly coldAfterMs?: number;
}

/** Default of {@link SqliteStoreOptions.coldAfterMs}. */
export const DEFAULT_COLD_AFTER_MS = 1000;

function byCreation(a: ExecutionRow, b: ExecutionRow): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * {@link Store} on one SQLite file: the memory store plus a durable redo log (durable-memory.ts,
 * sqlite-log.ts), with settled executions moved out of memory into the file's cold tables
 * (cold-tier.ts). Reads of executions in memory are the memory store's and never touch SQLite;
 * reads of cold ones, and listings, merge in the cold tables. Every write is applied to memory
 * (bringing a cold execution back first) and recorded as an op, and the ops of one event-loop turn
 * are appended to the file together. Nothing may be acknowledged before `whenDurable()` resolved.
 * The file is locked for as long as the store is open (a second store on it fails with
 * `StoreLockedError`).
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
    const coldAfterMs = options.coldAfterMs ?? DEFAULT_COLD_AFTER_MS;
    if (typeof coldAfterMs !== "number" || Number.isNaN(coldAfterMs) || coldAfterMs < 0) {
      throw new ConfigurationError(
        `SqliteStore: coldAfterMs must be a number ≥ 0 (or Infinity), got ${JSON.stringify(coldAfterMs)}`,
      );
    }
    this.state = new DurableMemory(path, {
      synchronous,
      quickCheck: options.quickCheck ?? true,
      nativeBinding: options.nativeBinding,
      coldAfterMs,
    });
  }

  /**
   * Move every settled execution to the cold tables now, without waiting for its quiet period
   * (tests, benchmarks, or before a long idle time); returns how many moved. Durable once
   * `whenDurable()` resolves, like any write.
   */
  archiveSettled(): number {
    return this.state.archiveSettled(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
  }

  /** Memory when the execution is there, else the cold execution's own small store, else memory. */
  private reader(executionId: string): MemoryStore {
    const memory = this.state.memory;
    if (memory.getExecution(executionId) !== undefined || !this.anyCold) return memory;
    return this.state.cold.store(executionId) ?? memory;
  }

  /** Whether any execution is cold (else every read is memory's alone). */
  private get anyCold(): boolean {
    return this.state.cold.count() > 0;
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
    return this.state.memory.getExecution(id) ?? (this.anyCold ? this.state.cold.execution(id) : undefined);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    return (
      this.state.memory.findExecutionByIdempotencyKey(agentId, idempotencyKey) ??
      (this.anyCold ? this.state.cold.findByIdempotencyKey(agentId, idempotencyKey) : undefined)
    );
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const hot = this.state.memory.listExecutions(query);
    if (!this.anyCold) return hot;
    const all = [...hot, ...this.state.cold.listExecutions(query)];
    return all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, query.limit);
  }

  countExecutions(): number {
    return this.state.memory.countExecutions() + this.state.cold.count();
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    const hot = this.state.memory.listSessionExecutions(session);
    if (!this.anyCold) return hot;
    // Sorted: an execution brought back from the cold tier was appended to memory's index.
    return [...this.state.cold.listSessionExecutions(session), ...hot].sort(byCreation);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    const hot = this.state.memory.listChildExecutions(parentId);
    if (!this.anyCold) return hot;
    return [...this.state.cold.listChildExecutions(parentId), ...hot].sort(byCreation);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return this.state.memory.listExecutionsPastDeadline(now);
  }

  listUnsettledSubagents(): ExecutionRow[] {
    return this.state.memory.listUnsettledSubagents();
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    const hot = this.state.memory.listTerminalExecutionsBefore(cutoff, limit);
    if (!this.anyCold) return hot;
    const all = [...this.state.cold.listTerminalExecutionsBefore(cutoff, limit), ...hot];
    return all.sort((a, b) => a.updatedAt - b.updatedAt).slice(0, limit);
  }

  deleteExecution(id: string): void {
    this.state.apply(["deleteExecution", id]);
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    return this.state.apply(["appendEvent", executionId, type, payloadJson, occurredAt])!;
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    return this.reader(executionId).listEvents(executionId, afterSeq, limit);
  }

  lastEventSeq(executionId: string): number {
    return this.reader(executionId).lastEventSeq(executionId);
  }

  // --- steps ----------------------------------------------------------------------------------

  insertStep(row: StepRow): void {
    this.state.apply(["insertStep", row]);
  }

  updateStep(row: StepRow): void {
    this.state.apply(["updateStep", row]);
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.reader(executionId).getStep(executionId, stepId);
  }

  listSteps(executionId: string): StepRow[] {
    return this.reader(executionId).listSteps(executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.reader(executionId).listStepsWithStatus(executionId, statuses);
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.reader(executionId).listFailedStepsForCall(executionId, kind, target, argsHash);
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
    const hot = this.state.memory.getDispatch(id);
    if (hot !== undefined || !this.anyCold) return hot;
    const owner = this.state.cold.dispatchOwner(id);
    return owner === undefined ? undefined : this.state.cold.store(owner)?.getDispatch(id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    return this.reader(executionId).listActiveDispatches(executionId);
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
    return this.state.memory.getApproval(id) ?? (this.anyCold ? this.state.cold.approval(id) : undefined);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    const hot = this.state.memory.listApprovals(status);
    if (!this.anyCold) return hot;
    // Stable sort: equal times keep cold (older) first, then memory's creation order.
    return [...this.state.cold.listApprovals(status), ...hot].sort((a, b) => a.createdAt - b.createdAt);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.reader(executionId).listPendingApprovals(executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.reader(executionId).findPendingApprovalForStep(executionId, stepId);
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
    return this.reader(executionId).getResource(executionId, key);
  }

  listResources(executionId: string): ResourceRow[] {
    return this.reader(executionId).listResources(executionId);
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    return this.state.apply(["insertCheckpoint", row])!;
  }

  updateCheckpoint(row: CheckpointRow): void {
    this.state.apply(["updateCheckpoint", row]);
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    return this.reader(executionId).listCheckpoints(executionId, key);
  }
}
