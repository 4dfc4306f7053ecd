/**
 * Resources and checkpoints (docs/protocol.md §1.10, §4.17). A resource's `generation` advances each time
 * a step that declares it starts executing; a capture must name the current generation, and an
 * accepted capture covers event seqs from the latest one until the next step that changes the
 * resource (`[covered_seq, invalidated_seq)`).
 */
import { createHash } from "node:crypto";
import { canonicalJsonText, RawJson } from "@rebuno/protocol";
import { conflict, notFound } from "../errors.js";
import { EVERY_STEPS_ZERO_DISABLES } from "../inferences.js";
import type { ExecutionRow, ResourceRow, StepRow } from "../store/types.js";
import type { KernelContext } from "./context.js";
import { appendEvent } from "./events.js";

/** A validated registration request. */
export interface ResourceRegistration {
  readonly key: string;
  readonly driverId: string;
  /** Raw JSON text (`"null"` when absent). */
  readonly configurationJson: string;
  readonly coverageReuse: boolean | undefined;
  readonly everySteps: number | undefined;
  readonly onCompletion: boolean | undefined;
}

/** One capture sent with a step outcome or to `/resources/checkpoints`. */
export interface Capture {
  readonly key: string;
  readonly generation: number;
  readonly checkpointRef: string | undefined;
}

/** One capture failure reported by the agent. */
export interface CaptureFailure {
  readonly key: string;
  readonly generation: number;
  readonly error: string;
}

/** `resources` entry of a `proceed` decision. */
export interface ProceedResource {
  readonly key: string;
  readonly generation: number;
  readonly due: boolean;
}

function configurationHash(json: string): string {
  return createHash("sha256").update(canonicalJsonText(json)).digest("hex");
}

function isOpen(ctx: KernelContext, r: ResourceRow): boolean {
  return ctx.store.listCheckpoints(r.executionId, r.key).some((c) => c.invalidatedSeq === undefined);
}

/** The resource view returned by registration. */
export function resourceView(ctx: KernelContext, r: ResourceRow): Record<string, unknown> {
  const view: Record<string, unknown> = {
    key: r.key,
    driver_id: r.driverId,
    configuration: new RawJson(r.configurationJson),
    coverage_reuse: r.coverageReuse,
    every_steps: r.everySteps,
    on_completion: r.onCompletion,
    generation: r.generation,
    count: r.count,
    registered_seq: r.registeredSeq,
  };
  if (r.bindingJson !== undefined) view.binding = new RawJson(r.bindingJson);
  if (r.checkpointRef !== undefined) view.checkpoint_ref = r.checkpointRef;
  view.covered = isOpen(ctx, r);
  return view;
}

/**
 * Register (or re-register) a resource. Identical registrations are idempotent; a different
 * driver, configuration (canonical hash) or `coverage_reuse` → 409. A registration may enable
 * checkpointing on an existing resource. In a session turn, a binding of the same resource in the
 * parent execution is inherited (`resource.bound`).
 */
export function registerResource(
  ctx: KernelContext,
  execution: ExecutionRow,
  reg: ResourceRegistration,
): ResourceRow {
  const hash = configurationHash(reg.configurationJson);
  const existing = ctx.store.getResource(execution.id, reg.key);
  if (existing !== undefined) {
    if (
      existing.driverId !== reg.driverId ||
      existing.configurationHash !== hash ||
      (reg.coverageReuse !== undefined && reg.coverageReuse !== existing.coverageReuse)
    ) {
      throw conflict(
        `resource ${JSON.stringify(reg.key)} is registered with a different driver or configuration`,
      );
    }
    const everySteps = reg.everySteps ?? existing.everySteps;
    const onCompletion = reg.onCompletion ?? existing.onCompletion;
    if (everySteps === existing.everySteps && onCompletion === existing.onCompletion) return existing;
    const updated: ResourceRow = { ...existing, everySteps, onCompletion };
    ctx.store.putResource(updated);
    appendRegistered(ctx, updated);
    return updated;
  }
  const everySteps = normalizeEverySteps(reg.everySteps ?? 0);
  const row: ResourceRow = {
    executionId: execution.id,
    key: reg.key,
    driverId: reg.driverId,
    configurationJson: reg.configurationJson,
    configurationHash: hash,
    coverageReuse: reg.coverageReuse ?? false,
    everySteps,
    onCompletion: reg.onCompletion ?? everySteps > 0,
    generation: 0,
    count: 0,
    registeredSeq: 0,
  };
  // registered_seq is the seq of the resource.registered event itself.
  const seq = appendRegistered(ctx, row);
  let stored: ResourceRow = { ...row, registeredSeq: seq };
  const inherited = inheritedBinding(ctx, execution, stored);
  if (inherited !== undefined) {
    stored = { ...stored, bindingJson: inherited };
    appendEvent(ctx, execution.id, "resource.bound", { key: reg.key, binding: new RawJson(inherited) });
  }
  ctx.store.putResource(stored);
  return stored;
}

function normalizeEverySteps(n: number): number {
  return n === 0 && !EVERY_STEPS_ZERO_DISABLES ? 1 : n;
}

function appendRegistered(ctx: KernelContext, r: ResourceRow): number {
  return appendEvent(ctx, r.executionId, "resource.registered", {
    key: r.key,
    driver_id: r.driverId,
    configuration: new RawJson(r.configurationJson),
    coverage_reuse: r.coverageReuse,
    every_steps: r.everySteps,
    on_completion: r.onCompletion,
  });
}

