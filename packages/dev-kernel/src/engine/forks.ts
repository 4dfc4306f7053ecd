/**
 * Forks (docs/protocol.md §1.9, §4.17): a new execution that reruns the source's input with the same
 * parent, pre-loaded with every source step that reached a terminal outcome at or before event
 * `at_seq`. Step ids include the execution id, so copied steps are re-keyed for the fork (the
 * rerun computes exactly those ids) and replay without policy evaluation.
 */
import { computeStepId, RawJson } from "@rebuno/protocol";
import { conflict, invalid, notFound } from "../errors.js";
import type { ExecutionRow, ResourceRow, StepRow } from "../store/types.js";
import type { KernelContext } from "./context.js";
import { appendEvent, executionPayload } from "./events.js";
import { sessionOccupied, startExecution } from "./lifecycle.js";

/** A validated fork request. */
export interface ForkRequest {
  readonly sourceId: string;
  readonly atSeq: number;
  readonly session: string | undefined;
  /** Already compiled successfully. */
  readonly policyBundle: string | undefined;
}

const TERMINAL_STEP_EVENTS = new Set(["step.succeeded", "step.failed", "step.denied", "step.cancelled"]);

interface Restoration {
  readonly checkpointRef?: string;
  readonly checkpointSeq?: number;
  readonly covered: boolean;
  readonly generation: number;
}

/** Which checkpoint of each resource registered by `atSeq` covers that boundary. */
function restorationAt(
  ctx: KernelContext,
  source: ExecutionRow,
  atSeq: number,
): Map<ResourceRow, Restoration> {
  const out = new Map<ResourceRow, Restoration>();
  for (const r of ctx.store.listResources(source.id)) {
    if (r.registeredSeq > atSeq) continue;
    const c = ctx.store
      .listCheckpoints(source.id, r.key)
      .filter((k) => k.coveredSeq <= atSeq && (k.invalidatedSeq === undefined || atSeq < k.invalidatedSeq))
      .at(-1);
    out.set(
      r,
      c === undefined
        ? { covered: false, generation: 0 }
        : {
            checkpointRef: c.checkpointRef,
            checkpointSeq: c.coveredSeq,
            covered: true,
            generation: c.generation,
          },
    );
  }
  return out;
}

/** Create the fork; returns it (started, since its session is new or absent). */
export function forkExecution(ctx: KernelContext, req: ForkRequest): ExecutionRow {
  const source = ctx.store.getExecution(req.sourceId);
  if (source === undefined) throw notFound("execution");
  const latest = ctx.store.lastEventSeq(source.id);
  if (req.atSeq > latest) throw invalid(`at_seq ${req.atSeq} is beyond the latest event ${latest}`);
  if (req.session !== undefined && ctx.store.listSessionExecutions(req.session).length > 0) {
    throw conflict("the session already has executions");
  }
  const now = ctx.clock();
  const restoration = restorationAt(ctx, source, req.atSeq);
  const restorationJson =
    restoration.size === 0
      ? undefined
      : JSON.stringify(
          Object.fromEntries(
            [...restoration].map(([r, x]) => [
              r.key,
              {
                ...(x.checkpointRef !== undefined ? { checkpoint_ref: x.checkpointRef } : {}),
                ...(x.checkpointSeq !== undefined ? { checkpoint_seq: x.checkpointSeq } : {}),
                covered: x.covered,
              },
            ]),
          ),
        );

  // Steps whose terminal event lies at or before the boundary, in the order they settled.
  const events = ctx.store.listEvents(source.id, 0, req.atSeq);
  const settled: string[] = [];
  for (const e of events) {
    if (!TERMINAL_STEP_EVENTS.has(e.type)) continue;
    const stepId = (JSON.parse(e.payloadJson) as { step_id?: unknown }).step_id;
    if (typeof stepId === "string" && !settled.includes(stepId)) settled.push(stepId);
  }

  const fork: ExecutionRow = {
    id: ctx.newId(),
    agentId: source.agentId,
    agentVersion: source.agentVersion,
    inputJson: source.inputJson,
    status: "pending",
    createdAt: now,
    updatedAt: now,
    deadlineAt: ctx.config.deadlineTimeoutMs === undefined ? undefined : now + ctx.config.deadlineTimeoutMs,
    session: req.session,
    parentExecutionId: source.parentExecutionId,
    forkedFrom: source.id,
    forkSeq: req.atSeq,
    restorationJson,
    policyBundle: req.policyBundle ?? source.policyBundle,
    rateLimitParked: false,
    tokensUsed: 0,
  };
  ctx.store.insertExecution(fork);
  appendEvent(ctx, fork.id, "execution.created", executionPayload(fork, "pending"));
  appendEvent(
    ctx,
    fork.id,
    "execution.forked",
    executionPayload(fork, "pending", {
      source_execution_id: source.id,
      fork_seq: req.atSeq,
      policy_override: req.policyBundle !== undefined,
      restoration: restorationJson === undefined ? {} : new RawJson(restorationJson),
    }),
  );

  const renamed = new Map<string, string>();
  let tokens = 0;
  for (const oldId of settled) {
    const s = ctx.store.getStep(source.id, oldId);
    if (s === undefined) continue;
    const newId = computeStepId(fork.id, s.kind, s.target, s.argsHash, s.occurrence);
    renamed.set(oldId, newId);
    const copy: StepRow = { ...s, executionId: fork.id, stepId: newId };
    ctx.store.insertStep(copy);
    tokens += (s.inputTokens ?? 0) + (s.outputTokens ?? 0);
  }
  // The copied steps' history, ids rewritten (64-hex ids cannot collide with other payload text).
  for (const e of events) {
    if (!e.type.startsWith("step.")) continue;
    const stepId = (JSON.parse(e.payloadJson) as { step_id?: unknown }).step_id;
    const newId = typeof stepId === "string" ? renamed.get(stepId) : undefined;
    if (newId === undefined) continue;
    ctx.store.appendEvent(fork.id, e.type, e.payloadJson.replaceAll(stepId as string, newId), ctx.clock());
  }
  for (const [r, x] of restoration) {
    const seq = appendEvent(ctx, fork.id, "resource.initialized", {
      key: r.key,
      generation: x.generation,
      ...(x.checkpointRef !== undefined ? { checkpoint_ref: x.checkpointRef } : {}),
    });
    ctx.store.putResource({
      ...r,
      executionId: fork.id,
      generation: x.generation,
      count: 0,
      registeredSeq: seq,
      bindingJson: undefined,
      checkpointRef: x.checkpointRef,
    });
  }
  const withTokens = tokens === 0 ? fork : { ...fork, tokensUsed: tokens };
  if (tokens !== 0) ctx.store.updateExecution(withTokens);
  if (withTokens.session !== undefined && sessionOccupied(ctx, withTokens.session)) return withTokens;
  return startExecution(ctx, withTokens);
}
