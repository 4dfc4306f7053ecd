/**
 * The dev kernel's storage seam. Every implementation (memory, SQLite) is **synchronous**: a
 * request reads, decides and writes without an `await` in between, which is what serializes
 * mutations per execution (docs/protocol.md §6) without locks. Rules every implementation keeps:
 * - `transaction(fn)` runs `fn` atomically: if it throws, every write made inside is undone and the
 *   error is rethrown. Nested calls join the outer transaction. Its writes are visible at once but
 *   may become durable later: see `whenDurable()`.
 * - JSON payloads (`*Json` fields) are stored and returned as the exact text given; never parse
 *   and re-serialize them (that would lose `1.0` and big integers).
 * - Rows are immutable values: `get*`/`list*` return snapshots, `update*` replaces the whole row
 *   identified by its key. Callers never mutate a returned row.
 * - Times are Unix epoch milliseconds from the kernel's injectable clock.
 * - Listing orders are part of the contract and stated on each method.
 */
import {
  type ApprovalStatus,
  type ExecutionStatus,
  type Idempotency,
  isTerminalExecutionStatus,
  type StepKind,
  type StepStatus,
  TERMINAL_STEP_STATUSES,
} from "@rebuno/protocol";

// Re-exported so that store implementations import everything they need from this module.
export type { ApprovalStatus, ExecutionStatus, Idempotency, StepKind, StepStatus };

/** Dispatch row status (docs/protocol.md §1.3). */
export type DispatchStatus = "pending" | "in_flight" | "failed" | "exhausted";

/** The subagent relation: the parent execution and its executing step. */
export interface SpawnedBy {
  readonly executionId: string;
  readonly stepId: string;
}

/** One execution. */
export interface ExecutionRow {
  readonly id: string;
  readonly agentId: string;
  readonly agentVersion?: string | undefined;
  /** Raw JSON text of the input (`"null"` when create omitted it). */
  readonly inputJson: string;
  readonly status: ExecutionStatus;
  /** Raw JSON text of the output, once completed with a non-empty output. */
  readonly outputJson?: string | undefined;
  /** Raw JSON text of the opaque `state` given at completion (read by the next turn's `/previous`). */
  readonly stateJson?: string | undefined;
  readonly failureReason?: string | undefined;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly deadlineAt?: number | undefined;
  readonly session?: string | undefined;
  readonly parentExecutionId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly spawnedBy?: SpawnedBy | undefined;
  readonly forkedFrom?: string | undefined;
  readonly forkSeq?: number | undefined;
  /** Raw JSON text of the fork `restoration` map. */
  readonly restorationJson?: string | undefined;
  /** Execution-specific policy bundle YAML (forks, inherited by session turns). */
  readonly policyBundle?: string | undefined;
  /** True once a rate-limit park happened: an execution parks at most once in its lifetime. */
  readonly rateLimitParked: boolean;
  /** Token meter: sum of `input_tokens + output_tokens` recorded on this execution's steps. */
  readonly tokensUsed: number;
  /** Subject named by `on_behalf_of` at create (interop O3); never empty. */
  readonly onBehalfOf?: string | undefined;
}

/** Filter and keyset page for {@link Store.listExecutions}. */
export interface ExecutionListQuery {
  readonly agentId?: string | undefined;
  readonly session?: string | undefined;
  readonly status?: ExecutionStatus | undefined;
  /** Only ids strictly lower than this one (keyset paging, newest first). */
  readonly beforeId?: string | undefined;
  readonly limit: number;
}

/** One event of an execution's log. */
export interface EventRow {
  readonly executionId: string;
  /** 1, 2, 3… per execution, gap-free, assigned by the store. */
  readonly seq: number;
  readonly type: string;
  /** Raw JSON text of the payload object. */
  readonly payloadJson: string;
  readonly occurredAt: number;
}

