/**
 * Execution state transitions shared by routes and background loops: start, dispatch
 * enqueue/retire, terminal transitions with their follow-ups (session release, parent-step
 * settlement, subagent cascade), and resume-if-idle. Every function runs inside the caller's
 * `store.transaction`, so a transition and its events commit together.
 */
import { RawJson } from "@rebuno/protocol";
import { REASON_PARENT_TERMINAL } from "../inferences.js";
import type { DispatchRow, ExecutionRow, StepRow } from "../store/types.js";
import { isTerminalExecution } from "../store/types.js";
import type { KernelContext } from "./context.js";
import { appendEvent, executionPayload, stepPayload } from "./events.js";
import { countSettledStep } from "./resources.js";

/** How an execution ends. */
export type TerminalOutcome =
  | {
      readonly status: "completed";
      readonly outputJson?: string | undefined;
      readonly stateJson?: string | undefined;
    }
  | { readonly status: "failed"; readonly reason: string }
  | { readonly status: "cancelled"; readonly reason: string };

const EXECUTION_CANCELLED_ERROR = '{"reason":"execution_cancelled"}';

/** Queue a delivery of the execution (appends `dispatch.queued`) and wake the delivery loop. */
export function enqueueDispatch(ctx: KernelContext, executionId: string, dueAt: number): DispatchRow {
  const now = ctx.clock();
  const row: DispatchRow = {
    id: ctx.newId(),
    executionId,
    status: "pending",
    attempt: 0,
    maxAttempts: ctx.config.maxAttempts,
    nextAttemptAt: dueAt,
    leaseMs: ctx.config.leaseTimeoutMs,
    createdAt: now,
  };
  ctx.store.insertDispatch(row);
  appendEvent(ctx, executionId, "dispatch.queued", {
    dispatch_id: row.id,
    execution_id: executionId,
    status: "pending",
    attempt: 0,
  });
  ctx.wakeDispatcher();
  return row;
}

/** Retire every non-exhausted dispatch of the execution (no events, docs/protocol.md §10.5). */
export function retireDispatches(ctx: KernelContext, executionId: string): void {
  for (const d of ctx.store.listActiveDispatches(executionId)) {
    ctx.store.updateDispatch({ ...d, status: "exhausted", lockedBy: undefined });
  }
}

/**
 * Start a pending execution: resolve its session parent, append `execution.started`, set
 * `running` and enqueue the first dispatch.
 */
export function startExecution(ctx: KernelContext, execution: ExecutionRow): ExecutionRow {
  let parentExecutionId = execution.parentExecutionId;
  if (parentExecutionId === undefined && execution.session !== undefined) {
    // The most recently created completed execution of the same agent in the session.
    const turns = ctx.store.listSessionExecutions(execution.session);
    for (let i = turns.length - 1; i >= 0; i--) {
      const t = turns[i]!;
      if (t.id !== execution.id && t.agentId === execution.agentId && t.status === "completed") {
        parentExecutionId = t.id;
        break;
      }
    }
  }
  // Session turns (and explicit continuations) inherit the parent's execution-specific bundle.
  let policyBundle = execution.policyBundle;
  if (policyBundle === undefined && parentExecutionId !== undefined) {
    policyBundle = ctx.store.getExecution(parentExecutionId)?.policyBundle;
  }
  const started: ExecutionRow = {
    ...execution,
    status: "running",
    parentExecutionId,
    policyBundle,
    updatedAt: ctx.clock(),
  };
  ctx.store.updateExecution(started);
  const extra = parentExecutionId === undefined ? undefined : { parent_execution_id: parentExecutionId };
  appendEvent(ctx, execution.id, "execution.started", executionPayload(started, "running", extra));
  enqueueDispatch(ctx, execution.id, ctx.clock());
  return started;
}

/** True when the session has an execution that is `running` or `blocked`. */
export function sessionOccupied(ctx: KernelContext, session: string): boolean {
  return ctx.store
    .listSessionExecutions(session)
    .some((e) => e.status === "running" || e.status === "blocked");
}

