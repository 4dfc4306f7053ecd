/**
 * The one path every recorded call takes (tools, `step()`, LLM calls): submit → act on the
 * decision → run the body under its own frame → capture → record. Kept allocation-light: the
 * body is invoked through `AsyncLocalStorage.run`'s argument list instead of a fresh closure,
 * and args/results are serialized exactly once (the text travels as `RawJson`).
 */

import {
  Blocked,
  LeaseSuperseded,
  PolicyError,
  RateLimited,
  RawJson,
  RebunoError,
  Terminated,
  ToolError,
  toWireJson,
} from "@rebuno/protocol";
import type { CallSpec } from "../tool-spec.js";
import { type CallState, LockHandle } from "./call-state.js";
import { captureDue } from "./captures.js";
import { type ExecutionContext, type Frame, frames, kState } from "./context.js";
import { isControlFlow } from "./control-flow.js";
import type { StepDecisionLike, StepResourceRef } from "./kernel-port.js";
import { deniedToolError, errorMessage, recordedFailureText, toolErrorFromRecord } from "./tool-failure.js";
import { validateWith } from "./validate.js";

/** A body as the runtime calls it: `this` is the toolbox instance (or undefined). */
export type CallBody = (this: unknown, args: never) => unknown;

/**
 * How a tool call meets a policy denial: `"result"` resolves to the tool's `formatDenial`
 * rendering (what frameworks hand the LLM), `"throw"` rejects with a `ToolError` whose reason is
 * `denied` (direct calls from code, whose declared return type cannot hold the denial).
 */
export type DenialMode = "result" | "throw";

function invokeBody(body: CallBody, self: unknown, args: unknown): unknown {
  return body.call(self, args as never);
}

/**
 * Runs one recorded call inside `frame`'s execution. Returns the body's JSON-normalized result
 * (the value a replay returns), the replayed result, or — for tools — the denial rendering.
 *
 * Every `await` here is on a real promise and there are three on the happy path (submit, body,
 * complete): on Node 20 the context's AsyncLocalStorage makes each promise and each `await` pay
 * a promise-hook call, so a sync body, no captures and no input schema cost no extra turn.
 */
export async function runCall(
  frame: Frame,
  spec: CallSpec,
  args: unknown,
  body: CallBody,
  self: unknown,
  denialMode: DenialMode = "result",
): Promise<unknown> {
  const ctx = frame.ctx;
  if (ctx.suspension !== undefined) return haltIn(frame, ctx.suspension);
  if (spec.input !== undefined) args = await validateWith(spec.input, args, `${spec.target}: invalid input`);
  // Strict JSON before anything leaves the process: a TypeError names the offending path.
  const argsText = toWireJson(args, "args");
  const state = ctx[kState];
  state.inFlight++;
  let lock: LockHandle | undefined;
  try {
    if (!frame.holdsLock && state.resources.size > 0) {
      lock = new LockHandle(state);
      await lock.take();
    }
    const decision = await state.port.submitStep(ctx.id, ctx.lease, {
      kind: spec.kind,
      target: spec.target,
      args: new RawJson(argsText),
      idempotency: spec.idempotency,
      resources: spec.resources,
    });
    if (decision.decision !== "proceed") return settleDecision(frame, spec, decision, denialMode);
    const stepId = decision.stepId ?? "";
    const step: Frame = {
      ctx,
      stepId,
      target: spec.target,
      holdsLock: lock !== undefined || frame.holdsLock,
      depth: frame.depth + 1,
      lock,
      parent: frame,
      suspendedWithin: false,
    };
    state.onCurrentStep?.(spec.target);
    let text: string;
    try {
      let value = frames.run(step, invokeBody, body, self, args);
      if (isThenable(value)) value = await value;
      if (spec.toResult !== undefined) value = spec.toResult(value);
      if (spec.output !== undefined)
        value = await validateWith(spec.output, value, `${spec.target}: invalid output`);
      // A result that is not strict JSON fails the step here, before it could be left executing.
      text = toWireJson(value, "result");
    } catch (error) {
      if (isControlFlow(error)) throw error;
      // A ToolError already about this step (a settled subagent) was built from its record.
      const failure =
        ToolError.isInstance(error) && error.stepId === stepId && error.toolId === spec.target
          ? error
          : toolErrorFromRecord(
              { message: recordedFailureText(error, spec.target) },
              spec.target,
              stepId,
              error,
            );
      await failStep(ctx, state, stepId, failure.failure, decision.resources);
      throw failure;
    } finally {
      state.onCurrentStep?.(undefined);
    }
    // A body that swallowed a suspension met inside it (possible only outside an agent dispatch,
    // where calls reject instead of parking) must not record a result: the step still waits.
    if (step.suspendedWithin && ctx.suspension !== undefined) return haltIn(frame, ctx.suspension);
    const due = decision.resources;
    const captures = isCaptureDue(state, due) ? await captureDue(state, due) : undefined;
    const result = new RawJson(text);
    await state.port.completeStep(
      ctx.id,
      ctx.lease,
      stepId,
      captures === undefined ? { result } : { result, ...captures },
    );
    // Return what a replay will return: the JSON round trip of the recorded value.
    return JSON.parse(text);
  } finally {
    lock?.release();
    state.inFlight--;
    if (state.inFlight > 0) state.checkIdle();
  }
}

