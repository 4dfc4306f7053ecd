/**
 * Public shapes of the policy engine (docs/protocol.md §9). The kernel codes against these; everything
 * else in this package is implementation.
 */

/** What a policy rule decides for a step. `judge` is resolved later by {@link evaluateJudge}. */
export type PolicyDecision = "allow" | "deny" | "require_approval" | "judge";

/** A step kind as submitted by SDKs (docs/protocol.md §1.2). */
export type PolicyStepKind = "tool_call" | "llm_call" | "local";

/** Rate-limit bucket scope (docs/protocol.md §9.5). */
export type RateLimitScope = "execution" | "agent" | "global";

/** What a judge rule resolves to, and its fallback. */
export type JudgeOutcome = "allow" | "deny" | "require_approval";

/** The step being evaluated. */
export interface PolicyInput {
  readonly agentId: string;
  readonly kind: PolicyStepKind;
  readonly target: string;
  /** The step's arguments as a parsed JSON value (`JSON.parse` output). */
  readonly args: unknown;
}

/** `then.approval_config` (docs/protocol.md §9.4). */
export interface PolicyApproval {
  /** Who may decide; empty = anyone. Compared with the request's `decided_by`. */
  approvers: string[];
  /** Omitted when the bundle sets none (or `0s`): the kernel applies `REBUNO_APPROVAL_TIMEOUT`. */
  timeoutMs?: number;
  message?: string;
}

/** `then.rate_limit` (docs/protocol.md §9.5); only present when `max_calls > 0`. */
export interface PolicyRateLimit {
  maxCalls: number;
  windowMs: number;
  perWhat: RateLimitScope;
  /** Present only when `max_wait` is a positive duration: the step may park once per execution. */
  maxWaitMs?: number;
  onLimiterError: "allow" | "deny";
}

/** `then.budget` (docs/protocol.md §9.6); only present on `allow` rules with `max_tokens > 0`. */
export interface PolicyBudget {
  maxTokens: number;
  onExceed: "deny" | "require_approval";
}

/** `then.judge` with defaults applied (docs/protocol.md §9.7); always present on `judge` results. */
export interface PolicyJudge {
  instructions?: string;
  /** Minimum score the judge's answer must reach (default 0.6). */
  threshold: number;
  /** Outcome when the score is too low or the judge fails (default `require_approval`). */
  fallback: JudgeOutcome;
}

/** The outcome of evaluating a bundle against one step. */
export interface PolicyResult {
  decision: PolicyDecision;
  /** The matched rule's id, or `default` / `local` / `permissive`. */
  ruleId: string;
  /**
   * For matched rules: the rule's `reason`, only when the bundle sets a non-empty one (the kernel
   * substitutes `policy_denied` for denials, see {@link denialReason}). The built-in outcomes always
   * carry theirs: `default allow`, `no explicit allow rule matched`, `local step`.
   */
  reason?: string;
  /** Present when the rule has `approval_config`, and always for `require_approval` decisions. */
  approval?: PolicyApproval;
  rateLimit?: PolicyRateLimit;
  budget?: PolicyBudget;
  judge?: PolicyJudge;
}

/** A validated, ready-to-evaluate bundle. */
export interface CompiledPolicy {
  /** Lowercase hex SHA-256 of the bundle's YAML text (`policy_hash` in decision events). */
  readonly hash: string;
  /**
   * The first matching rule wins, in document order or, when the bundle sets `priority`, by
   * ascending priority. Never throws.
   */
  evaluate(input: PolicyInput): PolicyResult;
}

/** Options for {@link compilePolicyBundle}. */
export interface CompilePolicyOptions {
  /** URL of the judge service; `judge` rules are refused unless this is set (non-empty). */
  readonly judgeEndpoint?: string | undefined;
}
