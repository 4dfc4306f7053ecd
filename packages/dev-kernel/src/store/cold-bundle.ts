/**
 * Cold executions of the SQLite store (cold-tier.ts): which executions may leave memory, the
 * bundle that holds one while it is cold, and a small read-only store built from a bundle.
 *
 * A bundle is the list of insert ops that rebuild the execution and everything that belongs to it
 * in a {@link MemoryStore} (redo-ops.ts): its row, its events in seq order, its steps, dispatches,
 * approvals, resources (registration order) and checkpoints (insertion order, which is what
 * assigns their seqs). Replaying it gives back the very rows, so every per-execution read of a cold
 * execution is the memory store's own code run on that small store: the two cannot drift apart.
 */
import { MemoryStore } from "./memory.js";
import { applyOp, type BundleOp } from "./redo-ops.js";
import type { ApprovalRow, ExecutionRow } from "./types.js";
import { isTerminalExecution } from "./types.js";

/** One execution on its way to (or read from) the cold tables. */
export interface ColdEntry {
  readonly row: ExecutionRow;
  readonly ops: readonly BundleOp[];
  readonly dispatchIds: readonly string[];
  readonly approvals: readonly ApprovalRow[];
}

/**
 * Whether the execution is settled, so that nothing but a read (or a late write, which brings it
 * back) will ever ask for it again: it is terminal; none of its dispatches can be claimed or holds a
 * lease (all exhausted) or occurrence counters; no approval of it is pending; its parent (the
 * execution that spawned it) is not running, so the subagent repair (`listUnsettledSubagents`,
 * which reads memory only) never needs it; and no child of it still runs, for the same reason.
 * Deadlines, leases, due dispatches and expiring approvals concern non-terminal rows only.
 */
export function isSettled(memory: MemoryStore, row: ExecutionRow): boolean {
  if (!isTerminalExecution(row.status)) return false;
  for (const d of memory.executionDispatches(row.id)) {
    if (d.status !== "exhausted" || memory.hasOccurrences(d.id)) return false;
  }
  if (memory.listPendingApprovals(row.id).length > 0) return false;
  if (row.spawnedBy !== undefined) {
    const parent = memory.getExecution(row.spawnedBy.executionId);
    if (parent !== undefined && !isTerminalExecution(parent.status)) return false;
  }
  for (const child of memory.listChildExecutions(row.id)) {
    if (!isTerminalExecution(child.status)) return false;
  }
  return true;
}

/** The bundle of an execution held in `memory` (see the module comment). */
export function bundleOf(memory: MemoryStore, row: ExecutionRow): ColdEntry {
  const id = row.id;
  const ops: BundleOp[] = [["insertExecution", row]];
  for (const e of memory.listEvents(id, 0, Number.MAX_SAFE_INTEGER)) {
    ops.push(["appendEvent", id, e.type, e.payloadJson, e.occurredAt]);
  }
  for (const s of memory.listSteps(id)) ops.push(["insertStep", s]);
  const dispatches = memory.executionDispatches(id);
  for (const d of dispatches) ops.push(["insertDispatch", d]);
  const approvals = memory.executionApprovals(id);
  for (const a of approvals) ops.push(["insertApproval", a]);
  for (const r of memory.listResources(id)) ops.push(["putResource", r]);
  for (const c of memory.listCheckpoints(id, undefined)) ops.push(["insertCheckpoint", c]);
  return { row, ops, dispatchIds: dispatches.map((d) => d.id), approvals };
}

/** A store holding just the bundle's execution, for reads of a cold execution. */
export function storeOfBundle(ops: readonly BundleOp[]): MemoryStore {
  const store = new MemoryStore();
  for (const op of ops) applyOp(store, op);
  return store;
}