// `await` on a non-promise still costs a promise and a turn; sync step bodies skip it.
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

// Captures run only for resources the kernel marked on the decision and this dispatch registered.
function isCaptureDue(
  state: CallState,
  due: readonly StepResourceRef[] | undefined,
): due is readonly StepResourceRef[] {
  return due !== undefined && due.length > 0 && state.resources.size > 0;
}

/** Stops the call that runs in `frame` with the suspension (see `CallState.halt`). */
export function haltIn(frame: Frame, suspension: Blocked | Terminated): Promise<never> {
  for (let f: Frame | undefined = frame; f !== undefined; f = f.parent) f.suspendedWithin = true;
  return frame.ctx[kState].halt(suspension);
}

function settleDecision(
  frame: Frame,
  spec: CallSpec,
  decision: StepDecisionLike,
  denialMode: DenialMode,
): unknown {
  const ctx = frame.ctx;
  switch (decision.decision) {
    case "replay":
      if (decision.error !== undefined && decision.error !== null) {
        throw toolErrorFromRecord(decision.error, spec.target, decision.stepId);
      }
      return decision.result ?? null;
    case "denied": {
      const reason = decision.reason || "policy_denied";
      const error = new PolicyError(reason, { reason, ruleId: decision.ruleId });
      if (spec.formatDenial !== undefined) {
        if (denialMode === "throw") throw deniedToolError(spec.target, decision.stepId, error);
        return spec.formatDenial(spec.target, error);
      }
      // G12: a swallowed step/LLM denial must still fail the execution.
      ctx.denial = error;
      throw error;
    }
    case "rate_limited":
      throw new RateLimited(decision.reason || "rate_limit_exceeded");
    case "blocked":
    case "execution_blocked":
      return haltIn(
        frame,
        new Blocked("step blocked", { reason: decision.reason, approvalId: decision.approvalId }),
      );
    case "execution_terminal": {
      const terminated = new Terminated();
      const halted = haltIn(frame, terminated);
      ctx[kState].onTerminal?.(terminated);
      return halted;
    }
    default:
      throw new RebunoError(`unexpected step decision: ${decision.decision}`);
  }
}

async function failStep(
  ctx: ExecutionContext,
  state: CallState,
  stepId: string,
  message: string,
  due: readonly StepResourceRef[] | undefined,
): Promise<void> {
  const captures = isCaptureDue(state, due) ? await captureDue(state, due) : undefined;
  const error = { message };
  try {
    await state.port.failStep(
      ctx.id,
      ctx.lease,
      stepId,
      captures === undefined ? { error } : { error, ...captures },
    );
  } catch (error) {
    if (LeaseSuperseded.isInstance(error)) throw error;
    (state.logger.error ?? state.logger.warn).call(
      state.logger,
      `failed to record step failure for step_id=${stepId}`,
      {
        executionId: ctx.id,
        error: errorMessage(error),
      },
    );
  }
}
