/**
 * Rebuno's policy engine (docs/protocol.md §9), as the dev kernel and `rebuno policy test` run it:
 * bundle compilation and evaluation, token-bucket rate limits, LLM usage extraction for budgets, and
 * the optional judge.
 *
 * Kernel-side order for a new step (docs/protocol.md §6.3, §16.25): `evaluate` → budget (`result.budget`
 * with {@link extractUsage} totals) → judge ({@link evaluateJudge}) → rate limit
 * ({@link createRateLimiter} / {@link rateLimitKey}) → record. Denials use {@link denialReason}.
 */

export { compilePolicyBundle } from "./compile.js";
export { DurationSyntaxError, parseGoDuration } from "./duration.js";
export { denialReason, PERMISSIVE_RESULT, POLICY_DENIED_REASON } from "./evaluate.js";
export { compileGlob, type Glob, GlobSyntaxError } from "./glob.js";
export { formatGoFloat, formatGoValue } from "./go-format.js";
export {
  DEFAULT_JUDGE_TIMEOUT_MS,
  evaluateJudge,
  type JudgeFetch,
  type JudgeRequest,
} from "./judge.js";
export { createRateLimiter, type RateLimiter, type RateLimitTake, rateLimitKey } from "./rate-limit.js";
export { compileRe2, type Re2Pattern, RegexSyntaxError } from "./re2.js";
export { evaluatePolicyStep, type PolicyStepQuery, type PolicyStepVerdict } from "./step.js";
export type {
  CompiledPolicy,
  CompilePolicyOptions,
  JudgeOutcome,
  PolicyApproval,
  PolicyBudget,
  PolicyDecision,
  PolicyInput,
  PolicyJudge,
  PolicyRateLimit,
  PolicyResult,
  PolicyStepKind,
  RateLimitScope,
} from "./types.js";
export { extractUsage, type LlmUsage } from "./usage.js";
