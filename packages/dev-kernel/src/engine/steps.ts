/**
 * Step submission (docs/protocol.md §6.1–6.3, docs/protocol.md §5.3). `submitStep` is synchronous and runs inside one
 * store transaction; if a judge rule needs an (async) answer it returns `needs_judge` before
 * writing anything but the lease renewal, and the route calls it again with the answer — every
 * check is then repeated against the state at that moment.
 */

import type { PolicyJudge } from "@rebuno/policy";
import { argsHashFromText, computeStepId, RawJson } from "@rebuno/protocol";
import { forbidden, invalid, notFound } from "../errors.js";
import { RATE_LIMITED_EVENT_HAS_STEP_ID, REPLAYED_DENIAL_HAS_RULE_ID } from "../inferences.js";
import type { ApprovalRow, ExecutionRow, Idempotency, StepKind, StepRow } from "../store/types.js";
import { isTerminalExecution } from "../store/types.js";
import { tracePolicyDecision } from "../tracing.js";
import type { KernelContext } from "./context.js";
import { decideNewStep, type JudgeVerdicts } from "./decide.js";
import { appendEvent, appendEventText, ruleFields, stepPayload, stepPayloadHead } from "./events.js";
import { type Lease, requireLiveLease } from "./leases.js";
import { blockExecution, enqueueDispatch } from "./lifecycle.js";
import {
  advanceGenerations,
  currentGenerations,
  type ProceedResource,
  unknownResourceKeys,
} from "./resources.js";
import { copyStep } from "./rows.js";

/** A parsed, validated `POST /steps` request. */
export interface SubmitRequest {
  readonly executionId: string;
  readonly agentId: string;
  readonly lease: Lease;
  readonly kind: StepKind;
  readonly target: string;
  /** Raw JSON text of `args`, undefined when absent. */
  readonly argsJson: string | undefined;
  /** Parsed `args` (`null` when absent), for policy matching. */
  readonly args: unknown;
  readonly idempotency: Idempotency;
  readonly resources: readonly string[];
}

/** The StepDecision body (docs/protocol.md §4.8). */
export type StepDecision = Record<string, unknown> & { readonly decision: string };

/** Result of one pass of {@link submitStep}. */
export type SubmitResult =
  | { readonly kind: "decision"; readonly body: StepDecision }
  | { readonly kind: "needs_judge"; readonly ruleId: string; readonly judge: PolicyJudge };

const NO_RESOURCES: readonly string[] = Object.freeze([]);

const INDETERMINATE_ERROR =
  '{"message":"outcome unknown: this may already have taken effect. Check the state before continuing.","reason":"indeterminate"}';
const INDETERMINATE_RETRY_REASON = "prior attempt outcome unknown; retry refused";
const INDETERMINATE_RETRY_ERROR = JSON.stringify({
  reason: INDETERMINATE_RETRY_REASON,
  rule_id: "__indeterminate_retry",
});

/** Look up the execution for an agent route: 404 when unknown, 403 when another agent's. */
export function agentExecution(ctx: KernelContext, executionId: string, agentId: string): ExecutionRow {
  const execution = ctx.store.getExecution(executionId);
  if (execution === undefined) throw notFound("execution");
  if (execution.agentId !== agentId) throw forbidden("execution belongs to another agent");
  return execution;
}

function decision(body: StepDecision): SubmitResult {
  return { kind: "decision", body };
}