/** One step of an execution. */
export interface StepRow {
  readonly executionId: string;
  readonly stepId: string;
  readonly kind: StepKind;
  readonly target: string;
  readonly argsHash: string;
  readonly occurrence: number;
  readonly status: StepStatus;
  readonly idempotency: Idempotency;
  /** Raw JSON text of `args` as submitted (absent when the request omitted it). */
  readonly argsJson?: string | undefined;
  /** Raw JSON text of the result (succeeded). */
  readonly resultJson?: string | undefined;
  /** Raw JSON text of the error (failed / denied / cancelled). */
  readonly errorJson?: string | undefined;
  /** Resource keys the step declared it may change (empty for `llm_call`). */
  readonly resources: readonly string[];
  /** Token usage found in an `llm_call` result. */
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly createdAt: number;
  readonly startedAt?: number | undefined;
  readonly completedAt?: number | undefined;
}

/** One queued delivery of an execution to its agent. */
export interface DispatchRow {
  readonly id: string;
  readonly executionId: string;
  readonly status: DispatchStatus;
  /** Times claimed; 0 until the first claim. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** When the row becomes claimable (`pending`/`failed`). */
  readonly nextAttemptAt: number;
  readonly lockedBy?: string | undefined;
  /** Lease start / last renewal while `in_flight`. */
  readonly lockedAt?: number | undefined;
  /** Lease period fixed at claim time (agent's lease timeout or the kernel default). */
  readonly leaseMs: number;
  readonly createdAt: number;
}

/** One human approval. */
export interface ApprovalRow {
  readonly id: string;
  readonly executionId: string;
  readonly stepId: string;
  readonly status: ApprovalStatus;
  /** Allowed deciders; `undefined` or empty = anyone. */
  readonly approvers?: readonly string[] | undefined;
  readonly message?: string | undefined;
  readonly timeoutAt: number;
  readonly decidedBy?: string | undefined;
  readonly decidedAt?: number | undefined;
  readonly rationale?: string | undefined;
  readonly createdAt: number;
}

/** A registered agent (the secret is never returned over HTTP). */
export interface AgentRow {
  readonly id: string;
  readonly webhookUrl: string;
  readonly secret: string;
  /** Raw policy YAML, already compiled successfully once. */
  readonly policyBundle?: string | undefined;
  readonly registeredAt: number;
  readonly leaseTimeoutSeconds?: number | undefined;
  /** Published by the agent itself (`PUT /v0/agents/{id}/metadata`, docs/interop.md O1). */
  readonly description?: string | undefined;
  /** Raw JSON text of the agent's published input JSON Schema (an object). */
  readonly inputSchemaJson?: string | undefined;
  /** Raw JSON text of the agent's published output JSON Schema (an object). */
  readonly outputSchemaJson?: string | undefined;
}

/** A scoped API key. Only the sha256 of its token is stored. */
export interface ApiKeyRow {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  /** Lowercase hex sha256 of the bearer token. Unique among keys. */
  readonly tokenHash: string;
  readonly createdAt: number;
  readonly rotatedAt?: number | undefined;
  readonly revokedAt?: number | undefined;
}

/** External state registered by an agent for one execution (docs/protocol.md §1.10). */
export interface ResourceRow {
  readonly executionId: string;
  readonly key: string;
  readonly driverId: string;
  /** Raw JSON text of `configuration` (`"null"` when absent). */
  readonly configurationJson: string;
  /** sha256 of the canonical configuration, to compare re-registrations. */
  readonly configurationHash: string;
  readonly coverageReuse: boolean;
  /** 0 disables checkpointing. */
  readonly everySteps: number;
  readonly onCompletion: boolean;
  /** Advances each time a step that affects the resource starts executing. */
  readonly generation: number;
  /** Settled affecting steps. */
  readonly count: number;
  /** Event seq of the `resource.registered` event. */
  readonly registeredSeq: number;
  /** Raw JSON text of the binding, once bound. */
  readonly bindingJson?: string | undefined;
  /** Reference of the latest accepted checkpoint. */
  readonly checkpointRef?: string | undefined;
}

