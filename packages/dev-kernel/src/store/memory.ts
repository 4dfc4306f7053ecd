import { compactExecution, compactStep, compactString } from "./compact.js";
import { flatValues, type MemoryContents } from "./memory-contents.js";
import { insertSorted, pushIndex, removeIndex, removeSorted } from "./memory-indexes.js";
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
import { isTerminalExecution } from "./types.js";

type Undo = () => void;

const DURABLE: Promise<void> = Promise.resolve();

// Keys joined with NUL: ids, kinds and hashes never contain it, so the join is unambiguous enough
// for targets too (a target containing NUL would only collide with another NUL-bearing target).
const SEP = "\u0000";

/**
 * Occurrence counters of one dispatch: `kind NUL target` → argsHash → highest consumed occurrence.
 * Keyed by the argsHash string itself (the one the step row keeps) rather than a joined key, so a
 * counter costs a map entry and no string of its own.
 */
type Occurrences = Map<string, Map<string, number>>;

function byStepId(a: StepRow, b: StepRow): number {
  return a.stepId < b.stepId ? -1 : a.stepId > b.stepId ? 1 : 0;
}

/**
 * In-memory {@link Store}. Transactions keep an undo journal: every write made inside
 * `transaction(fn)` records how to reverse itself, and a throw replays the journal backwards, so
 * a failed request leaves no partial state behind (the same guarantee SQLite gives).
 */
export class MemoryStore implements Store {
  private journal: Undo[] | undefined;
  private readonly executions = new Map<string, ExecutionRow>();
  private readonly executionIds: string[] = []; // ascending
  private readonly idempotency = new Map<string, string>();
  private readonly sessions = new Map<string, string[]>(); // creation order
  private readonly children = new Map<string, string[]>();
  private readonly events = new Map<string, EventRow[]>();
  private readonly steps = new Map<string, Map<string, StepRow>>();
  private readonly occurrences = new Map<string, Occurrences>();
  private readonly dispatches = new Map<string, DispatchRow>();
  private readonly dispatchesByExecution = new Map<string, string[]>();
  private readonly activeDispatches = new Set<string>();
  private readonly approvals = new Map<string, ApprovalRow>(); // insertion = creation order
  private readonly agents = new Map<string, AgentRow>();
  private readonly apiKeys = new Map<string, ApiKeyRow>();
  private readonly apiKeysByHash = new Map<string, string>();
  private readonly resources = new Map<string, Map<string, ResourceRow>>();
  private readonly checkpoints = new Map<string, CheckpointRow[]>();

  transaction<T>(fn: () => T): T {
    if (this.journal !== undefined) return fn();
    const journal: Undo[] = [];
    this.journal = journal;
    try {
      return fn();
    } catch (err) {
      for (let i = journal.length - 1; i >= 0; i--) journal[i]!();
      throw err;
    } finally {
      this.journal = undefined;
    }
  }

  /** Nothing is ever more durable than it is now: resolved at once. */
  whenDurable(): Promise<void> {
    return DURABLE;
  }

  close(): void {}

  /** Read-only view of the whole state, for snapshots (see {@link MemoryContents}). */
  contents(): MemoryContents {
    const occurrences = this.occurrences;
    return {
      executions: this.executions.values(),
      eventLogs: this.events.values(),
      steps: flatValues(this.steps),
      occurrences: (function* () {
        for (const [dispatchId, byCall] of occurrences) {
          for (const [call, byArgs] of byCall) {
            const cut = call.indexOf(SEP); // kinds never contain SEP; targets may
            const kind = call.slice(0, cut) as StepKind;
            const target = call.slice(cut + 1);
            for (const [argsHash, consumed] of byArgs) yield { dispatchId, kind, target, argsHash, consumed };
          }
        }
      })(),
      dispatches: this.dispatches.values(),
      approvals: this.approvals.values(),
      agents: this.agents.values(),
      apiKeys: this.apiKeys.values(),
      resources: flatValues(this.resources),
      checkpoints: (function* (lists: Map<string, CheckpointRow[]>) {
        for (const list of lists.values()) yield* list;
      })(this.checkpoints),
    };
  }

  private undo(fn: Undo): void {
    this.journal?.push(fn);
  }