/**
 * True when the execution waits on something (docs/protocol.md §8.4): a step `awaiting_approval`, or an
 * `executing` step with at least one child execution spawned by it (child in any status).
 */
export function isWaiting(ctx: KernelContext, executionId: string): boolean {
  const steps = ctx.store.listStepsWithStatus(executionId, ["awaiting_approval", "executing"]);
  if (steps.length === 0) return false;
  const executing = new Set<string>();
  for (const s of steps) {
    if (s.status === "awaiting_approval") return true;
    executing.add(s.stepId);
  }
  for (const child of ctx.store.listChildExecutions(executionId)) {
    if (executing.has(child.spawnedBy!.stepId)) return true;
  }
  return false;
}

/** Resume a `blocked` execution when nothing waits any more: `execution.resumed` + dispatch. */
export function resumeIfIdle(ctx: KernelContext, executionId: string, unconditional = false): boolean {
  const execution = ctx.store.getExecution(executionId);
  if (execution === undefined || execution.status !== "blocked") return false;
  if (!unconditional && isWaiting(ctx, executionId)) return false;
  const resumed: ExecutionRow = { ...execution, status: "running", updatedAt: ctx.clock() };
  ctx.store.updateExecution(resumed);
  appendEvent(ctx, executionId, "execution.resumed", executionPayload(resumed, "running"));
  enqueueDispatch(ctx, executionId, ctx.clock());
  return true;
}

/** Block the execution (approval wait or suspend) and retire its dispatches. */
export function blockExecution(
  ctx: KernelContext,
  execution: ExecutionRow,
  reason: string | undefined,
): void {
  const blocked: ExecutionRow = { ...execution, status: "blocked", updatedAt: ctx.clock() };
  ctx.store.updateExecution(blocked);
  appendEvent(
    ctx,
    execution.id,
    "execution.blocked",
    executionPayload(blocked, "blocked", reason === undefined ? undefined : { reason }),
  );
  retireDispatches(ctx, execution.id);
}

/**
 * Move a non-terminal execution to a terminal status and run the follow-ups: retire dispatches,
 * (on cancel) expire its approvals and cancel its executing steps, release the session, settle the
 * parent's step for a subagent, cancel live children. Returns false when it was already terminal.
 */
export function terminate(ctx: KernelContext, execution: ExecutionRow, outcome: TerminalOutcome): boolean {
  const current = ctx.store.getExecution(execution.id);
  if (current === undefined || isTerminalExecution(current.status)) return false;
  const now = ctx.clock();
  const next: ExecutionRow =
    outcome.status === "completed"
      ? {
          ...current,
          status: "completed",
          outputJson: outcome.outputJson,
          stateJson: outcome.stateJson,
          updatedAt: now,
        }
      : { ...current, status: outcome.status, failureReason: outcome.reason, updatedAt: now };
  ctx.store.updateExecution(next);
  const extra: Record<string, unknown> = {};
  if (outcome.status === "completed") {
    if (outcome.outputJson !== undefined) extra.output = new RawJson(outcome.outputJson);
  } else {
    extra.reason = outcome.reason;
  }
  appendEvent(ctx, current.id, `execution.${outcome.status}`, executionPayload(next, outcome.status, extra));
  retireDispatches(ctx, current.id);
  ctx.bus.announceTerminal(current.id, outcome.status);
  if (outcome.status === "cancelled") cancelOpenWork(ctx, current.id, now);
  ctx.metrics.inc("rebuno_executions_finished_total", ["status", outcome.status]);

  if (next.session !== undefined) {
    const pending = ctx.store.listSessionExecutions(next.session).find((e) => e.status === "pending");
    if (pending !== undefined && !sessionOccupied(ctx, next.session)) startExecution(ctx, pending);
  }
  if (next.spawnedBy !== undefined) settleParentStep(ctx, next);
  for (const child of ctx.store.listChildExecutions(current.id)) {
    if (!isTerminalExecution(child.status)) {
      terminate(ctx, child, { status: "cancelled", reason: REASON_PARENT_TERMINAL });
    }
  }
  return true;
}

