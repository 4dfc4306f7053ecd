/**
 * The read-only export of a {@link MemoryStore}'s whole state, for snapshots (snapshot.ts): what
 * `MemoryStore.contents()` returns.
 */
import type { MemoryStore } from "./memory.js";
import type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  CheckpointRow,
  DispatchRow,
  EventRow,
  ExecutionRow,
  ResourceRow,
  StepKind,
  StepRow,
} from "./types.js";

/** One occurrence counter, as {@link MemoryStore.contents} lists it. */
export interface OccurrenceEntry {
  readonly dispatchId: string;
  readonly kind: StepKind;
  readonly target: string;
  readonly argsHash: string;
  readonly consumed: number;
}

/**
 * Everything a {@link MemoryStore} holds, each table in the order the store keeps it (which the
 * listing orders derive from): replaying these rows through the store's own write methods, in this
 * order, rebuilds an equal store. Lazy and single-use: each field is an iterator over the live maps,
 * so iterate it once, before the store is written again.
 */
export interface MemoryContents {
  /** Insertion order (also the order of the session and child indexes). */
  readonly executions: Iterable<ExecutionRow>;
  /** Each execution's log in seq order; logs in the order they were started. */
  readonly eventLogs: Iterable<readonly EventRow[]>;
  /** Per execution, insertion order. */
  readonly steps: Iterable<StepRow>;
  readonly occurrences: Iterable<OccurrenceEntry>;
  /** Insertion order (also the per-execution order of `listActiveDispatches`). */
  readonly dispatches: Iterable<DispatchRow>;
  /** Creation order. */
  readonly approvals: Iterable<ApprovalRow>;
  readonly agents: Iterable<AgentRow>;
  /** Creation order. */
  readonly apiKeys: Iterable<ApiKeyRow>;
  /** Per execution, registration order. */
  readonly resources: Iterable<ResourceRow>;
  /** Per execution, insertion order (which is what assigns each key's seqs). */
  readonly checkpoints: Iterable<CheckpointRow>;
}

/** The values of every inner map, outer map by outer map. */
export function* flatValues<V>(outer: Map<string, Map<string, V>>): Generator<V> {
  for (const inner of outer.values()) yield* inner.values();
}
