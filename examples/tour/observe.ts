/**
 * Seeing what the kernel answered the agent. Replays leave no event in the kernel's log (nothing
 * changes), so the tour watches the agent's own kernel calls: an agent built with this `fetch`
 * reports every step submission that came back `replay`, with the recorded value it returned.
 */

/** A step submission the kernel answered with `replay`: the body did not run. */
export interface ReplaySeen {
  readonly executionId: string;
  readonly kind: string;
  readonly target: string;
  /** The recorded result, or the recorded error when the step had failed. */
  readonly value: unknown;
  readonly failed: boolean;
}

const SUBMIT = /^\/v0\/executions\/([^/]+)\/steps$/;

/** A `fetch` for `AgentOptions.fetch` that calls `onReplay` for every replayed step. */
export function replayObservingFetch(
  onReplay: (seen: ReplaySeen) => void,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const match = request.method === "POST" ? SUBMIT.exec(new URL(request.url).pathname) : null;
    const sent = match === null ? undefined : await request.clone().text();
    const response = await fetch(request);
    if (match !== null && sent !== undefined && response.ok) {
      const answer = (await response.clone().json()) as {
        decision?: string;
        result?: unknown;
        error?: unknown;
      };
      if (answer.decision === "replay") {
        const submitted = JSON.parse(sent) as { step_type?: string; kind?: string; target?: string };
        const failed = answer.error !== undefined && answer.error !== null;
        onReplay({
          executionId: decodeURIComponent(match[1]!),
          kind: submitted.step_type ?? submitted.kind ?? "step",
          target: submitted.target ?? "?",
          value: failed ? answer.error : (answer.result ?? null),
          failed,
        });
      }
    }
    return response;
  };
}