  /** Set `key` in `map`, journaling the previous value. */
  private setIn<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (this.journal !== undefined) {
      const had = map.has(key);
      const prev = map.get(key);
      this.undo(() => (had ? map.set(key, prev as V) : map.delete(key)));
    }
    map.set(key, value);
  }

  private deleteIn<K, V>(map: Map<K, V>, key: K): void {
    if (!map.has(key)) return;
    if (this.journal !== undefined) {
      const prev = map.get(key) as V;
      this.undo(() => map.set(key, prev));
    }
    map.delete(key);
  }

  // --- executions -----------------------------------------------------------------------------

  insertExecution(given: ExecutionRow): void {
    if (this.executions.has(given.id)) throw new Error(`execution ${given.id} already exists`);
    const row = compactExecution(given, undefined);
    this.executions.set(row.id, row);
    insertSorted(this.executionIds, row.id);
    if (row.idempotencyKey !== undefined)
      this.idempotency.set(row.agentId + SEP + row.idempotencyKey, row.id);
    if (row.session !== undefined) pushIndex(this.sessions, row.session, row.id);
    if (row.spawnedBy !== undefined) pushIndex(this.children, row.spawnedBy.executionId, row.id);
    this.undo(() => this.removeExecutionIndexes(row));
  }

  private removeExecutionIndexes(row: ExecutionRow): void {
    this.executions.delete(row.id);
    removeSorted(this.executionIds, row.id);
    if (row.idempotencyKey !== undefined) this.idempotency.delete(row.agentId + SEP + row.idempotencyKey);
    if (row.session !== undefined) removeIndex(this.sessions, row.session, row.id);
    if (row.spawnedBy !== undefined) removeIndex(this.children, row.spawnedBy.executionId, row.id);
  }

  updateExecution(row: ExecutionRow): void {
    const prev = this.executions.get(row.id);
    if (prev === undefined) throw new Error(`execution ${row.id} does not exist`);
    // Indexed fields (agent, key, session, spawned_by) are immutable after creation.
    this.setIn(this.executions, row.id, compactExecution(row, prev));
  }

  getExecution(id: string): ExecutionRow | undefined {
    return this.executions.get(id);
  }

  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined {
    const id = this.idempotency.get(agentId + SEP + idempotencyKey);
    return id === undefined ? undefined : this.executions.get(id);
  }

  listExecutions(query: ExecutionListQuery): ExecutionRow[] {
    const out: ExecutionRow[] = [];
    const ids = query.session !== undefined ? (this.sessions.get(query.session) ?? []) : this.executionIds;
    const ordered = query.session !== undefined ? [...ids].sort() : ids;
    for (let i = ordered.length - 1; i >= 0 && out.length < query.limit; i--) {
      const id = ordered[i]!;
      if (query.beforeId !== undefined && id >= query.beforeId) continue;
      const row = this.executions.get(id)!;
      if (query.agentId !== undefined && row.agentId !== query.agentId) continue;
      if (query.status !== undefined && row.status !== query.status) continue;
      out.push(row);
    }
    return out;
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return (this.sessions.get(session) ?? []).map((id) => this.executions.get(id)!);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return (this.children.get(parentId) ?? []).map((id) => this.executions.get(id)!);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    const out: ExecutionRow[] = [];
    for (const row of this.executions.values()) {
      if (row.deadlineAt !== undefined && row.deadlineAt <= now && !isTerminalExecution(row.status)) {
        out.push(row);
      }
    }
    return out;
  }

  listUnsettledSubagents(): ExecutionRow[] {
    const out: ExecutionRow[] = [];
    for (const [parentId, ids] of this.children) {
      const parent = this.executions.get(parentId);
      if (parent === undefined) continue;
      const parentTerminal = isTerminalExecution(parent.status);
      for (const id of ids) {
        const child = this.executions.get(id)!;
        const childTerminal = isTerminalExecution(child.status);
        if (parentTerminal && !childTerminal) out.push(child);
        else if (!parentTerminal && childTerminal) {
          const step = this.steps.get(parentId)?.get(child.spawnedBy!.stepId);
          if (step?.status === "executing") out.push(child);
        }
      }
    }
    return out;
  }

  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[] {
    const out: ExecutionRow[] = [];
    for (const row of this.executions.values()) {
      if (isTerminalExecution(row.status) && row.updatedAt < cutoff) out.push(row);
    }
    out.sort((a, b) => a.updatedAt - b.updatedAt);
    return out.slice(0, limit);
  }

  deleteExecution(id: string): void {
    const row = this.executions.get(id);
    if (row === undefined) return;
    this.removeExecutionIndexes(row);
    this.undo(() => {
      this.executions.set(row.id, row);
      insertSorted(this.executionIds, row.id);
      if (row.idempotencyKey !== undefined)
        this.idempotency.set(row.agentId + SEP + row.idempotencyKey, row.id);
      if (row.session !== undefined) {
        pushIndex(this.sessions, row.session, row.id);
        this.sessions.get(row.session)!.sort((a, b) => this.compareCreation(a, b));
      }
      if (row.spawnedBy !== undefined) {
        pushIndex(this.children, row.spawnedBy.executionId, row.id);
        this.children.get(row.spawnedBy.executionId)!.sort((a, b) => this.compareCreation(a, b));
      }
    });
    this.deleteIn(this.events, id);
    this.deleteIn(this.steps, id);
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
    for (const a of [...this.approvals.values()]) {
      if (a.executionId === id) this.deleteIn(this.approvals, a.id);
    }
    this.deleteIn(this.resources, id);
    this.deleteIn(this.checkpoints, id);
  }

  private compareCreation(a: string, b: string): number {
    const ra = this.executions.get(a)!;
    const rb = this.executions.get(b)!;
    return ra.createdAt - rb.createdAt || (a < b ? -1 : a > b ? 1 : 0);
  }

  // --- events ---------------------------------------------------------------------------------

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    let list = this.events.get(executionId);
    if (list === undefined) {
      list = [];
      this.setIn(this.events, executionId, list);
    }
    const seq = list.length + 1;
    // Payloads live as long as the execution: keep a flat copy, not JSON.stringify's rope.
    list.push({ executionId, seq, type, payloadJson: compactString(payloadJson), occurredAt });
    const owned = list;
    this.undo(() => {
      owned.pop();
    });
    return seq;
  }

  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[] {
    const list = this.events.get(executionId);
    if (list === undefined) return [];
    // seq n lives at index n-1, so the page is a slice.
    const start = Math.max(0, Math.floor(afterSeq));
    return list.slice(start, start + limit);
  }

  lastEventSeq(executionId: string): number {
    return this.events.get(executionId)?.length ?? 0;
  }

  // --- steps ----------------------------------------------------------------------------------

  private stepMap(executionId: string, create: boolean): Map<string, StepRow> | undefined {
    let m = this.steps.get(executionId);
    if (m === undefined && create) {
      m = new Map();
      this.setIn(this.steps, executionId, m);
    }
    return m;
  }

  insertStep(row: StepRow): void {
    const m = this.stepMap(row.executionId, true)!;
    if (m.has(row.stepId)) throw new Error(`step ${row.stepId} already exists`);
    this.setIn(m, row.stepId, compactStep(row, undefined));
  }

  updateStep(row: StepRow): void {
    const m = this.stepMap(row.executionId, false);
    const prev = m?.get(row.stepId);
    if (m === undefined || prev === undefined) throw new Error(`step ${row.stepId} does not exist`);
    this.setIn(m, row.stepId, compactStep(row, prev));
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.steps.get(executionId)?.get(stepId);
  }

  listSteps(executionId: string): StepRow[] {
    const m = this.steps.get(executionId);
    return m === undefined ? [] : [...m.values()].sort(byStepId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    const m = this.steps.get(executionId);
    if (m === undefined) return [];
    const out: StepRow[] = [];
    for (const s of m.values()) if (statuses.includes(s.status)) out.push(s);
    return out.sort(byStepId);
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    const m = this.steps.get(executionId);
    if (m === undefined) return [];
    const out: StepRow[] = [];
    for (const s of m.values()) {
      if (s.status === "failed" && s.kind === kind && s.target === target && s.argsHash === argsHash)
        out.push(s);
    }
    return out.sort(byStepId);
  }

  // --- occurrence counters --------------------------------------------------------------------

  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined {
    return this.occurrences
      .get(dispatchId)
      ?.get(kind + SEP + target)
      ?.get(argsHash);
  }

  setOccurrence(
    dispatchId: string,
    kind: StepKind,
    target: string,
    argsHash: string,
    consumed: number,
  ): void {
    let byCall = this.occurrences.get(dispatchId);
    if (byCall === undefined) {
      byCall = new Map();
      this.setIn(this.occurrences, dispatchId, byCall);
    }
    const call = kind + SEP + target;
    let byArgs = byCall.get(call);
    if (byArgs === undefined) {
      byArgs = new Map();
      this.setIn(byCall, call, byArgs);
    }
    this.setIn(byArgs, argsHash, consumed);
  }

  clearOccurrences(dispatchId: string): void {
    this.deleteIn(this.occurrences, dispatchId);
  }

  // --- dispatches -----------------------------------------------------------------------------

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
    const out: DispatchRow[] = [];
    for (const id of this.dispatchesByExecution.get(executionId) ?? []) {
      const d = this.dispatches.get(id)!;
      if (d.status !== "exhausted") out.push(d);
    }
    return out;
  }

  listDueDispatches(now: number, limit: number): DispatchRow[] {
    const due: DispatchRow[] = [];
    for (const id of this.activeDispatches) {
      const d = this.dispatches.get(id)!;
      if ((d.status === "pending" || d.status === "failed") && d.nextAttemptAt <= now) due.push(d);
    }
    due.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : 1));
    return due.slice(0, limit);
  }

  nextDispatchDueAt(): number | undefined {
    let min: number | undefined;
    for (const id of this.activeDispatches) {
      const d = this.dispatches.get(id)!;
      if ((d.status === "pending" || d.status === "failed") && (min === undefined || d.nextAttemptAt < min)) {
        min = d.nextAttemptAt;
      }
    }
    return min;
  }

  listExpiredLeases(now: number): DispatchRow[] {
    const out: DispatchRow[] = [];
    for (const id of this.activeDispatches) {
      const d = this.dispatches.get(id)!;
      if (d.status === "in_flight" && (d.lockedAt ?? 0) + d.leaseMs < now) out.push(d);
    }
    return out;
  }

  // --- approvals ------------------------------------------------------------------------------

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
    const out: ApprovalRow[] = [];
    for (const a of this.approvals.values()) if (status === undefined || a.status === status) out.push(a);
    return out;
  }

  listPendingApprovals(executionId: string): ApprovalRow[] {
    const out: ApprovalRow[] = [];
    for (const a of this.approvals.values()) {
      if (a.executionId === executionId && a.status === "pending") out.push(a);
    }
    return out;
  }

  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined {
    for (const a of this.approvals.values()) {
      if (a.executionId === executionId && a.stepId === stepId && a.status === "pending") return a;
    }
    return undefined;
  }

  listExpiredApprovals(now: number): ApprovalRow[] {
    const out: ApprovalRow[] = [];
    for (const a of this.approvals.values()) if (a.status === "pending" && a.timeoutAt <= now) out.push(a);
    return out;
  }

  // --- agents ---------------------------------------------------------------------------------

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

  // --- api keys -------------------------------------------------------------------------------

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

  // --- resources and checkpoints ---------------------------------------------------------------

  putResource(row: ResourceRow): void {
    let m = this.resources.get(row.executionId);
    if (m === undefined) {
      m = new Map();
      this.setIn(this.resources, row.executionId, m);
    }
    this.setIn(m, row.key, row);
  }

  getResource(executionId: string, key: string): ResourceRow | undefined {
    return this.resources.get(executionId)?.get(key);
  }

  listResources(executionId: string): ResourceRow[] {
    const m = this.resources.get(executionId);
    return m === undefined ? [] : [...m.values()];
  }

  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number {
    let list = this.checkpoints.get(row.executionId);
    if (list === undefined) {
      list = [];
      this.setIn(this.checkpoints, row.executionId, list);
    }
    let seq = 1;
    for (const c of list) if (c.key === row.key) seq = c.seq + 1;
    list.push({ ...row, seq });
    const owned = list;
    this.undo(() => {
      owned.pop();
    });
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