/** One pass of the submission algorithm. */
export function submitStep(ctx: KernelContext, req: SubmitRequest, verdicts: JudgeVerdicts): SubmitResult {
  const execution = agentExecution(ctx, req.executionId, req.agentId);
  if (isTerminalExecution(execution.status)) return decision({ decision: "execution_terminal" });
  requireLiveLease(ctx, execution.id, req.lease);

  let argsHash: string;
  try {
    argsHash = argsHashFromText(req.argsJson);
  } catch (err) {
    throw invalid(`invalid args: ${(err as Error).message}`);
  }
  const consumed = ctx.store.getOccurrence(req.lease.dispatchId, req.kind, req.target, argsHash);
  const occurrence = consumed === undefined ? 0 : consumed + 1;
  const stepId = computeStepId(execution.id, req.kind, req.target, argsHash, occurrence);
  // Recorded outcomes consume the occurrence; refusals (terminal, blocked, rate limited) do not.
  const existing = ctx.store.getStep(execution.id, stepId);
  if (existing !== undefined) {
    const body = replayExisting(ctx, execution, existing, req.idempotency);
    if (body.decision !== "execution_terminal") consume(ctx, req, argsHash, occurrence);
    ctx.metrics.inc("rebuno_replay_hits_total");
    return decision(body);
  }

  if (execution.status === "blocked") return decision({ decision: "execution_blocked" });
  const now = ctx.clock();
  // One shared empty list: most steps declare no resources and the row lives as long as the run.
  const resources =
    req.kind === "llm_call" || req.resources.length === 0 ? NO_RESOURCES : [...new Set(req.resources)];
  // Every field present, in `copyStep`'s order: one hidden class for all step rows (rows.ts).
  const base: StepRow = {
    executionId: execution.id,
    stepId,
    kind: req.kind,
    target: req.target,
    argsHash,
    occurrence,
    status: "proposed",
    idempotency: req.idempotency,
    argsJson: req.argsJson,
    resultJson: undefined,
    errorJson: undefined,
    resources,
    inputTokens: undefined,
    outputTokens: undefined,
    createdAt: now,
    startedAt: undefined,
    completedAt: undefined,
  };

  if (req.idempotency === "at_most_once") {
    const prior = ctx.store.listFailedStepsForCall(execution.id, req.kind, req.target, argsHash);
    if (prior.some((s) => isIndeterminate(s.errorJson))) {
      recordProposed(ctx, base);
      const denied: StepRow = {
        ...base,
        status: "denied",
        errorJson: INDETERMINATE_RETRY_ERROR,
        completedAt: now,
      };
      ctx.store.updateStep(denied);
      appendEvent(
        ctx,
        execution.id,
        "step.denied",
        stepPayload(denied, {
          rule_id: "__indeterminate_retry",
          error: new RawJson(INDETERMINATE_RETRY_ERROR),
        }),
      );
      consume(ctx, req, argsHash, occurrence);
      return decision({
        decision: "denied",
        step_id: stepId,
        reason: INDETERMINATE_RETRY_REASON,
        rule_id: "__indeterminate_retry",
      });
    }
  }

  const unknown = unknownResourceKeys(ctx, execution.id, resources);
  if (unknown.length > 0) throw invalid(`unknown resource ${JSON.stringify(unknown[0])}`);

  const agent = ctx.store.getAgent(execution.agentId);
  const verdict = decideNewStep(ctx, execution, agent, req, verdicts);
  if (verdict.kind !== "needs_judge") {
    tracePolicyDecision({
      executionId: execution.id,
      kind: req.kind,
      target: req.target,
      decision: verdict.kind,
      ruleId: verdict.ruleId,
      reason: "reason" in verdict ? verdict.reason : undefined,
    });
  }
  switch (verdict.kind) {
    case "needs_judge":
      return { kind: "needs_judge", ruleId: verdict.ruleId, judge: verdict.judge };
    case "rate_limited":
    case "park": {
      const reason = verdict.kind === "park" ? "rate_limit_exceeded" : verdict.reason;
      const payload: Record<string, unknown> = {
        step_type: req.kind,
        target: req.target,
        rule_id: verdict.ruleId,
        reason,
      };
      if (RATE_LIMITED_EVENT_HAS_STEP_ID) payload.step_id = stepId;
      appendEvent(ctx, execution.id, "step.rate_limited", payload);
      ctx.metrics.inc("rebuno_rate_limit_total", ["outcome", verdict.kind === "park" ? "parked" : "refused"]);
      if (verdict.kind === "rate_limited") return decision({ decision: "rate_limited", reason });
      const d = ctx.store.getDispatch(req.lease.dispatchId)!;
      ctx.store.updateDispatch({ ...d, status: "exhausted" });
      ctx.store.updateExecution({ ...execution, rateLimitParked: true, updatedAt: now });
      enqueueDispatch(ctx, execution.id, now + Math.ceil(verdict.waitMs));
      return decision({ decision: "blocked", reason });
    }
    case "deny": {
      recordProposed(ctx, base);
      const errorJson = JSON.stringify({ reason: verdict.reason, rule_id: verdict.ruleId });
      const denied: StepRow = { ...base, status: "denied", errorJson, completedAt: now };
      ctx.store.updateStep(denied);
      const extra: Record<string, unknown> = { rule_id: verdict.ruleId, error: new RawJson(errorJson) };
      if (verdict.policyHash !== undefined) extra.policy_hash = verdict.policyHash;
      appendEvent(ctx, execution.id, "step.denied", stepPayload(denied, extra));
      consume(ctx, req, argsHash, occurrence);
      return decision({
        decision: "denied",
        step_id: stepId,
        reason: verdict.reason,
        rule_id: verdict.ruleId,
      });
    }
    case "require_approval": {
      recordProposed(ctx, base);
      const waiting: StepRow = { ...base, status: "awaiting_approval" };
      ctx.store.updateStep(waiting);
      const extra: Record<string, unknown> = { rule_id: verdict.ruleId };
      if (verdict.policyHash !== undefined) extra.policy_hash = verdict.policyHash;
      appendEvent(ctx, execution.id, "step.awaiting_approval", stepPayload(waiting, extra));
      const approval: ApprovalRow = {
        id: ctx.newId(),
        executionId: execution.id,
        stepId,
        status: "pending",
        approvers: verdict.approval?.approvers,
        message: verdict.approval?.message,
        timeoutAt: now + (verdict.approval?.timeoutMs ?? ctx.config.approvalTimeoutMs),
        createdAt: now,
      };
      ctx.store.insertApproval(approval);
      appendEvent(ctx, execution.id, "approval.requested", {
        approval_id: approval.id,
        step_id: stepId,
        execution_id: execution.id,
        status: "pending",
      });
      blockExecution(ctx, ctx.store.getExecution(execution.id)!, undefined);
      consume(ctx, req, argsHash, occurrence);
      return decision({ decision: "blocked", step_id: stepId, approval_id: approval.id });
    }
    default: {
      // The allowed path (nearly every step): its three events share one payload head, and its row
      // is written once, already executing (its proposed state never outlives this transaction).
      const head = stepPayloadHead(base);
      appendEventText(ctx, execution.id, "step.proposed", `${head}}`);
      const allowed = `${head}${ruleFields(verdict.ruleId, verdict.policyHash)}}`;
      appendEventText(ctx, execution.id, "step.allowed", allowed);
      const executing = startExecuting(ctx, base, head, "insert");
      consume(ctx, req, argsHash, occurrence);
      return decision(proceedBody(ctx, execution.id, stepId, executing));
    }
  }
}

