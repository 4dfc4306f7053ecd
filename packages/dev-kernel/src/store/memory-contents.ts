/**
 * The read-only export of a `MemoryStore`'s whole state (sqlite-format3.ts converts files with it): what
 * `MemoryStore.contents()` returns.
 */
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

/** One occurrence counter, as `MemoryStore.contents()` lists it. */
export interface OccurrenceEntry {
  readonly dispatchId: string;
  readonly kind: StepKind;
  readonly target: string;
  readonly argsHash: string;
  readonly consumed: number;
}

/**
 * Everything a `MemoryStore` holds, each table in the order the store keeps it (which the
 * listing orders derive from): replaying these rows through the store's own write methods, in this
 * order, rebuilds an equal store. Fixed when taken (later writes do not show); single-use: some
 * fields are iterators.
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
