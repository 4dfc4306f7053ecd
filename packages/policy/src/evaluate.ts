/**
 * Rule matching and result construction (docs/protocol.md §9.3). Compilation (compile.ts) produces
 * {@link CompiledRule}s with every pattern pre-parsed, so evaluation cannot fail.
 */

import type { Glob } from "./glob.js";
import { formatGoValue } from "./go-format.js";
import type { Re2Pattern } from "./re2.js";
import type {
  CompiledPolicy,
  PolicyApproval,
  PolicyBudget,
  PolicyInput,
  PolicyJudge,
  PolicyRateLimit,
  PolicyResult,
  PolicyStepKind,
} from "./types.js";

/** Reason the kernel reports for a denial whose rule sets no `reason` (docs/protocol.md §9.3). */
export const POLICY_DENIED_REASON = "policy_denied";

/** Result for agents (and executions) without any bundle: unrestricted (docs/protocol.md §9.1). */
export const PERMISSIVE_RESULT: PolicyResult = Object.freeze({ decision: "allow", ruleId: "permissive" });

/**
 * The reason text to show the agent for a denial: the rule's `reason`, else `policy_denied`.
 * The same text must be stored on the step so a replayed denial repeats it (docs/protocol.md §6.2).
 */
export function denialReason(result: PolicyResult): string {
  return result.reason !== undefined && result.reason !== "" ? result.reason : POLICY_DENIED_REASON;
}

/**
 * One `arguments.<key>` predicate. Empty strings / lists are "not set", exactly as Go's zero values
 * are in the production kernel (so `equals: ""` next to `contains: x` only checks `contains`).
 */
export interface CompiledArgPredicate {
  readonly key: string;
  readonly equals?: string;
  readonly contains?: string;
  readonly oneOf?: ReadonlySet<string>;
  readonly regex?: Re2Pattern;
}

/** `when`, with every present field pre-compiled; all present fields must match. */
export interface CompiledWhen {
  readonly target?: Glob;
  readonly targets?: readonly Glob[];
  readonly agentId?: string;
  readonly agentIds?: ReadonlySet<string>;
  readonly stepKind?: PolicyStepKind;
  readonly arguments?: readonly CompiledArgPredicate[];
}

/** `then`, validated, with defaults applied where the protocol defines them. */
export interface CompiledThen {
  readonly decision: PolicyResult["decision"];
  readonly reason?: string;
  readonly approval?: Readonly<PolicyApproval>;
  readonly rateLimit?: Readonly<PolicyRateLimit>;
  readonly budget?: Readonly<PolicyBudget>;
  readonly judge?: Readonly<PolicyJudge>;
}

/** A rule ready for evaluation. */
export interface CompiledRule {
  readonly id: string;
  readonly when: CompiledWhen;
  /** The rule's `then` block (named `action` because a `then` property makes objects thenables). */
  readonly action: CompiledThen;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function argumentsMatch(preds: readonly CompiledArgPredicate[], args: unknown): boolean {
  // A non-object (array, scalar, null) can never satisfy an arguments block (docs/protocol.md §9.3).
  if (!isJsonObject(args)) return false;
  for (const p of preds) {
    if (!Object.hasOwn(args, p.key)) return false;
    const text = formatGoValue(args[p.key]);
    if (p.equals !== undefined && text !== p.equals) return false;
    if (p.contains !== undefined && !text.includes(p.contains)) return false;
    if (p.oneOf !== undefined && !p.oneOf.has(text)) return false;
    if (p.regex !== undefined && !p.regex.test(text)) return false;
  }
  return true;
}

function whenMatches(when: CompiledWhen, input: PolicyInput): boolean {
  // Cheap exact checks first; argument stringification last.
  if (when.stepKind !== undefined && when.stepKind !== input.kind) return false;
  if (when.agentId !== undefined && when.agentId !== input.agentId) return false;
  if (when.agentIds !== undefined && !when.agentIds.has(input.agentId)) return false;
  if (when.target !== undefined && !when.target.test(input.target)) return false;
  if (when.targets !== undefined && !when.targets.some((g) => g.test(input.target))) return false;
  if (when.arguments !== undefined && !argumentsMatch(when.arguments, input.args)) return false;
  return true;
}

/** Builds a fresh result so callers may mutate it without touching the compiled rule. */
function resultFor(rule: CompiledRule): PolicyResult {
  const t = rule.action;
  const result: PolicyResult = { decision: t.decision, ruleId: rule.id };
  if (t.reason !== undefined) result.reason = t.reason;
  if (t.approval !== undefined) result.approval = { ...t.approval, approvers: [...t.approval.approvers] };
  if (t.rateLimit !== undefined) result.rateLimit = { ...t.rateLimit };
  if (t.budget !== undefined) result.budget = { ...t.budget };
  if (t.judge !== undefined) result.judge = { ...t.judge };
  return result;
}

/** Assembles a {@link CompiledPolicy} from validated rules. */
export function createCompiledPolicy(
  hash: string,
  rules: readonly CompiledRule[],
  defaultAllow: boolean,
): CompiledPolicy {
  return {
    hash,
    evaluate(input: PolicyInput): PolicyResult {
      for (const rule of rules) {
        if (whenMatches(rule.when, input)) return resultFor(rule);
      }
      if (input.kind === "local") return { decision: "allow", ruleId: "local", reason: "local step" };
      return defaultAllow
        ? { decision: "allow", ruleId: "default", reason: "default allow" }
        : { decision: "deny", ruleId: "default", reason: "no explicit allow rule matched" };
    },
  };
}
