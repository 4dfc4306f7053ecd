/**
 * `decision: judge` for the dev kernel (docs/protocol.md §9.7).
 *
 * The production kernel asks TypeSafe's hosted model. The dev kernel cannot, so it talks to a
 * user-configured HTTP endpoint instead, and only accepts judge rules when one is configured
 * (see `compilePolicyBundle`'s `judgeEndpoint`).
 *
 * Wire contract (ours, since the dev kernel defines it):
 *
 * ```text
 * POST <endpoint>
 * Content-Type: application/json
 *
 * {"agent_id": "<agent>", "tool": "<step target>", "arguments": <step args JSON>,
 *  "instructions": "<rule judge.instructions>"}        // instructions omitted when unset
 *
 * 200 OK
 * {"decision": "allow" | "deny" | "require_approval", "score": <number 0..1>}
 * ```
 *
 * The judge's decision is used when `score >= threshold`; otherwise, and on any failure (network
 * error, timeout, non-2xx status, malformed body), the rule's `fallback` applies. The judge never
 * makes the step fail outright, matching "unreachable model → fallback".
 */

import type { JudgeOutcome } from "./types.js";

/** What the judge is asked about. */
export interface JudgeRequest {
  readonly agentId: string;
  readonly target: string;
  /** The step's parsed JSON arguments. */
  readonly args: unknown;
  readonly instructions?: string | undefined;
}

/** The subset of `fetch` the judge needs (global `fetch` satisfies it). */
export type JudgeFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ readonly ok: boolean; json(): Promise<unknown> }>;

/** Default time the judge may take before the fallback applies. */
export const DEFAULT_JUDGE_TIMEOUT_MS = 10_000;

const OUTCOMES: ReadonlySet<string> = new Set<JudgeOutcome>(["allow", "deny", "require_approval"]);

/**
 * Asks the judge endpoint about a step and resolves to the decision to apply. Never rejects.
 *
 * @param endpoint - The configured judge URL.
 * @param request - Agent, target, arguments and the rule's instructions.
 * @param threshold - Minimum `score` for the judge's decision to count.
 * @param fallback - Outcome for a low score or any failure.
 * @param fetchImpl - Injectable `fetch` (defaults to the global one).
 * @param timeoutMs - Abort the request after this long (default 10 s).
 */
export async function evaluateJudge(
  endpoint: string,
  request: JudgeRequest,
  threshold: number,
  fallback: JudgeOutcome,
  fetchImpl: JudgeFetch = globalThis.fetch,
  timeoutMs: number = DEFAULT_JUDGE_TIMEOUT_MS,
): Promise<JudgeOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const body = JSON.stringify({
      agent_id: request.agentId,
      tool: request.target,
      arguments: request.args ?? null,
      ...(request.instructions ? { instructions: request.instructions } : {}),
    });
    const res = await fetchImpl(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
      signal: controller.signal,
    });
    if (!res.ok) return fallback;
    const answer: unknown = await res.json();
    if (typeof answer !== "object" || answer === null) return fallback;
    const { decision, score } = answer as { decision?: unknown; score?: unknown };
    if (typeof decision !== "string" || !OUTCOMES.has(decision)) return fallback;
    if (typeof score !== "number" || !Number.isFinite(score) || score < threshold) return fallback;
    return decision as JudgeOutcome;
  } catch {
    // Unreachable, timed out, or not JSON: the rule's fallback decides (docs/protocol.md §9.7).
    return fallback;
  } finally {
    clearTimeout(timer);
  }
}