function consume(ctx: KernelContext, req: SubmitRequest, argsHash: string, occurrence: number): void {
  ctx.store.setOccurrence(req.lease.dispatchId, req.kind, req.target, argsHash, occurrence);
}

function recordProposed(ctx: KernelContext, step: StepRow): void {
  ctx.store.insertStep(step);
  appendEventText(ctx, step.executionId, "step.proposed", `${stepPayloadHead(step)}}`);
}

const NO_ENTRIES: readonly ProceedResource[] = Object.freeze([]);

/**
 * Move a step to `executing` (appends `step.executing`, advances resource generations); `"insert"`:
 * the step is not stored yet and is written in this state.
 */
function startExecuting(
  ctx: KernelContext,
  step: StepRow,
  head = stepPayloadHead(step),
  write: "insert" | "update" = "update",
): readonly ProceedResource[] {
  const executing = copyStep(step);
  executing.status = "executing";
  executing.startedAt = ctx.clock();
  if (write === "insert") ctx.store.insertStep(executing);
  else ctx.store.updateStep(executing);
  if (executing.resources.length === 0) {
    appendEventText(ctx, step.executionId, "step.executing", `${head}}`);
    return NO_ENTRIES;
  }
  // The event carries the generations the step will produce, so it is appended after the seq it
  // takes is known: the open checkpoints are invalidated at exactly this event.
  const seq = ctx.store.lastEventSeq(step.executionId) + 1;
  const entries = advanceGenerations(ctx, executing, seq);
  const generations: Record<string, number> = {};
  for (const e of entries) generations[e.key] = e.generation;
  appendEvent(
    ctx,
    step.executionId,
    "step.executing",
    stepPayload(executing, { resources: entries.map((e) => e.key), generations }),
  );
  return entries;
}

