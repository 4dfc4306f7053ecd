/**
 * Refusals as HTTP responses (docs/protocol.md §14.3): a refused LLM call answers with a synthetic
 * response instead of throwing, so the provider SDK neither retries nor rewraps a thrown error.
 * The body carries the `rebuno_refusal` marker that `raiseForRefusal` parses back.
 */
import { Blocked, LeaseSuperseded, PolicyError, RateLimited, Terminated } from "@rebuno/protocol";

/** Builds the refusal response for a decision. `reason` is included for denials and rate limits. */
export function refusalResponse(decision: string, status: number, reason?: string): Response {
  const message = `rebuno_refusal: ${decision}${reason === undefined ? "" : ` reason=${reason}`}`;
  return new Response(JSON.stringify({ error: { type: "rebuno_refusal", message } }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** The refusal response standing for a control-flow error. */
export function refusalFor(error: unknown): Response | undefined {
  if (Blocked.isInstance(error)) return refusalResponse("blocked", 403);
  if (Terminated.isInstance(error)) return refusalResponse("execution_terminal", 403);
  if (LeaseSuperseded.isInstance(error)) return refusalResponse("lease_superseded", 409);
  if (PolicyError.isInstance(error)) return refusalResponse("denied", 403, error.reason);
  if (RateLimited.isInstance(error)) return refusalResponse("rate_limited", 429, error.reason);
  return undefined;
}
