import { RawJson, stringifyJson } from "@rebuno/protocol";
import type { ExecutionRow, StepRow } from "../store/types.js";
import { formatTime } from "../time.js";
import type { KernelContext } from "./context.js";

/** Append one event to an execution's log (inside the caller's transaction); returns its seq. */
export function appendEvent(
  ctx: KernelContext,
  executionId: string,
  type: string,
  payload: Record<string, unknown>,
): number {
  return ctx.store.appendEvent(executionId, type, stringifyJson(payload), ctx.clock());
}

/** Payload base of `execution.*` events: id, status, and `session` / `deadline_at` when set. */
export function executionPayload(
  execution: ExecutionRow,
  status: string,
  extra?: Record<string, unknown>,
): Record<string, unknown> {
  const p: Record<string, unknown> = { execution_id: execution.id, status };
  if (execution.session !== undefined) p.session = execution.session;
  if (execution.deadlineAt !== undefined) p.deadline_at = formatTime(execution.deadlineAt);
  return extra === undefined ? p : Object.assign(p, extra);
}

/** Payload base of `step.*` events: `step_id`, `step_type` (= kind), `target`. */
export function stepPayload(step: StepRow, extra?: Record<string, unknown>): Record<string, unknown> {
  const p: Record<string, unknown> = { step_id: step.stepId, step_type: step.kind, target: step.target };
  return extra === undefined ? p : Object.assign(p, extra);
}

/** Wrap stored raw JSON text for embedding in a payload or response. */
export function raw(text: string | undefined): RawJson | undefined {
  return text === undefined ? undefined : new RawJson(text);
}
