/**
 * Policy for a new step (docs/protocol.md §6.3 steps 4–7, order per docs/protocol.md §16.25): policy match → token budget
 * → judge → rate limit. Pure apart from taking a rate-limit token, which is why a pending judge
 * stops evaluation before the limiter is touched.
 */

import {
  denialReason,
  type JudgeOutcome,
  PERMISSIVE_RESULT,
  type PolicyApproval,
  type PolicyJudge,
  type PolicyResult,
  rateLimitKey,
} from "@rebuno/policy";
import {
  budgetExhausted,
  judgeUnavailableReason,
  RATE_LIMIT_PARK_ONCE_PER_EXECUTION,
} from "../inferences.js";
import type { AgentRow, ExecutionRow, StepKind } from "../store/types.js";
import type { KernelContext } from "./context.js";

/** Judge answers gathered before the write path, keyed by rule id. */
export type JudgeVerdicts = ReadonlyMap<string, JudgeOutcome>;

/** What to do with a new step. */
export type NewStepVerdict =
  | { readonly kind: "allow"; readonly ruleId: string; readonly policyHash: string | undefined }
  | {
      readonly kind: "deny";
      readonly ruleId: string;
      readonly reason: string;
      readonly policyHash: string | undefined;
    }
  | {
      readonly kind: "require_approval";
      readonly ruleId: string;
      readonly policyHash: string | undefined;
      readonly approval: PolicyApproval | undefined;
    }
  | { readonly kind: "rate_limited"; readonly ruleId: string; readonly reason: string }
  | { readonly kind: "park"; readonly ruleId: string; readonly waitMs: number }
  | { readonly kind: "needs_judge"; readonly ruleId: string; readonly judge: PolicyJudge };

/** The step as policy sees it. */
export interface PolicyStep {
  readonly kind: StepKind;
  readonly target: string;
  /** Parsed args (`JSON.parse` of the raw text; `null` when absent). */
  readonly args: unknown;
}

function evaluate(
  ctx: KernelContext,
  execution: ExecutionRow,
  agent: AgentRow | undefined,
  step: PolicyStep,
) {
  const governing = ctx.policies.forExecution(execution, agent);
  if (governing.kind === "none") return { result: PERMISSIVE_RESULT, hash: undefined };
  if (governing.kind === "invalid") {
    const result: PolicyResult = {
      decision: "deny",
      ruleId: "bundle-error",
      reason: "policy_bundle_invalid",
    };
    return { result, hash: undefined };
  }
  const result = governing.policy.evaluate({
    agentId: execution.agentId,
    kind: step.kind,
    target: step.target,
    args: step.args,
  });
  return { result, hash: governing.policy.hash };
}

/** Decide a new step; see the module comment for the order. */
export function decideNewStep(
  ctx: KernelContext,
  execution: ExecutionRow,
  agent: AgentRow | undefined,
  step: PolicyStep,
  verdicts: JudgeVerdicts,
): NewStepVerdict {
  const { result, hash } = evaluate(ctx, execution, agent, step);
  ctx.metrics.inc("rebuno_policy_decisions_total", ["decision", result.decision]);
  let decision: "allow" | "deny" | "require_approval";
  let reason: string | undefined;

  if (result.decision === "judge") {
    const judge = result.judge ?? { threshold: 0.6, fallback: "require_approval" as const };
    if (ctx.config.judgeEndpoint === undefined) {
      decision = "deny";
      reason = judgeUnavailableReason(result.reason);
    } else {
      const verdict = verdicts.get(result.ruleId);
      if (verdict === undefined) return { kind: "needs_judge", ruleId: result.ruleId, judge };
      decision = verdict;
    }
  } else if (result.decision === "allow" && result.budget !== undefined) {
    decision = "allow";
    if (budgetExhausted(execution.tokensUsed, result.budget.maxTokens)) {
      if (result.budget.onExceed === "require_approval") decision = "require_approval";
      else {
        decision = "deny";
        reason = "execution_token_budget_exceeded";
      }
    }
  } else {
    decision = result.decision;
  }

  const limit = result.rateLimit;
  if (limit !== undefined && limit.maxCalls > 0) {
    const key = rateLimitKey(result.ruleId, limit.perWhat, execution.id, execution.agentId);
    let take: ReturnType<typeof ctx.limiter.take> | undefined;
    try {
      take = ctx.limiter.take(key, limit.maxCalls, limit.windowMs);
    } catch {
      take = undefined;
    }
    if (take === undefined) {
      if (limit.onLimiterError === "deny") {
        return { kind: "rate_limited", ruleId: result.ruleId, reason: "rate_limiter_unavailable" };
      }
    } else if (!take.ok) {
      const maxWait = limit.maxWaitMs ?? 0;
      const parkedBefore = RATE_LIMIT_PARK_ONCE_PER_EXECUTION && execution.rateLimitParked;
      if (maxWait > 0 && take.waitMs <= maxWait && !parkedBefore) {
        return { kind: "park", ruleId: result.ruleId, waitMs: take.waitMs };
      }
      return { kind: "rate_limited", ruleId: result.ruleId, reason: "rate_limit_exceeded" };
    }
  }

  switch (decision) {
    case "allow":
      return { kind: "allow", ruleId: result.ruleId, policyHash: hash };
    case "deny":
      return {
        kind: "deny",
        ruleId: result.ruleId,
        reason: reason ?? denialReason(result),
        policyHash: hash,
      };
    default:
      return { kind: "require_approval", ruleId: result.ruleId, policyHash: hash, approval: result.approval };
  }
}
