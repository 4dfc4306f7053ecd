/**
 * `rebunoFetch`: a `fetch` for LLM provider SDKs that records every model call as an `llm_call`
 * step. On a rerun the recorded response is served instead of calling the provider, so a resumed
 * handler sees exactly what the first run saw (docs/protocol.md §14.3).
 */

import { SubmissionOutcomeUnknown } from "@rebuno/kernel-transport";
import {
  Blocked,
  LeaseSuperseded,
  PolicyError,
  RawJson,
  RebunoError,
  Terminated,
  toWireJson,
} from "@rebuno/protocol";
import type { CallState } from "../runtime/call-state.js";
import { type ExecutionContext, type Frame, frames, kState } from "../runtime/context.js";
import type { StepDecisionLike } from "../runtime/kernel-port.js";
import { errorMessage } from "../runtime/tool-failure.js";
import { isEventStream, type LlmRecord, responseFromRecord, responseWithText } from "./record.js";
import { refusalFor, refusalResponse } from "./refusal-response.js";
import { teeStream } from "./stream-tee.js";

/** Options of {@link createRebunoFetch}. */
export interface RebunoFetchOptions {
  /** The fetch that reaches the provider (default the global `fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * The step args for a request body (default: the body). Drop volatile fields here (random
   * cache keys, request ids, timestamps) so a rerun finds the recorded call (G11).
   */
  readonly identity?: (body: Record<string, unknown>) => unknown;
  /** The step target policy matches on (default: the body's `model`, or `""`). */
  readonly target?: (url: string, body: Record<string, unknown>) => string;
}

type FetchInput = Parameters<typeof globalThis.fetch>[0];
type FetchInit = Parameters<typeof globalThis.fetch>[1];

const warned = new WeakSet<ExecutionContext>();

// Only JSON-object bodies are LLM calls; anything else passes through unrecorded (F27).
async function bodyText(input: FetchInput, init: FetchInit): Promise<string | undefined> {
  const body = init?.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(body));
  if (body === undefined && input instanceof Request && input.body !== null) return input.clone().text();
  return undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function urlOf(input: FetchInput): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/**
 * Creates a recording `fetch` for provider SDKs.
 *
 * Outside an execution, and for bodies that are not a JSON object, it simply forwards. Inside
 * one, each call is a `llm_call` step (target = the request's `model`): `proceed` forwards and
 * records `{status, headers: {content-type}, body}` (error statuses too; streams are teed and
 * recorded whole), `replay` rebuilds the recorded response, and refusals answer with a
 * `rebuno_refusal` response (403, or 429 when rate limited) that {@link raiseForRefusal} maps back.
 * Blocks and denials are also remembered on the execution context, so a framework that swallows
 * them cannot make the execution look successful.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { createOpenAI } from "@ai-sdk/openai";
 * import { createRebunoFetch } from "@rebuno/sdk";
 * import { generateText } from "ai";
 *
 * // The cache key changes per request: leave it out of the recorded call's identity.
 * const openai = createOpenAI({
 *   fetch: createRebunoFetch({ identity: ({ prompt_cache_key, ...rest }) => rest }),
 * });
 * const { text } = await generateText({ model: openai("gpt-4o-mini"), prompt: "Say hello" });
 * ```
 */
export function createRebunoFetch(options: RebunoFetchOptions = {}): typeof globalThis.fetch {
  const inner = options.fetch ?? ((input: FetchInput, init?: FetchInit) => globalThis.fetch(input, init));
  return async (input: FetchInput, init?: FetchInit): Promise<Response> => {
    const frame = frames.getStore();
    if (frame === undefined) return inner(input, init);
    const text = await bodyText(input, init);
    const body = text === undefined ? undefined : parseObject(text);
    if (body === undefined) {
      if (text === undefined && init?.body != null && !warned.has(frame.ctx)) {
        warned.add(frame.ctx);
        frame.ctx[kState].logger.warn(
          "rebunoFetch: a request body that is not JSON text was sent unrecorded",
          {
            executionId: frame.ctx.id,
          },
        );
      }
      return inner(input, init);
    }
    const target = options.target?.(urlOf(input), body) ?? String(body.model ?? "");
    const args = options.identity === undefined ? body : options.identity(body);
    return llmCall(frame, target, args, () => inner(input, init));
  };
}