/** One accepted checkpoint; it covers `coveredSeq ≤ seq < invalidatedSeq` (open-ended when absent). */
export interface CheckpointRow {
  readonly executionId: string;
  readonly key: string;
  /** Assigned by the store: 1, 2, 3… per (execution, key), in insertion order. */
  readonly seq: number;
  readonly generation: number;
  readonly checkpointRef: string;
  readonly coveredSeq: number;
  readonly invalidatedSeq?: number | undefined;
}

/** Synchronous kernel storage. See the module comment for the rules. */
export interface Store {
  /** Run `fn` atomically; undo all its writes if it throws. Nested calls join the outer one. */
  transaction<T>(fn: () => T): T;
  /**
   * Resolves once every write made so far is durable (rejects if making it durable failed).
   * Nothing may be acknowledged to anyone — an HTTP answer, a webhook — before this resolved for
   * the writes it depends on: a store may defer commits (SQLite group commit). The memory store
   * resolves at once.
   */
  whenDurable(): Promise<void>;
  /** Release resources (close the database, committing what is pending). Idempotent. */
  close(): void;

  insertExecution(row: ExecutionRow): void;
  updateExecution(row: ExecutionRow): void;
  getExecution(id: string): ExecutionRow | undefined;
  /** The execution of `agentId` created with `idempotencyKey`, if any (keys are scoped per agent). */
  findExecutionByIdempotencyKey(agentId: string, idempotencyKey: string): ExecutionRow | undefined;
  /** Newest first (descending id). */
  listExecutions(query: ExecutionListQuery): ExecutionRow[];
  /** Every execution of `session`, in creation order (ascending `createdAt`, then id). */
  listSessionExecutions(session: string): ExecutionRow[];
  /** Executions whose `spawnedBy.executionId` is `parentId`, in creation order. */
  listChildExecutions(parentId: string): ExecutionRow[];
  /** Non-terminal executions with `deadlineAt ≤ now`. */
  listExecutionsPastDeadline(now: number): ExecutionRow[];
  /**
   * Subagents needing repair: terminal children whose parent is non-terminal and whose spawning
   * step is still `executing`, plus non-terminal children whose parent is terminal.
   */
  listUnsettledSubagents(): ExecutionRow[];
  /** Terminal executions with `updatedAt < cutoff`, oldest first, at most `limit`. */
  listTerminalExecutionsBefore(cutoff: number, limit: number): ExecutionRow[];
  /** How many executions the store holds (any status). */
  countExecutions(): number;
  /** Delete the execution and everything that belongs to it (events, steps, dispatches with their
   * occurrence counters, approvals, resources, checkpoints); releases its idempotency key. */
  deleteExecution(id: string): void;

  /** Append with the next seq of the execution and return that seq. */
  appendEvent(executionId: string, type: string, payloadJson: string, occurredAt: number): number;
  /** Events with `seq > afterSeq`, ascending, at most `limit`. */
  listEvents(executionId: string, afterSeq: number, limit: number): EventRow[];
  /** Highest seq of the execution (0 when it has none). */
  lastEventSeq(executionId: string): number;

  insertStep(row: StepRow): void;
  updateStep(row: StepRow): void;
  getStep(executionId: string, stepId: string): StepRow | undefined;
  /** Ascending `stepId`. */
  listSteps(executionId: string): StepRow[];
  /** Steps of the execution with one of `statuses`, ascending `stepId`. */
  listStepsWithStatus(executionId: string, statuses: readonly StepStatus[]): StepRow[];
  /**
   * `failed` steps with the call identity `(kind, target, argsHash)` (any occurrence), ascending
   * `stepId` — what the at_most_once check needs. Only failed ones, so the SQLite index behind it
   * is partial and a succeeding step never writes to it.
   */
  listFailedStepsForCall(executionId: string, kind: StepKind, target: string, argsHash: string): StepRow[];

