/**
 * The memory store's per-execution tables: executions with their lookup indexes, event logs, steps
 * and the per-dispatch occurrence counters. `MemoryStore` (memory.ts) adds the remaining tables
 * and the deletion of a whole execution on top.
 */
import { compactExecution, compactStep, compactString } from "./compact.js";
import { insertSorted, pushIndex, removeIndex, removeSorted } from "./memory-indexes.js";
import { UndoJournal } from "./memory-journal.js";
import type { EventRow, ExecutionListQuery, ExecutionRow, StepKind, StepRow, StepStatus } from "./types.js";
import { isTerminalExecution } from "./types.js";

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

/** Executions, events, steps and occurrence counters of the memory store (module comment). */
export abstract class ExecutionTables extends UndoJournal {
  protected readonly executions = new Map<string, ExecutionRow>();
  private readonly executionIds: string[] = []; // ascending
  private readonly idempotency = new Map<string, string>();
  private readonly sessions = new Map<string, string[]>(); // creation order
  private readonly children = new Map<string, string[]>();
  protected readonly events = new Map<string, EventRow[]>();
  protected readonly steps = new Map<string, Map<string, StepRow>>();
  protected readonly occurrences = new Map<string, Occurrences>();

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

  countExecutions(): number {
    return this.executions.size;
  }

  listSessionExecutions(session: string): ExecutionRow[] {
    return (this.sessions.get(session) ?? []).map((id) => this.executions.get(id)!);
  }

  listChildExecutions(parentId: string): ExecutionRow[] {
    return (this.children.get(parentId) ?? []).map((id) => this.executions.get(id)!);
  }

  listExecutionsPastDeadline(now: number): ExecutionRow[] {
    return [...this.executions.values()].filter(
      (row) => row.deadlineAt !== undefined && row.deadlineAt <= now && !isTerminalExecution(row.status),
    );
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
    const rows = [...this.executions.values()].filter(
      (r) => isTerminalExecution(r.status) && r.updatedAt < cutoff,
    );
    return rows.sort((a, b) => a.updatedAt - b.updatedAt).slice(0, limit);
  }

  /**
   * Remove the execution's row, indexes, events and steps (journaled); the caller removes the
   * rest of what belongs to it.
   */
  protected removeExecution(row: ExecutionRow): void {
    const id = row.id;
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
  }

  private compareCreation(a: string, b: string): number {
    const ra = this.executions.get(a)!;
    const rb = this.executions.get(b)!;
    return ra.createdAt - rb.createdAt || (a < b ? -1 : a > b ? 1 : 0);
  }

  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number {
    const list = this.entry(this.events, executionId, () => []);
    const seq = list.length + 1;
    // Payloads live as long as the execution: keep a flat copy, not JSON.stringify's rope.
    this.pushIn(list, { executionId, seq, type, payloadJson: compactString(payloadJson), occurredAt });
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

  insertStep(row: StepRow): void {
    const m = this.entry(this.steps, row.executionId, () => new Map());
    if (m.has(row.stepId)) throw new Error(`step ${row.stepId} already exists`);
    this.setIn(m, row.stepId, compactStep(row, undefined));
  }

  updateStep(row: StepRow): void {
    const m = this.steps.get(row.executionId);
    const prev = m?.get(row.stepId);
    if (m === undefined || prev === undefined) throw new Error(`step ${row.stepId} does not exist`);
    this.setIn(m, row.stepId, compactStep(row, prev));
  }

  getStep(executionId: string, stepId: string): StepRow | undefined {
    return this.steps.get(executionId)?.get(stepId);
  }

  /** The execution's steps for which `keep` holds, ascending step id. */
  private stepsWhere(executionId: string, keep: (s: StepRow) => boolean = () => true): StepRow[] {
    return [...(this.steps.get(executionId)?.values() ?? [])].filter(keep).sort(byStepId);
  }

  listSteps(executionId: string): StepRow[] {
    return this.stepsWhere(executionId);
  }

  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[] {
    return this.stepsWhere(executionId, (s) => statuses.includes(s.status));
  }

  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[] {
    return this.stepsWhere(
      executionId,
      (s) => s.status === "failed" && s.kind === kind && s.target === target && s.argsHash === argsHash,
    );
  }

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
    const byCall = this.entry(this.occurrences, dispatchId, () => new Map());
    const byArgs = this.entry(byCall, kind + SEP + target, () => new Map<string, number>());
    this.setIn(byArgs, argsHash, consumed);
  }

  clearOccurrences(dispatchId: string): void {
    this.deleteIn(this.occurrences, dispatchId);
  }
}
