import { ExecutionTables } from "./memory-executions.js";
import { pushIndex, removeIndex } from "./memory-indexes.js";
import type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  ApprovalStatus,
  CheckpointRow,
  DispatchRow,
  ResourceRow,
  Store,
} from "./types.js";

const DURABLE: Promise<void> = Promise.resolve();

/**
 * In-memory {@link Store}. Transactions keep an undo journal (memory-journal.ts): a throw inside
 * `transaction(fn)` reverses every write `fn` made, so a failed request leaves no partial state
 * behind (the same guarantee SQLite gives). Executions, events, steps and occurrence counters live
 * in {@link ExecutionTables} (memory-executions.ts); this class adds the other tables.
 */
export class MemoryStore extends ExecutionTables implements Store {
  private readonly dispatches = new Map<string, DispatchRow>();
  private readonly dispatchesByExecution = new Map<string, string[]>();
  private readonly activeDispatches = new Set<string>();
  private readonly approvals = new Map<string, ApprovalRow>(); // insertion = creation order
  private readonly agents = new Map<string, AgentRow>();
  private readonly apiKeys = new Map<string, ApiKeyRow>();
  private readonly apiKeysByHash = new Map<string, string>();
  private readonly resources = new Map<string, Map<string, ResourceRow>>();
  private readonly checkpoints = new Map<string, CheckpointRow[]>();

  /** Nothing is ever more durable than it is now: resolved at once. */
  whenDurable(): Promise<void> {
    return DURABLE;
  }

  close(): void {}

  /** Delete the execution and everything that belongs to it (dispatches, approvals, resources…). */
  deleteExecution(id: string): void {
    const row = this.executions.get(id);
    if (row === undefined) return;
    this.removeExecution(row);
    for (const dispatchId of [...(this.dispatchesByExecution.get(id) ?? [])]) {
      const d = this.dispatches.get(dispatchId)!;
      this.deleteIn(this.dispatches, dispatchId);
      this.deleteIn(this.occurrences, dispatchId);
      if (this.activeDispatches.has(dispatchId)) {
        this.activeDispatches.delete(dispatchId);
        this.undo(() => this.activeDispatches.add(d.id));
      }
    }
    this.deleteIn(this.dispatchesByExecution, id);
    for (const a of this.listApprovals(undefined))
      if (a.executionId === id) this.deleteIn(this.approvals, a.id);
    this.deleteIn(this.resources, id);
    this.deleteIn(this.checkpoints, id);
  }

  insertDispatch(row: DispatchRow): void {
    if (this.dispatches.has(row.id)) throw new Error(`dispatch ${row.id} already exists`);
    this.setIn(this.dispatches, row.id, row);
    pushIndex(this.dispatchesByExecution, row.executionId, row.id);
    this.undo(() => removeIndex(this.dispatchesByExecution, row.executionId, row.id));
    this.trackActive(row);
  }

  private trackActive(row: DispatchRow): void {
    const was = this.activeDispatches.has(row.id);
    const is = row.status !== "exhausted";
    if (was === is) return;
    if (is) this.activeDispatches.add(row.id);
    else this.activeDispatches.delete(row.id);
    this.undo(() => (was ? this.activeDispatches.add(row.id) : this.activeDispatches.delete(row.id)));
  }

  updateDispatch(row: DispatchRow): void {
    if (!this.dispatches.has(row.id)) throw new Error(`dispatch ${row.id} does not exist`);
    this.setIn(this.dispatches, row.id, row);
    this.trackActive(row);
    // No lease of an exhausted dispatch is ever live again, so nobody reads its counters.
    if (row.status === "exhausted") this.deleteIn(this.occurrences, row.id);
  }

  getDispatch(id: string): DispatchRow | undefined {
    return this.dispatches.get(id);
  }

  listActiveDispatches(executionId: string): DispatchRow[] {
    const ids = this.dispatchesByExecution.get(executionId) ?? [];
    return ids.map((id) => this.dispatches.get(id)!).filter((d) => d.status !== "exhausted");
  }

