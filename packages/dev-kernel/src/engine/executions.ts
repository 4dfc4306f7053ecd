/**
 * Client-side execution operations: create (docs/protocol.md §4.1 with the session rules of docs/protocol.md §1.7 and the
 * subagent checks of docs/protocol.md §8.2) and cancel (docs/protocol.md §4.6).
 */
import { RawJson } from "@rebuno/protocol";
import { conflict, executionTerminal, invalid, notFound } from "../errors.js";
import { CANCEL_TERMINAL_CODE } from "../inferences.js";
import type { ExecutionRow, SpawnedBy } from "../store/types.js";
import { isTerminalExecution } from "../store/types.js";
import { formatTime } from "../time.js";
import type { KernelContext } from "./context.js";
import { appendEvent, executionPayload } from "./events.js";
import { sessionOccupied, startExecution, terminate } from "./lifecycle.js";

/** A validated create request. */
export interface CreateRequest {
  readonly agentId: string;
  /** Raw JSON text of `input`, undefined when absent. */
  readonly inputJson: string | undefined;
  readonly agentVersion: string | undefined;
  readonly session: string | undefined;
  readonly parentExecutionId: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly spawnedBy: SpawnedBy | undefined;
  /** Non-empty `on_behalf_of` (interop O3). */
  readonly onBehalfOf?: string | undefined;
}

/** Create (or return the idempotent twin of) an execution. `created` is false for a repeat. */
export function createExecution(
  ctx: KernelContext,
  req: CreateRequest,
): { execution: ExecutionRow; created: boolean } {
  if (ctx.store.getAgent(req.agentId) === undefined) throw notFound(`agent ${JSON.stringify(req.agentId)}`);
  const idempotencyKey = req.idempotencyKey ?? req.spawnedBy?.stepId;
  if (idempotencyKey !== undefined) {
    const twin = ctx.store.findExecutionByIdempotencyKey(req.agentId, idempotencyKey);
    if (twin !== undefined) return { execution: twin, created: false };
  }

  if (req.parentExecutionId !== undefined) {
    const parent = ctx.store.getExecution(req.parentExecutionId);
    if (parent === undefined) throw notFound("parent execution");
    if (parent.agentId !== req.agentId) {
      throw invalid("parent_execution_id names an execution of another agent");
    }
    if (parent.status !== "completed") throw conflict(`the parent execution is in status ${parent.status}`);
    if (req.session !== undefined && ctx.store.listSessionExecutions(req.session).length > 0) {
      throw conflict("the session already has executions");
    }
  }

  if (req.spawnedBy !== undefined) checkSpawnedBy(ctx, req.spawnedBy, req.session);

  const now = ctx.clock();
  const row: ExecutionRow = {
    id: ctx.newId(),
    agentId: req.agentId,
    agentVersion: req.agentVersion,
    inputJson: req.inputJson ?? "null",
    status: "pending",
    createdAt: now,
    updatedAt: now,
    deadlineAt: ctx.config.deadlineTimeoutMs === undefined ? undefined : now + ctx.config.deadlineTimeoutMs,
    session: req.session,
    parentExecutionId: req.parentExecutionId,
    idempotencyKey,
    spawnedBy: req.spawnedBy,
    rateLimitParked: false,
    tokensUsed: 0,
    onBehalfOf: req.onBehalfOf,
  };
  ctx.store.insertExecution(row);
  const extra: Record<string, unknown> = {};
  if (row.spawnedBy !== undefined) {
    extra.spawned_by = { execution_id: row.spawnedBy.executionId, step_id: row.spawnedBy.stepId };
  }
  appendEvent(ctx, row.id, "execution.created", executionPayload(row, "pending", extra));
  ctx.metrics.inc("rebuno_executions_created_total");
  if (row.session !== undefined && sessionOccupied(ctx, row.session))
    return { execution: row, created: true };
  return { execution: startExecution(ctx, row), created: true };
}

/** Subagent checks, in the order of docs/protocol.md §8.2. */
function checkSpawnedBy(ctx: KernelContext, spawnedBy: SpawnedBy, session: string | undefined): void {
  const parent = ctx.store.getExecution(spawnedBy.executionId);
  if (parent === undefined) throw notFound("parent execution");
  if (isTerminalExecution(parent.status)) throw conflict("the parent execution is terminal");
  if (session !== undefined && session !== "" && session === parent.session) {
    throw invalid("a subagent cannot join its parent's session");
  }
  const step = ctx.store.getStep(parent.id, spawnedBy.stepId);
  if (step === undefined) throw invalid("spawned_by names no step of the parent execution");
  if (step.status !== "executing") throw conflict(`the parent step is in status ${step.status}`);
}

/** Cancel (docs/protocol.md §4.6): terminal already → 409. */
export function cancelExecution(ctx: KernelContext, executionId: string): void {
  const execution = ctx.store.getExecution(executionId);
  if (execution === undefined) throw notFound("execution");
  if (isTerminalExecution(execution.status)) {
    throw CANCEL_TERMINAL_CODE === "conflict" ? conflict("execution is terminal") : executionTerminal();
  }
  terminate(ctx, execution, { status: "cancelled", reason: "client_cancelled" });
}

/** `GET /previous`: the parent's `state`, else its output, else null. */
export function previousState(ctx: KernelContext, execution: ExecutionRow): RawJson | null {
  if (execution.parentExecutionId === undefined) return null;
  const parent = ctx.store.getExecution(execution.parentExecutionId);
  if (parent === undefined) return null;
  const text = parent.stateJson ?? parent.outputJson;
  return text === undefined ? null : new RawJson(text);
}

/** The Execution JSON object (docs/protocol.md §1.1); empty optional fields are omitted. */
export function executionView(e: ExecutionRow): Record<string, unknown> {
  const v: Record<string, unknown> = { id: e.id, agent_id: e.agentId };
  if (e.agentVersion !== undefined) v.agent_version = e.agentVersion;
  v.input = new RawJson(e.inputJson);
  v.status = e.status;
  if (e.outputJson !== undefined) v.output = new RawJson(e.outputJson);
  if (e.failureReason !== undefined && e.failureReason !== "") v.failure_reason = e.failureReason;
  v.created_at = formatTime(e.createdAt);
  v.updated_at = formatTime(e.updatedAt);
  if (e.deadlineAt !== undefined) v.deadline_at = formatTime(e.deadlineAt);
  if (e.session !== undefined) v.session = e.session;
  if (e.parentExecutionId !== undefined) v.parent_execution_id = e.parentExecutionId;
  if (e.idempotencyKey !== undefined) v.idempotency_key = e.idempotencyKey;
  if (e.spawnedBy !== undefined) {
    v.spawned_by = { execution_id: e.spawnedBy.executionId, step_id: e.spawnedBy.stepId };
  }
  if (e.forkedFrom !== undefined) v.forked_from = e.forkedFrom;
  if (e.forkSeq !== undefined) v.fork_seq = e.forkSeq;
  if (e.restorationJson !== undefined) v.restoration = new RawJson(e.restorationJson);
  if (e.onBehalfOf !== undefined && e.onBehalfOf !== "") v.on_behalf_of = e.onBehalfOf;
  return v;
}