  /** Highest occurrence already assigned for the call in this dispatch, or undefined. */
  getOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string): number | undefined;
  setOccurrence(dispatchId: string, kind: StepKind, target: string, argsHash: string, consumed: number): void;
  /**
   * Also done by an `updateDispatch` to `exhausted`: no lease of it can be live again, and an idle
   * kernel should not keep one counter per step ever taken.
   */
  clearOccurrences(dispatchId: string): void;

  insertDispatch(row: DispatchRow): void;
  updateDispatch(row: DispatchRow): void;
  getDispatch(id: string): DispatchRow | undefined;
  /** Dispatches of the execution whose status is not `exhausted`, in creation order. */
  listActiveDispatches(executionId: string): DispatchRow[];
  /** `pending`/`failed` rows with `nextAttemptAt ≤ now`, oldest `nextAttemptAt` first, at most `limit`. */
  listDueDispatches(now: number, limit: number): DispatchRow[];
  /** Smallest `nextAttemptAt` among `pending`/`failed` rows, or undefined when none. */
  nextDispatchDueAt(): number | undefined;
  /** `in_flight` rows with `lockedAt + leaseMs < now`. */
  listExpiredLeases(now: number): DispatchRow[];

  insertApproval(row: ApprovalRow): void;
  updateApproval(row: ApprovalRow): void;
  getApproval(id: string): ApprovalRow | undefined;
  /** Oldest first (creation order); all statuses when `status` is undefined. */
  listApprovals(status: ApprovalStatus | undefined): ApprovalRow[];
  /** Pending approvals of one execution, oldest first. */
  listPendingApprovals(executionId: string): ApprovalRow[];
  /** The pending approval of a step, if any. */
  findPendingApprovalForStep(executionId: string, stepId: string): ApprovalRow | undefined;
  /** Pending approvals with `timeoutAt ≤ now`, oldest first. */
  listExpiredApprovals(now: number): ApprovalRow[];

  /** Insert or replace by id. */
  putAgent(row: AgentRow): void;
  getAgent(id: string): AgentRow | undefined;
  /** Ascending id. */
  listAgents(): AgentRow[];
  deleteAgent(id: string): void;

  insertApiKey(row: ApiKeyRow): void;
  updateApiKey(row: ApiKeyRow): void;
  getApiKey(id: string): ApiKeyRow | undefined;
  findApiKeyByTokenHash(tokenHash: string): ApiKeyRow | undefined;
  /** Creation order, revoked keys included. */
  listApiKeys(): ApiKeyRow[];

  /** Insert or replace by (executionId, key). */
  putResource(row: ResourceRow): void;
  getResource(executionId: string, key: string): ResourceRow | undefined;
  /** Registration order. */
  listResources(executionId: string): ResourceRow[];
  /** Insert; the store assigns and returns `seq`. */
  insertCheckpoint(row: Omit<CheckpointRow, "seq">): number;
  /** Replace by (executionId, key, seq). */
  updateCheckpoint(row: CheckpointRow): void;
  /** Checkpoints of the execution (all keys when `key` is undefined), insertion order. */
  listCheckpoints(executionId: string, key: string | undefined): CheckpointRow[];
}

/** True when the execution status is terminal (`completed`, `failed`, `cancelled`). */
export function isTerminalExecution(status: ExecutionStatus): boolean {
  return isTerminalExecutionStatus(status);
}

const TERMINAL_STEPS: ReadonlySet<StepStatus> = new Set(TERMINAL_STEP_STATUSES);

/** True when the step status is terminal (`succeeded`, `failed`, `denied`, `cancelled`). */
export function isTerminalStep(status: StepStatus): boolean {
  return TERMINAL_STEPS.has(status);
}