  /** The dispatches not `exhausted` for which `keep` holds. */
  private active(keep: (d: DispatchRow) => boolean): DispatchRow[] {
    return [...this.activeDispatches].map((id) => this.dispatches.get(id)!).filter(keep);
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    const due = this.active(
      (d) => (d.status === "pending" || d.status === "failed") && d.nextAttemptAt <= now,
    );
    due.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : 1));
    return due.slice(0, limit);
  }

  nextDispatchDueAt(): number | undefined {
    let min: number | undefined;
    for (const d of this.active((d) => d.status === "pending" || d.status === "failed"))
      if (min === undefined || d.nextAttemptAt < min) min = d.nextAttemptAt;
    return min;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    return this.active((d) => d.status === "in_flight" && (d.lockedAt ?? 0) + d.leaseMs < now);
  }

  insertApproval(row: ApprovalRow): void {
    if (this.approvals.has(row.id)) throw new Error(`approval ${row.id} already exists`);
    this.setIn(this.approvals, row.id, row);
  }

  updateApproval(row: ApprovalRow): void {
    if (!this.approvals.has(row.id)) throw new Error(`approval ${row.id} does not exist`);
    // Map.set on an existing key keeps its insertion position, so creation order survives updates.
    this.setIn(this.approvals, row.id, row);
  }

  getApproval(id: string): ApprovalRow | undefined {
    return this.approvals.get(id);
  }

  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[] {
    return [...this.approvals.values()].filter((a) => status === undefined || a.status === status);
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    return this.listApprovals("pending").filter((a) => a.executionId === executionId);
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    return this.listPendingApprovals(executionId).find((a) => a.stepId === stepId);
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    return this.listApprovals("pending").filter((a) => a.timeoutAt <= now);
  }

  putAgent(row: AgentRow): void {
    this.setIn(this.agents, row.id, row);
  }

  getAgent(id: string): AgentRow | undefined {
    return this.agents.get(id);
  }

  listAgents(): AgentRow[] {
    return [...this.agents.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  deleteAgent(id: string): void {
    this.deleteIn(this.agents, id);
  }

  insertApiKey(row: ApiKeyRow): void {
    if (this.apiKeys.has(row.id)) throw new Error(`api key ${row.id} already exists`);
    this.setIn(this.apiKeys, row.id, row);
    this.setIn(this.apiKeysByHash, row.tokenHash, row.id);
  }

  updateApiKey(row: ApiKeyRow): void {
    const prev = this.apiKeys.get(row.id);
    if (prev === undefined) throw new Error(`api key ${row.id} does not exist`);
    if (prev.tokenHash !== row.tokenHash) {
      this.deleteIn(this.apiKeysByHash, prev.tokenHash);
      this.setIn(this.apiKeysByHash, row.tokenHash, row.id);
    }
    this.setIn(this.apiKeys, row.id, row);
  }

  getApiKey(id: string): ApiKeyRow | undefined {
    return this.apiKeys.get(id);
  }

  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined {
    const id = this.apiKeysByHash.get(tokenHash);
    return id === undefined ? undefined : this.apiKeys.get(id);
  }

  listApiKeys(): ApiKeyRow[] {
    return [...this.apiKeys.values()];
  }

  putResource(row: ResourceRow): void {
    const byKey = this.entry(this.resources, row.executionId, () => new Map<string, ResourceRow>());
    this.setIn(byKey, row.key, row);
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.resources.get(executionId)?.get(key);
  }

  listResources(executionId: string): ResourceRow[] {
    const m = this.resources.get(executionId);
    return m === undefined ? [] : [...m.values()];
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    const list = this.entry(this.checkpoints, row.executionId, () => []);
    let seq = 1;
    for (const c of list) if (c.key === row.key) seq = c.seq + 1;
    this.pushIn(list, { ...row, seq });
    return seq;
  }

  updateCheckpoint(row: CheckpointRow): void {
    const list = this.checkpoints.get(row.executionId);
    const i = list?.findIndex((c) => c.key === row.key && c.seq === row.seq) ?? -1;
    if (list === undefined || i < 0) throw new Error(`checkpoint ${row.key}#${row.seq} does not exist`);
    const prev = list[i]!;
    list[i] = row;
    this.undo(() => {
      list[i] = prev;
    });
  }

  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[] {
    const list = this.checkpoints.get(executionId) ?? [];
    return key === undefined ? [...list] : list.filter((c) => c.key === key);
  }
}
