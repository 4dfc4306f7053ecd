/**
 * Copies of store rows with every field present, always in the same order.
 *
 * `{ ...row, status }` gives each combination of present optional fields its own hidden class (a
 * new step has no `startedAt`, an executing one has no `completedAt`, the store's compact copy adds
 * more), so the spreads and property reads on the agent hot path went megamorphic and V8 fell back
 * to its runtime for them. Rows copied here share one hidden class from creation on; callers then
 * assign the fields that change, which is exactly what a spread with overrides does.
 */
import type { DispatchRow, StepRow } from "../store/types.js";

/** A row type whose fields may be assigned. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** An exact copy of `s` (absent optional fields become present and `undefined`). */
export function copyStep(s: StepRow): Mutable<StepRow> {
  return {
    executionId: s.executionId,
    stepId: s.stepId,
    kind: s.kind,
    target: s.target,
    argsHash: s.argsHash,
    occurrence: s.occurrence,
    status: s.status,
    idempotency: s.idempotency,
    argsJson: s.argsJson,
    resultJson: s.resultJson,
    errorJson: s.errorJson,
    resources: s.resources,
    inputTokens: s.inputTokens,
    outputTokens: s.outputTokens,
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
  };
}

/** An exact copy of `d` (absent optional fields become present and `undefined`). */
export function copyDispatch(d: DispatchRow): Mutable<DispatchRow> {
  return {
    id: d.id,
    executionId: d.executionId,
    status: d.status,
    attempt: d.attempt,
    maxAttempts: d.maxAttempts,
    nextAttemptAt: d.nextAttemptAt,
    lockedBy: d.lockedBy,
    lockedAt: d.lockedAt,
    leaseMs: d.leaseMs,
    createdAt: d.createdAt,
  };
}
