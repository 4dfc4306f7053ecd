import {
  HEADER_AGENT_ID,
  HEADER_DISPATCH_ATTEMPT,
  HEADER_DISPATCH_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  type SigningSecret,
  signRequest,
} from "@rebuno/protocol";
import type { AttemptContext } from "./http-core.js";
import type { DispatchLease } from "./lease.js";

/** Options for {@link createAgentSigner}. */
export interface AgentSignerOptions {
  readonly agentId: string;
  readonly secret: SigningSecret;
  /** Wall clock in ms (default `Date.now`); `Rebuno-Timestamp` is its whole seconds. */
  readonly clock?: (() => number) | undefined;
}

/** Produces the agent headers for one attempt. */
export type AgentSigner = (attempt: AttemptContext, lease?: DispatchLease) => Record<string, string>;

/**
 * The v1 request signer (protocol §3.3) used by the agent transport. Called once per attempt with
 * the final target and body bytes, it reads the clock again, so every retry carries a fresh
 * `Rebuno-Timestamp` and a signature that was never sent before. With a lease it also returns
 * `Rebuno-Dispatch-Id`/`Rebuno-Dispatch-Attempt`, the same values that were signed.
 */
export function createAgentSigner(options: AgentSignerOptions): AgentSigner {
  const { agentId, secret } = options;
  const clock = options.clock ?? Date.now;
  return (ctx, lease) => {
    const timestamp = String(Math.floor(clock() / 1000));
    const dispatchId = lease?.dispatchId;
    const dispatchAttempt = lease === undefined ? undefined : String(lease.attempt);
    const headers: Record<string, string> = {
      [HEADER_AGENT_ID]: agentId,
      [HEADER_TIMESTAMP]: timestamp,
      [HEADER_SIGNATURE]: signRequest({
        secret,
        method: ctx.method,
        target: ctx.target,
        timestamp,
        dispatchId,
        dispatchAttempt,
        body: ctx.body,
      }),
    };
    if (dispatchId !== undefined && dispatchAttempt !== undefined) {
      headers[HEADER_DISPATCH_ID] = dispatchId;
      headers[HEADER_DISPATCH_ATTEMPT] = dispatchAttempt;
    }
    return headers;
  };
}
