/**
 * Refusal markers: an LLM call refused by the kernel (or a Rebuno-aware gateway) comes back as a
 * provider error whose body is `{"error":{"type":"rebuno_refusal","message":"rebuno_refusal:
 * <decision>[ reason=<why>]"}}`. Provider SDKs wrap that in their own errors; this maps it back
 * to the Rebuno control-flow error (docs/protocol.md §14.3).
 */
import { Blocked, LeaseSuperseded, PolicyError, RateLimited, Terminated } from "@rebuno/protocol";

const MARKER = /rebuno_refusal: (\w+)(?: reason=([^\n"]*))?/;
const MAX_DEPTH = 10;

function mapDecision(decision: string, rawReason: string | undefined): Error | undefined {
  const reason = rawReason?.replace(/['"}\s]+$/, "") || undefined;
  switch (decision) {
    case "blocked":
    case "execution_blocked":
      return new Blocked("step blocked", { reason });
    case "execution_terminal":
      return new Terminated(reason ?? "execution is terminal");
    case "lease_superseded":
      return new LeaseSuperseded();
    case "denied":
      return new PolicyError(reason ?? "policy_denied", { reason: reason ?? "policy_denied" });
    case "rate_limited":
      return new RateLimited(reason ?? "rate_limit_exceeded");
    default:
      return undefined;
  }
}

// Structured first (G12): provider errors often keep the parsed body as `error` or `body`.
function structuredMessage(value: object): string | undefined {
  for (const key of ["error", "body"] as const) {
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner === "object" && inner !== null) {
      const e = (inner as { error?: unknown }).error ?? inner;
      if (typeof e === "object" && e !== null && (e as { type?: unknown }).type === "rebuno_refusal") {
        const m = (e as { message?: unknown }).message;
        if (typeof m === "string") return m;
      }
    }
  }
  return undefined;
}

/**
 * The Rebuno error a refusal-carrying error stands for, or undefined when `error` (and its
 * `cause` chain, up to 10 deep) carries no refusal marker.
 */
export function refusalFromError(error: unknown): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === "object" && current !== null; depth++) {
    const text = structuredMessage(current) ?? (current as { message?: unknown }).message;
    if (typeof text === "string") {
      const match = MARKER.exec(text);
      if (match !== null) {
        const mapped = mapDecision(match[1] as string, match[2]);
        if (mapped !== undefined) return mapped;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Throws the Rebuno error behind a provider error that carries a refusal marker; returns
 * normally otherwise. Use it in a framework's catch block to let blocks and denials escape.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { openai } from "@ai-sdk/openai";
 * import { raiseForRefusal } from "@rebuno/sdk";
 * import { generateText } from "ai";
 *
 * try {
 *   await generateText({ model: openai("gpt-4o-mini"), prompt: "Summarise the ticket" });
 * } catch (err) {
 *   raiseForRefusal(err); // a refusal the provider reported becomes the execution's failure
 *   throw err;
 * }
 * ```
 */
export function raiseForRefusal(error: unknown): void {
  const mapped = refusalFromError(error);
  if (mapped !== undefined) throw mapped;
}
