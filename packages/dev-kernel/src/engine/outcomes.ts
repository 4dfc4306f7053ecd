/**
 * Agent writes that settle work: step complete/fail (docs/protocol.md §6.5), heartbeat, suspend (docs/protocol.md §8.4)
 * and the execution's own complete/fail (docs/protocol.md §4.13). All synchronous, inside one transaction.
 */

import { extractUsage } from "@rebuno/policy";
import { RawJson } from "@rebuno/protocol";
import { conflict, executionTerminal, notFound } from "../errors.js";
import { OUTCOME_CONFLICT_STATUSES, REASON_AWAITING_STEPS } from "../inferences.js";
import { isTerminalExecution, isTerminalStep } from "../store/types.js";
import type { KernelContext } from "./context.js";
import { appendEvent, appendEventText, stepPayload, stepPayloadHead } from "./events.js";
import { type Lease, requireCurrentLease, requireLiveLease } from "./leases.js";
import { blockExecution, isWaiting, terminate } from "./lifecycle.js";
import { type Capture, type CaptureFailure, countSettledStep, recordCaptures } from "./resources.js";
import { copyStep } from "./rows.js";
import { agentExecution } from "./steps.js";

/** A parsed step outcome. */
export interface StepOutcomeRequest {
  readonly executionId: string;
  readonly agentId: string;
  readonly lease: Lease;
  readonly stepId: string;
  readonly status: "succeeded" | "failed";
  /** Raw JSON of `result` / `error`; undefined when the body omitted it. */
  readonly valueJson: string | undefined;
  readonly captures: readonly Capture[];
  readonly captureFailures: readonly CaptureFailure[];
}

/** Record a step outcome; answers `recorded`, `replay` or `execution_terminal`. */
export function recordStepOutcome(
  ctx: KernelContext,
  req: StepOutcomeRequest,
): Readonly<Record<string, unknown>> {
  const execution = agentExecution(ctx, req.executionId, req.agentId);
  const step = ctx.store.getStep(execution.id, req.stepId);
  if (step === undefined) throw notFound("step");
  if (isTerminalExecution(execution.status)) return { decision: "execution_terminal" };
  requireCurrentLease(ctx, execution.id, req.lease);
  if (OUTCOME_CONFLICT_STATUSES.has(step.status)) throw conflict(`the step is in status ${step.status}`);
  if (isTerminalStep(step.status)) {
    // Already settled (e.g. by a subagent): the stored outcome wins and is replayed.
    if (step.status === "succeeded")
      return { decision: "replay", result: new RawJson(step.resultJson ?? "null") };
    return { decision: "replay", error: new RawJson(step.errorJson ?? "null") };
  }
  const now = ctx.clock();
  // A copy with assignments rather than spreads: one hidden class for every step row (rows.ts).
  const settled = copyStep(step);
  settled.completedAt = now;
  if (req.status === "succeeded") {
    settled.status = "succeeded";
    settled.resultJson = req.valueJson;
    if (step.kind === "llm_call") {
      const extra: Record<string, unknown> = {};
      const usage = req.valueJson === undefined ? undefined : extractUsage(req.valueJson);
      if (usage === undefined) ctx.metrics.inc("rebuno_llm_usage_missing_total");
      else {
        settled.inputTokens = usage.inputTokens;
        settled.outputTokens = usage.outputTokens;
        extra.usage = { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
        ctx.store.updateExecution({
          ...execution,
          tokensUsed: execution.tokensUsed + usage.inputTokens + usage.outputTokens,
          updatedAt: now,
        });
      }
      ctx.store.updateStep(settled);
      appendEvent(ctx, execution.id, "step.succeeded", stepPayload(settled, extra));
    } else {
      ctx.store.updateStep(settled);
      appendEventText(ctx, execution.id, "step.succeeded", `${stepPayloadHead(settled)}}`);
    }
  } else {
    const errorJson = req.valueJson ?? "null";
    settled.status = "failed";
    settled.errorJson = errorJson;
    ctx.store.updateStep(settled);
    appendEvent(ctx, execution.id, "step.failed", stepPayload(settled, { error: new RawJson(errorJson) }));
  }
  ctx.metrics.inc("rebuno_step_outcomes_total", ["status", settled.status]);
  countSettledStep(ctx, settled);
  recordCaptures(ctx, execution.id, req.captures, req.captureFailures);
  return RECORDED;
}

/** The `recorded` answer (shared: routes recognize it and send its text as is). */
export const RECORDED: Readonly<Record<string, unknown>> = Object.freeze({ decision: "recorded" });

/** `POST /heartbeat`: renew the live lease. */
export function heartbeat(ctx: KernelContext, executionId: string, agentId: string, lease: Lease): void {
  const execution = agentExecution(ctx, executionId, agentId);
  requireLiveLease(ctx, execution.id, lease);
}

/** `POST /suspend` (docs/protocol.md §8.4): block with `awaiting_steps` when every wait is external. */
export function suspend(ctx: KernelContext, executionId: string, agentId: string, lease: Lease): boolean {
  const execution = agentExecution(ctx, executionId, agentId);
  if (isTerminalExecution(execution.status)) throw executionTerminal();
  requireLiveLease(ctx, execution.id, lease);
  if (!isWaiting(ctx, execution.id)) return false;
  blockExecution(ctx, ctx.store.getExecution(execution.id)!, REASON_AWAITING_STEPS);
  return true;
}

/** The agent ends its execution (docs/protocol.md §4.13). */
export function finishExecution(
  ctx: KernelContext,
  executionId: string,
  agentId: string,
  lease: Lease,
  outcome:
    | { status: "completed"; outputJson: string | undefined; stateJson: string | undefined }
    | { status: "failed"; reason: string },
): void {
  const execution = agentExecution(ctx, executionId, agentId);
  if (isTerminalExecution(execution.status)) throw executionTerminal();
  requireLiveLease(ctx, execution.id, lease);
  terminate(ctx, ctx.store.getExecution(execution.id)!, outcome);
}

/** Record captures sent on their own (`POST /resources/checkpoints`). */
export function publishCheckpoints(
  ctx: KernelContext,
  executionId: string,
  agentId: string,
  lease: Lease,
  captures: readonly Capture[],
  failures: readonly CaptureFailure[],
): void {
  const execution = agentExecution(ctx, executionId, agentId);
  if (isTerminalExecution(execution.status)) throw executionTerminal();
  requireLiveLease(ctx, execution.id, lease);
  recordCaptures(ctx, execution.id, captures, failures);
}