/** On cancel: pending approvals expire (step denied), executing steps are cancelled (docs/protocol.md §4.6). */
function cancelOpenWork(ctx: KernelContext, executionId: string, now: number): void {
  for (const approval of ctx.store.listPendingApprovals(executionId)) {
    ctx.store.updateApproval({
      ...approval,
      status: "expired",
      rationale: "execution_cancelled",
      decidedAt: now,
    });
    appendEvent(ctx, executionId, "approval.expired", {
      approval_id: approval.id,
      step_id: approval.stepId,
      execution_id: executionId,
      status: "expired",
      rationale: "execution_cancelled",
    });
    const step = ctx.store.getStep(executionId, approval.stepId);
    if (step !== undefined && step.status === "awaiting_approval") {
      denyStep(ctx, step, EXECUTION_CANCELLED_ERROR, undefined);
    }
    ctx.metrics.inc("rebuno_approvals_total", ["outcome", "expired"]);
  }
  for (const step of ctx.store.listStepsWithStatus(executionId, ["executing"])) {
    const cancelled: StepRow = {
      ...step,
      status: "cancelled",
      errorJson: EXECUTION_CANCELLED_ERROR,
      completedAt: now,
    };
    ctx.store.updateStep(cancelled);
    appendEvent(
      ctx,
      executionId,
      "step.cancelled",
      stepPayload(cancelled, { error: new RawJson(EXECUTION_CANCELLED_ERROR) }),
    );
    ctx.metrics.inc("rebuno_step_outcomes_total", ["status", "cancelled"]);
  }
}

/** Record a step as `denied` with `errorJson` and append `step.denied`. */
export function denyStep(
  ctx: KernelContext,
  step: StepRow,
  errorJson: string,
  ruleId: string | undefined,
  policyHash?: string,
): StepRow {
  const denied: StepRow = { ...step, status: "denied", errorJson, completedAt: ctx.clock() };
  ctx.store.updateStep(denied);
  const extra: Record<string, unknown> = { error: new RawJson(errorJson) };
  if (ruleId !== undefined) extra.rule_id = ruleId;
  if (policyHash !== undefined) extra.policy_hash = policyHash;
  appendEvent(ctx, step.executionId, "step.denied", stepPayload(denied, extra));
  ctx.metrics.inc("rebuno_step_outcomes_total", ["status", "denied"]);
  return denied;
}

/**
 * A subagent reached a terminal status: settle the parent's spawning step if it is still
 * `executing` and the parent is live, then resume the parent if it was suspended and nothing else
 * waits (docs/protocol.md §8.5).
 */
export function settleParentStep(ctx: KernelContext, child: ExecutionRow): void {
  const spawnedBy = child.spawnedBy;
  if (spawnedBy === undefined) return;
  const parent = ctx.store.getExecution(spawnedBy.executionId);
  if (parent === undefined || isTerminalExecution(parent.status)) return;
  const step = ctx.store.getStep(parent.id, spawnedBy.stepId);
  if (step === undefined || step.status !== "executing") return;
  const now = ctx.clock();
  let settled: StepRow;
  if (child.status === "completed") {
    settled = { ...step, status: "succeeded", resultJson: child.outputJson ?? "null", completedAt: now };
    ctx.store.updateStep(settled);
    appendEvent(ctx, parent.id, "step.succeeded", stepPayload(settled));
  } else {
    const error = {
      execution_id: child.id,
      failure_reason: child.failureReason ?? "",
      reason: child.status === "cancelled" ? "subagent_cancelled" : "subagent_failed",
    };
    const errorJson = JSON.stringify(error);
    settled = { ...step, status: "failed", errorJson, completedAt: now };
    ctx.store.updateStep(settled);
    appendEvent(ctx, parent.id, "step.failed", stepPayload(settled, { error }));
  }
  ctx.metrics.inc("rebuno_step_outcomes_total", ["status", settled.status]);
  countSettledStep(ctx, settled);
  resumeIfIdle(ctx, parent.id);
}