function inheritedBinding(ctx: KernelContext, execution: ExecutionRow, r: ResourceRow): string | undefined {
  if (execution.parentExecutionId === undefined) return undefined;
  const prior = ctx.store.getResource(execution.parentExecutionId, r.key);
  if (
    prior === undefined ||
    prior.driverId !== r.driverId ||
    prior.configurationHash !== r.configurationHash
  ) {
    return undefined;
  }
  return prior.bindingJson;
}

/** Bind a resource: unknown key → 404, a different binding → 409, the same binding → no-op. */
export function bindResource(
  ctx: KernelContext,
  execution: ExecutionRow,
  key: string,
  bindingJson: string,
): void {
  const r = ctx.store.getResource(execution.id, key);
  if (r === undefined) throw notFound(`resource ${JSON.stringify(key)}`);
  if (r.bindingJson !== undefined) {
    if (canonicalJsonText(r.bindingJson) === canonicalJsonText(bindingJson)) return;
    throw conflict(`resource ${JSON.stringify(key)} is already bound to a different binding`);
  }
  ctx.store.putResource({ ...r, bindingJson });
  appendEvent(ctx, execution.id, "resource.bound", { key, binding: new RawJson(bindingJson) });
}

/** The declared resource keys that are not registered on the execution. */
export function unknownResourceKeys(
  ctx: KernelContext,
  executionId: string,
  keys: readonly string[],
): string[] {
  return keys.filter((k) => ctx.store.getResource(executionId, k) === undefined);
}

/**
 * A step that declares resources starts executing: advance each resource's generation and close
 * its open checkpoint at `executingSeq`. Returns the `proceed` entries.
 */
export function advanceGenerations(
  ctx: KernelContext,
  step: StepRow,
  executingSeq: number,
): ProceedResource[] {
  const out: ProceedResource[] = [];
  for (const key of step.resources) {
    const r = ctx.store.getResource(step.executionId, key);
    if (r === undefined) continue;
    const next: ResourceRow = { ...r, generation: r.generation + 1 };
    ctx.store.putResource(next);
    for (const c of ctx.store.listCheckpoints(step.executionId, key)) {
      if (c.invalidatedSeq === undefined) ctx.store.updateCheckpoint({ ...c, invalidatedSeq: executingSeq });
    }
    out.push(proceedEntry(next));
  }
  return out;
}

/** The `proceed` entries for a step that runs again without a new generation. */
export function currentGenerations(ctx: KernelContext, step: StepRow): ProceedResource[] {
  const out: ProceedResource[] = [];
  for (const key of step.resources) {
    const r = ctx.store.getResource(step.executionId, key);
    if (r !== undefined) out.push(proceedEntry(r));
  }
  return out;
}

function proceedEntry(r: ResourceRow): ProceedResource {
  return {
    key: r.key,
    generation: r.generation,
    due: r.everySteps > 0 && (r.count + 1) % r.everySteps === 0,
  };
}

/** A step that declared resources settled: each resource's `count` increments. */
export function countSettledStep(ctx: KernelContext, step: StepRow): void {
  for (const key of step.resources) {
    const r = ctx.store.getResource(step.executionId, key);
    if (r !== undefined) ctx.store.putResource({ ...r, count: r.count + 1 });
  }
}

/**
 * Record captures and capture failures. Each refused capture appends `resource.checkpoint_failed`
 * with the refusal reason: `unknown_resource`, `missing_checkpoint_ref`, `duplicate_capture`,
 * `stale_generation`, `writers_active`.
 */
export function recordCaptures(
  ctx: KernelContext,
  executionId: string,
  captures: readonly Capture[],
  failures: readonly CaptureFailure[],
): void {
  if (captures.length === 0 && failures.length === 0) return;
  const seen = new Set<string>();
  for (const c of captures) {
    const refusal = captureRefusal(ctx, executionId, c, seen);
    seen.add(c.key);
    if (refusal !== undefined) {
      appendEvent(ctx, executionId, "resource.checkpoint_failed", {
        key: c.key,
        generation: c.generation,
        error: refusal,
      });
      continue;
    }
    const r = ctx.store.getResource(executionId, c.key)!;
    const coveredSeq = ctx.store.lastEventSeq(executionId);
    ctx.store.insertCheckpoint({
      executionId,
      key: c.key,
      generation: c.generation,
      checkpointRef: c.checkpointRef!,
      coveredSeq,
    });
    ctx.store.putResource({ ...r, checkpointRef: c.checkpointRef });
    appendEvent(ctx, executionId, "resource.checkpointed", {
      key: c.key,
      generation: c.generation,
      checkpoint_ref: c.checkpointRef,
      covered_seq: coveredSeq,
    });
  }
  for (const f of failures) {
    appendEvent(ctx, executionId, "resource.checkpoint_failed", {
      key: f.key,
      generation: f.generation,
      error: f.error,
    });
  }
}

function captureRefusal(
  ctx: KernelContext,
  executionId: string,
  c: Capture,
  seen: Set<string>,
): string | undefined {
  const r = ctx.store.getResource(executionId, c.key);
  if (r === undefined) return "unknown_resource";
  if (c.checkpointRef === undefined || c.checkpointRef === "") return "missing_checkpoint_ref";
  if (
    seen.has(c.key) ||
    ctx.store.listCheckpoints(executionId, c.key).some((k) => k.generation === c.generation)
  ) {
    return "duplicate_capture";
  }
  if (c.generation !== r.generation) return "stale_generation";
  const writers = ctx.store
    .listStepsWithStatus(executionId, ["executing"])
    .some((s) => s.resources.includes(c.key));
  if (writers) return "writers_active";
  return undefined;
}
