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

/**
 * Append an event whose payload is already JSON text (inside the caller's transaction); returns
 * its seq. Hot paths write their small payloads directly instead of building an object for
 * `stringifyJson`; the text must be what `stringifyJson` would give for the equivalent object.
 */
export function appendEventText(ctx: KernelContext, executionId: string, type: string, json: string): number {
  return ctx.store.appendEvent(executionId, type, json, ctx.clock());
}

/**
 * The unclosed JSON text `{"step_id":…,"step_type":…,"target":…` — {@link stepPayload} without
 * extras, minus its closing brace. Add `,"key":value` pairs and `}`.
 */
export function stepPayloadHead(step: StepRow): string {
  return `{"step_id":${jsonString(step.stepId)},"step_type":${jsonString(step.kind)},"target":${jsonString(step.target)}`;
}

/** `,"rule_id":…` plus `,"policy_hash":…` when there is one: the extras of `step.allowed` etc. */
export function ruleFields(ruleId: string, policyHash: string | undefined): string {
  const rule = `,"rule_id":${jsonString(ruleId)}`;
  return policyHash === undefined ? rule : `${rule},"policy_hash":${jsonString(policyHash)}`;
}

/**
 * `JSON.stringify(s)` for a string. Ids, kinds, targets and rule ids are nearly always printable
 * ASCII without `"` or `\`, which JSON.stringify emits as is; quoting them here is about three
 * times faster than the native call on such short strings. Anything else goes to JSON.stringify.
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
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
