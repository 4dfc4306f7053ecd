import {
  ConfigurationError,
  HEADER_AGENT_ID,
  HEADER_DISPATCH_ATTEMPT,
  HEADER_DISPATCH_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  type KernelProtocol,
  type RequestSigningInput,
  type SigningSecret,
  signRequest,
  signRequestAsync,
  webhookSignature,
} from "@rebuno/protocol";
import type { DispatchLease } from "./lease.js";
import type { AttemptContext } from "./request.js";

/** Options for {@link createAgentSigner}. */
export interface AgentSignerOptions {
  readonly agentId: string;
  readonly secret: SigningSecret;
  /** Wall clock in ms (default `Date.now`); `Rebuno-Timestamp` is its whole seconds. */
  readonly clock?: (() => number) | undefined;
  /**
   * Sign through WebCrypto (`crypto.subtle`, asynchronous) instead of the synchronous HMAC. The
   * agent transport does this on the fetch engine, whose attempts are asynchronous anyway; the
   * undici engine keeps the synchronous path. Same header values either way.
   */
  readonly webCrypto?: boolean | undefined;
  /** Signature scheme (default `"v1"`); `"legacy"`: see {@link legacySigner}. */
  readonly protocol?: KernelProtocol | undefined;
}

/** Produces the agent headers for one attempt. */
export type AgentSigner = (attempt: AttemptContext, lease?: DispatchLease) => Record<string, string>;

/** {@link AgentSigner} through WebCrypto: the same headers, asynchronously. */
export type AsyncAgentSigner = (
  attempt: AttemptContext,
  lease?: DispatchLease,
) => Promise<Record<string, string>>;

/**
 * The request signer of the agent transport: v1 (docs/protocol.md §3.3) by default, or the legacy scheme. Called once per attempt with
 * the final target and body bytes, it reads the clock again, so every retry carries a fresh
 * `Rebuno-Timestamp` and a signature that was never sent before. With a lease it also returns
 * `Rebuno-Dispatch-Id`/`Rebuno-Dispatch-Attempt`, the same values that were signed.
 */
export function createAgentSigner(
  options: AgentSignerOptions & { readonly webCrypto?: false | undefined },
): AgentSigner;
export function createAgentSigner(
  options: AgentSignerOptions & { readonly webCrypto: true },
): AsyncAgentSigner;
export function createAgentSigner(options: AgentSignerOptions): AgentSigner | AsyncAgentSigner;
export function createAgentSigner(options: AgentSignerOptions): AgentSigner | AsyncAgentSigner {
  const { agentId, secret } = options;
  if (options.protocol === "legacy") {
    const sign = legacySigner(agentId, secret);
    return options.webCrypto === true ? async (ctx, lease) => sign(ctx, lease) : sign;
  }
  const clock = options.clock ?? Date.now;
  const fields = (ctx: AttemptContext, lease: DispatchLease | undefined) => {
    const timestamp = String(Math.floor(clock() / 1000));
    const dispatchId = lease?.dispatchId;
    const dispatchAttempt = lease === undefined ? undefined : String(lease.attempt);
    const input: RequestSigningInput & { readonly secret: SigningSecret } = {
      secret,
      method: ctx.method,
      target: ctx.target,
      timestamp,
      dispatchId,
      dispatchAttempt,
      body: ctx.body,
    };
    return input;
  };
  const headers = (input: RequestSigningInput, signature: string): Record<string, string> => {
    const out: Record<string, string> = {
      [HEADER_AGENT_ID]: agentId,
      [HEADER_TIMESTAMP]: String(input.timestamp),
      [HEADER_SIGNATURE]: signature,
    };
    if (input.dispatchId !== undefined && input.dispatchAttempt !== undefined) {
      out[HEADER_DISPATCH_ID] = input.dispatchId;
      out[HEADER_DISPATCH_ATTEMPT] = String(input.dispatchAttempt);
    }
    return out;
  };
  if (options.webCrypto === true) {
    return async (ctx, lease) => {
      const input = fields(ctx, lease);
      let signature: string;
      try {
        signature = await signRequestAsync(input);
      } catch (error) {
        // Never a network failure: nothing was sent, and retrying cannot help.
        if (error instanceof ConfigurationError) throw error;
        throw new ConfigurationError(`signing the request failed: ${String(error)}`, { cause: error });
      }
      return headers(input, signature);
    };
  }
  return (ctx, lease) => {
    const input = fields(ctx, lease);
    return headers(input, signRequest(input));
  };
}

/**
 * The legacy Go kernel's agent signature (its hmacAuthMiddleware): `sha256=<hex HMAC-SHA256(secret,
 * raw body)>`, the very formula of webhook signatures, with `Rebuno-Agent-Id` and, under a lease,
 * `Rebuno-Dispatch-Id`. No timestamp and no attempt: that kernel has neither. The method and target
 * are not signed, so a body-less request (GET, heartbeat) always carries the same signature.
 */
function legacySigner(agentId: string, secret: SigningSecret): AgentSigner {
  return (ctx, lease) => {
    const headers: Record<string, string> = {
      [HEADER_AGENT_ID]: agentId,
      [HEADER_SIGNATURE]: webhookSignature(secret, ctx.body),
    };
    if (lease !== undefined) headers[HEADER_DISPATCH_ID] = lease.dispatchId;
    return headers;
  };
}
