/**
 * One call that answers "what would the kernel decide for this step?": the entry point of
 * `rebuno policy test` and of anyone checking a bundle outside a running kernel. It runs the very
 * rule matching the kernel runs ({@link CompiledPolicy.evaluate}) and reports the reason text the
 * kernel would give.
 */
import { denialReason } from "./evaluate.js";
import type { CompiledPolicy, PolicyDecision, PolicyResult, PolicyStepKind } from "./types.js";

/** A step to evaluate. */
export interface PolicyStepQuery {
  /** Tool id, model name or local step name (what the SDK submits as `target`). */
  readonly target: string;
  /** Default `tool_call`. */
  readonly kind?: PolicyStepKind | undefined;
  /** The step's arguments as parsed JSON (default `{}`). */
  readonly args?: unknown;
  /** The agent submitting the step, for `agent_id` / `agent_ids` conditions (default `""`). */
  readonly agentId?: string | undefined;
}

/** What the kernel's policy engine decides for one step. */
export interface PolicyStepVerdict {
  /** The matched rule's decision (`judge` means the judge would be asked next). */
  readonly decision: PolicyDecision;
  /** The matching rule's id, or `default` / `local` when no rule matched. */
  readonly ruleId: string;
  /**
   * For `deny`: the exact reason the kernel reports to the agent (the rule's `reason`, else
   * `policy_denied`; `no explicit allow rule matched` for the default deny). For other decisions:
   * the rule's `reason` when set (`default allow` / `local step` for the built-in outcomes).
   */
  readonly reason: string | undefined;
  /** The full result: approval, rate-limit, budget and judge settings of the matching rule. */
  readonly result: PolicyResult;
}

/**
 * Evaluates one step against a compiled bundle with the dev kernel's own engine.
 *
 * Only the rule match is evaluated: a rule's rate limit, token budget and judge depend on a
 * running execution, so they are reported in {@link PolicyStepVerdict.result}, not applied.
 *
 * @example
 * ```ts
 * import { compilePolicyBundle, evaluatePolicyStep } from "@rebuno/policy";
 *
 * const policy = compilePolicyBundle(`
 * default_action: deny
 * rules:
 *   - id: large-refunds
 *     when: { target: refund_issue, arguments: { amount: { regex: "^[0-9]{3,}$" } } }
 *     then: { decision: require_approval, reason: refunds of 100 or more need a person }
 *   - id: refunds
 *     when: { target: refund_issue }
 *     then: { decision: allow }
 * `);
 * const v = evaluatePolicyStep(policy, { target: "refund_issue", args: { amount: 900 } });
 * // v.decision === "require_approval", v.ruleId === "large-refunds"
 * ```
 */
export function evaluatePolicyStep(policy: CompiledPolicy, step: PolicyStepQuery): PolicyStepVerdict {
  const result = policy.evaluate({
    agentId: step.agentId ?? "",
    kind: step.kind ?? "tool_call",
    target: step.target,
    args: step.args === undefined ? {} : step.args,
  });
  const reason = result.decision === "deny" ? denialReason(result) : result.reason;
  return { decision: result.decision, ruleId: result.ruleId, reason, result };
}