function proceedBody(
  ctx: KernelContext,
  executionId: string,
  stepId: string,
  entries: readonly ProceedResource[],
): StepDecision {
  const body: Record<string, unknown> & { decision: string } = { decision: "proceed", step_id: stepId };
  if (entries.length > 0 || ctx.store.listResources(executionId).length > 0) body.resources = entries;
  return body;
}

function isIndeterminate(errorJson: string | undefined): boolean {
  if (errorJson === undefined) return false;
  try {
    const e = JSON.parse(errorJson) as { reason?: unknown } | null;
    return typeof e === "object" && e !== null && e.reason === "indeterminate";
  } catch {
    return false;
  }
}

function storedError(errorJson: string | undefined): { reason?: unknown; rule_id?: unknown } {
  if (errorJson === undefined) return {};
  try {
    const e: unknown = JSON.parse(errorJson);
    return typeof e === "object" && e !== null ? (e as { reason?: unknown; rule_id?: unknown }) : {};
  } catch {
    return {};
  }
}

/** docs/protocol.md §6.2: answer for a step that already exists. Policy is not re-evaluated. */
function replayExisting(
  ctx: KernelContext,
  execution: ExecutionRow,
  step: StepRow,
  idempotency: Idempotency,
): StepDecision {
  switch (step.status) {
    case "succeeded":
      return { decision: "replay", step_id: step.stepId, result: new RawJson(step.resultJson ?? "null") };
    case "failed":
      return { decision: "replay", step_id: step.stepId, error: new RawJson(step.errorJson ?? "null") };
    case "awaiting_approval": {
      const approval = ctx.store.findPendingApprovalForStep(execution.id, step.stepId);
      const body: Record<string, unknown> & { decision: string } = {
        decision: "blocked",
        step_id: step.stepId,
      };
      if (approval !== undefined) body.approval_id = approval.id;
      return body;
    }
    case "allowed":
    case "proposed":
      return proceedBody(ctx, execution.id, step.stepId, startExecuting(ctx, step));
    case "executing": {
      if (idempotency === "at_most_once") {
        const failed: StepRow = {
          ...step,
          status: "failed",
          errorJson: INDETERMINATE_ERROR,
          completedAt: ctx.clock(),
        };
        ctx.store.updateStep(failed);
        appendEvent(
          ctx,
          execution.id,
          "step.failed",
          stepPayload(failed, { error: new RawJson(INDETERMINATE_ERROR) }),
        );
        ctx.metrics.inc("rebuno_step_outcomes_total", ["status", "failed"]);
        return { decision: "replay", step_id: step.stepId, error: new RawJson(INDETERMINATE_ERROR) };
      }
      return proceedBody(ctx, execution.id, step.stepId, currentGenerations(ctx, step));
    }
    case "denied": {
      const e = storedError(step.errorJson);
      const body: Record<string, unknown> & { decision: string } = {
        decision: "denied",
        step_id: step.stepId,
        reason: typeof e.reason === "string" && e.reason !== "" ? e.reason : "policy_denied",
      };
      if (REPLAYED_DENIAL_HAS_RULE_ID && typeof e.rule_id === "string") body.rule_id = e.rule_id;
      return body;
    }
    default:
      // `cancelled` steps only exist on terminal executions, answered before this point.
      return { decision: "execution_terminal" };
  }
}
