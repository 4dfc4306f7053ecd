/**
 * Approval decisions and expiry (docs/protocol.md §11). A decided approval settles its step
 * (`allowed` or `denied`) and resumes the execution when nothing else waits.
 */
import { conflict, forbidden, notFound } from "../errors.js";
import { RESUME_APPROVALS_ONLY_WHEN_IDLE } from "../inferences.js";
import type { ApprovalRow } from "../store/types.js";
import { isTerminalExecution } from "../store/types.js";
import { formatTime } from "../time.js";
import type { KernelContext } from "./context.js";
import { appendEvent, stepPayload } from "./events.js";
import { denyStep, resumeIfIdle } from "./lifecycle.js";

/** A grant or deny request. */
export interface ApprovalDecision {
  readonly approvalId: string;
  readonly grant: boolean;
  readonly decidedBy: string;
  readonly rationale: string | undefined;
}

/** Grant or deny: 404 unknown, 409 not pending, 403 not an approver (nothing recorded). */
export function decideApproval(ctx: KernelContext, d: ApprovalDecision): void {
  const approval = ctx.store.getApproval(d.approvalId);
  if (approval === undefined) throw notFound("approval");
  if (approval.status !== "pending") throw conflict(`approval is ${approval.status}`);
  const approvers = approval.approvers ?? [];
  if (approvers.length > 0 && !approvers.includes(d.decidedBy)) {
    throw forbidden(`${JSON.stringify(d.decidedBy)} is not an approver for this approval`);
  }
  const now = ctx.clock();
  const status = d.grant ? "granted" : "denied";
  const decided: ApprovalRow = {
    ...approval,
    status,
    decidedBy: d.decidedBy,
    decidedAt: now,
    rationale: d.rationale,
  };
  ctx.store.updateApproval(decided);
  const payload: Record<string, unknown> = {
    approval_id: approval.id,
    step_id: approval.stepId,
    execution_id: approval.executionId,
    status,
  };
  // An empty decider (interop O2: the Python SDK omits it) is omitted, never `""`/`null` (D4).
  if (d.decidedBy !== "") payload.decided_by = d.decidedBy;
  if (d.rationale !== undefined && d.rationale !== "") payload.rationale = d.rationale;
  appendEvent(ctx, approval.executionId, `approval.${status}`, payload);
  ctx.metrics.inc("rebuno_approvals_total", ["outcome", status]);
  const step = ctx.store.getStep(approval.executionId, approval.stepId);
  if (step !== undefined && step.status === "awaiting_approval") {
    if (d.grant) {
      const allowed = { ...step, status: "allowed" as const };
      ctx.store.updateStep(allowed);
      // No rule_id: the step was allowed by a human, not by a rule (docs/protocol.md §10.2).
      appendEvent(ctx, approval.executionId, "step.allowed", stepPayload(allowed));
    } else {
      const reason = d.rationale !== undefined && d.rationale !== "" ? d.rationale : "approval_denied";
      denyStep(ctx, step, JSON.stringify({ reason }), undefined);
    }
  }
  resumeAfterApproval(ctx, approval.executionId);
}

function resumeAfterApproval(ctx: KernelContext, executionId: string): void {
  const execution = ctx.store.getExecution(executionId);
  if (execution === undefined || isTerminalExecution(execution.status)) return;
  resumeIfIdle(ctx, executionId, !RESUME_APPROVALS_ONLY_WHEN_IDLE);
}

/** Expire every pending approval whose timeout passed (lifecycle sweep). Returns how many. */
export function expireApprovals(ctx: KernelContext): number {
  const due = ctx.store.listExpiredApprovals(ctx.clock());
  for (const approval of due) {
    ctx.store.transaction(() => {
      const current = ctx.store.getApproval(approval.id);
      if (current === undefined || current.status !== "pending") return;
      ctx.store.updateApproval({
        ...current,
        status: "expired",
        rationale: "timeout",
        decidedAt: ctx.clock(),
      });
      appendEvent(ctx, current.executionId, "approval.expired", {
        approval_id: current.id,
        step_id: current.stepId,
        execution_id: current.executionId,
        status: "expired",
        rationale: "timeout",
      });
      ctx.metrics.inc("rebuno_approvals_total", ["outcome", "expired"]);
      const step = ctx.store.getStep(current.executionId, current.stepId);
      if (step !== undefined && step.status === "awaiting_approval") {
        denyStep(ctx, step, '{"reason":"approval_timeout"}', undefined);
      }
      resumeAfterApproval(ctx, current.executionId);
    });
  }
  return due.length;
}

/** The Approval JSON object (docs/protocol.md §1.4). */
export function approvalView(a: ApprovalRow): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: a.id,
    step_id: a.stepId,
    execution_id: a.executionId,
    status: a.status,
  };
  if (a.approvers !== undefined && a.approvers.length > 0) v.approvers = a.approvers;
  if (a.message !== undefined && a.message !== "") v.message = a.message;
  v.timeout_at = formatTime(a.timeoutAt);
  if (a.decidedBy !== undefined && a.decidedBy !== "") v.decided_by = a.decidedBy;
  if (a.decidedAt !== undefined) v.decided_at = formatTime(a.decidedAt);
  if (a.rationale !== undefined && a.rationale !== "") v.rationale = a.rationale;
  v.created_at = formatTime(a.createdAt);
  return v;
}
