/**
 * Compact copies of strings the memory store keeps for the life of an execution (B8 heap budget).
 *
 * V8 builds *cons* strings for `JSON.stringify` and `+` (a tree of parts, ≈ 100 extra bytes for a
 * 130-character event payload) and *sliced* strings for `slice` (keeping the whole parent alive: a
 * step's `args` retained the entire request body); on B8 that was ≈ 40 % of the per-step heap.
 * Concatenating a one-character head with the rest and reading a character makes V8 flatten the
 * result into a new sequential string: an exact, independent copy (elsewhere merely a copy).
 * Strings under 13 characters are never cons or sliced.
 */
import type { ExecutionRow, StepRow } from "./types.js";

const MIN_LAZY_LENGTH = 13;

/** An equal string that holds no references to other strings (see the module comment). */
export function compactString(s: string): string {
  if (s.length < MIN_LAZY_LENGTH) return s;
  const copy = s.slice(0, 1) + s.slice(1);
  copy.charCodeAt(0); // flattens the cons in place
  return copy;
}

/**
 * The text to keep for a raw JSON field: the previous version's (already compact) when the text
 * did not change, else a compact copy. Strings compare by content, so "unchanged" cannot tell the
 * compact copy from the caller's lazy original — which is why the row is always rebuilt below.
 */
function keep(prev: string | undefined, next: string | undefined): string | undefined {
  return next === undefined ? undefined : prev === next ? prev : compactString(next);
}

/** `row` with its raw JSON fields compact, reusing `prev`'s unchanged ones (B8). */
export function compactStep(row: StepRow, prev: StepRow | undefined): StepRow {
  return {
    ...row,
    argsJson: keep(prev?.argsJson, row.argsJson),
    resultJson: keep(prev?.resultJson, row.resultJson),
    errorJson: keep(prev?.errorJson, row.errorJson),
  };
}

/** Same for an execution's raw JSON fields. */
export function compactExecution(row: ExecutionRow, prev: ExecutionRow | undefined): ExecutionRow {
  return {
    ...row,
    inputJson: keep(prev?.inputJson, row.inputJson) ?? row.inputJson,
    outputJson: keep(prev?.outputJson, row.outputJson),
    stateJson: keep(prev?.stateJson, row.stateJson),
  };
}