/** `createRebunoFetch()` over the global fetch. */
export const rebunoFetch: typeof globalThis.fetch = createRebunoFetch();

async function llmCall(
  frame: Frame,
  target: string,
  args: unknown,
  send: () => Promise<Response>,
): Promise<Response> {
  const ctx = frame.ctx;
  if (ctx.suspension !== undefined) return refusalFor(ctx.suspension) as Response;
  const argsText = toWireJson(args, "args");
  const state = ctx[kState];
  state.inFlight++;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    state.inFlight--;
    if (state.inFlight > 0) state.checkIdle();
  };
  let streaming = false;
  try {
    let decision: StepDecisionLike;
    try {
      decision = await state.port.submitStep(ctx.id, ctx.lease, {
        kind: "llm_call",
        target,
        args: new RawJson(argsText),
        idempotency: "safe_to_retry",
        resources: [],
      });
    } catch (error) {
      if (Terminated.isInstance(error)) ctx.suspension ??= error;
      if (SubmissionOutcomeUnknown.isInstance(error)) return refusalResponse("lease_superseded", 409);
      const refusal = refusalFor(error);
      if (refusal !== undefined) return refusal;
      throw error;
    }
    switch (decision.decision) {
      case "proceed": {
        const response = await forward(ctx, state, decision.stepId ?? "", send, end);
        streaming = !ended;
        return response;
      }
      case "replay":
        if (decision.error !== undefined && decision.error !== null) {
          const e = decision.error as { message?: unknown; reason?: unknown };
          throw new RebunoError(
            typeof e.message === "string" ? e.message : String(e.reason ?? "llm call failed"),
          );
        }
        return responseFromRecord(decision.result);
      case "denied": {
        const reason = decision.reason || "policy_denied";
        ctx.denial = new PolicyError(reason, { reason, ruleId: decision.ruleId });
        return refusalResponse("denied", 403, reason);
      }
      case "rate_limited":
        return refusalResponse("rate_limited", 429, decision.reason || "rate_limit_exceeded");
      case "blocked":
      case "execution_blocked":
        ctx.suspension ??= new Blocked("step blocked", {
          reason: decision.reason,
          approvalId: decision.approvalId,
        });
        return refusalResponse(decision.decision, 403);
      case "execution_terminal": {
        const terminated = new Terminated();
        ctx.suspension ??= terminated;
        state.onTerminal?.(terminated);
        return refusalResponse("execution_terminal", 403);
      }
      default:
        throw new RebunoError(`unexpected step decision: ${decision.decision}`);
    }
  } finally {
    if (!streaming) end();
  }
}

async function failQuietly(
  ctx: ExecutionContext,
  state: CallState,
  stepId: string,
  error: unknown,
): Promise<void> {
  try {
    await state.port.failStep(ctx.id, ctx.lease, stepId, { error: { message: errorMessage(error) } });
  } catch (failure) {
    if (LeaseSuperseded.isInstance(failure)) return;
    state.logger.warn(`failed to record step failure for step_id=${stepId}`, {
      error: errorMessage(failure),
    });
  }
}

async function forward(
  ctx: ExecutionContext,
  state: CallState,
  stepId: string,
  send: () => Promise<Response>,
  end: () => void,
): Promise<Response> {
  let response: Response;
  try {
    response = await send();
  } catch (error) {
    await failQuietly(ctx, state, stepId, error);
    throw error;
  }
  if (
    response.status < 400 &&
    response.body !== null &&
    isEventStream(response.headers.get("content-type"))
  ) {
    const port = state.port;
    const stream = teeStream(response, {
      delta: (seq, data) => {
        port.publishStreamDelta?.(ctx.id, ctx.lease, stepId, { seq, data }).catch(() => {});
      },
      record: async (record) => {
        await port.completeStep(ctx.id, ctx.lease, stepId, { result: record });
      },
      fail: (error) => failQuietly(ctx, state, stepId, error),
      done: end,
    });
    return responseWithText(stream, response);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    await failQuietly(ctx, state, stepId, error);
    throw error;
  }
  const record: LlmRecord = {
    status: response.status,
    headers: { "content-type": response.headers.get("content-type") || "application/json" },
    body: text,
  };
  await state.port.completeStep(ctx.id, ctx.lease, stepId, { result: record });
  return responseWithText(text, response);
}
