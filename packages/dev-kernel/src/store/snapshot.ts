/**
 * Snapshots: the ops that rebuild a {@link MemoryStore}'s current state from nothing. Written by
 * compaction in place of the log they summarize, so opening a file replays the state once instead
 * of its whole history.
 *
 * The ops are emitted table by table in the orders the memory store keeps (insertion order of
 * executions, dispatches, approvals, API keys; seq order of each event log; registration order of
 * resources; insertion order of checkpoints, which is what assigns their per-key seqs), so the
 * replayed store lists everything in the same order as the one that was snapshotted. Each row goes
 * in with its final values through the insert (or put) method; no memory write reads another
 * table, so the table order itself does not matter.
 */
import type { MemoryStore } from "./memory.js";
import type { MemoryContents } from "./memory-contents.js";
import type { RedoOp } from "./redo-ops.js";

/**
 * The ops that rebuild `memory` as it is now: the state is fixed at the call (cheaply, see
 * `MemoryStore.contents()`) and the ops are produced as they are iterated, while `memory` may
 * change.
 */
export function snapshotOps(memory: MemoryStore): Generator<RedoOp> {
  return opsOf(memory.contents());
}

function* opsOf(c: MemoryContents): Generator<RedoOp> {
  for (const row of c.executions) yield ["insertExecution", row];
  for (const log of c.eventLogs) {
    for (const e of log) yield ["appendEvent", e.executionId, e.type, e.payloadJson, e.occurredAt];
  }
  for (const row of c.steps) yield ["insertStep", row];
  for (const row of c.dispatches) yield ["insertDispatch", row];
  for (const o of c.occurrences)
    yield ["setOccurrence", o.dispatchId, o.kind, o.target, o.argsHash, o.consumed];
  for (const row of c.approvals) yield ["insertApproval", row];
  for (const row of c.agents) yield ["putAgent", row];
  for (const row of c.apiKeys) yield ["insertApiKey", row];
  for (const row of c.resources) yield ["putResource", row];
  for (const row of c.checkpoints) yield ["insertCheckpoint", row];
}
