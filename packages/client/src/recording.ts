/**
 * Building a recording (format `rebuno.recording/1`, see `parseRecording` of `@rebuno/protocol`
 * and docs/recordings.schema.json) from what the kernel's bearer routes report. What a kernel
 * does not record (the legacy generation has no rule ids on allowed steps, no sessions, no
 * previous state) is left out, never invented.
 */
import {
  type Event,
  type Execution,
  type KernelProtocol,
  RECORDING_FORMAT,
  type RecordedApproval,
  type RecordedExecution,
  type RecordedStep,
  type Recording,
  type Step,
} from "@rebuno/protocol";

/** Options of `Client.exportRecording`. */
export interface ExportRecordingOptions {
  /** Also export the subagents it spawned, recursively. */
  readonly children?: boolean | undefined;
}

/** The reads a recording needs (a `Client` has them all). */
export interface RecordingSource {
  /** The kernel generation (what it records differs, docs/protocol.md §15). */
  readonly protocol: KernelProtocol;
  /** The execution. */
  get(id: string): Promise<Execution>;
  /** Its steps, in any order. */
  listSteps(id: string): Promise<Step[]>;
  /** A page of its events after `afterSeq`. */
  events(id: string, options: { afterSeq?: number; limit?: number }): Promise<Event[]>;
  /** The state its session's previous turn handed over. */
  previous(id: string): Promise<unknown>;
  /** Executions, newest first (to find subagents). */
  listAll(options: { readonly limit?: number }): AsyncGenerator<Execution, void, undefined>;
}

const PAGE = 1000;

async function allEvents(source: RecordingSource, id: string): Promise<Event[]> {
  const out: Event[] = [];
  for (;;) {
    const page = await source.events(id, { afterSeq: out.at(-1)?.eventSeq ?? 0, limit: PAGE });
    out.push(...page);
    if (page.length < PAGE) return out;
  }
}

type Payload = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The decision, rule, reason and approval of one step, read from its events (docs/protocol.md §10.2, §10.4 of that file). */
function decisionOf(stepId: string, events: readonly Event[]): Partial<RecordedStep> {
  let decision: RecordedStep["decision"];
  let ruleId: string | undefined;
  let reason: string | undefined;
  let approval: RecordedApproval | undefined;
  for (const e of events) {
    const p = e.payload as Payload;
    if (p.step_id !== stepId) continue;
    if (e.type === "step.allowed" || e.type === "step.denied" || e.type === "step.awaiting_approval") {
      decision =
        e.type === "step.allowed" ? "allowed" : e.type === "step.denied" ? "denied" : "awaiting_approval";
      const error = (p.error ?? {}) as Payload;
      ruleId = str(p.rule_id) ?? str(error.rule_id) ?? ruleId;
      if (e.type === "step.denied") reason = str(error.reason) ?? str(p.reason);
    } else if (e.type.startsWith("approval.") && typeof p.approval_id === "string") {
      const status = p.status as RecordedApproval["status"];
      approval = {
        approvalId: p.approval_id,
        status,
        ...(str(p.decided_by) === undefined ? {} : { decidedBy: str(p.decided_by) }),
        ...(str(p.rationale) === undefined ? {} : { rationale: str(p.rationale) }),
      };
    }
  }
  return {
    ...(decision === undefined ? {} : { decision }),
    ...(ruleId === undefined ? {} : { ruleId }),
    ...(reason === undefined ? {} : { reason }),
    ...(approval === undefined ? {} : { approval }),
  };
}

function recordedStep(step: Step, events: readonly Event[]): RecordedStep {
  const out: Record<string, unknown> = {
    stepId: step.stepId,
    kind: step.kind,
    target: step.target,
    args: step.args ?? null,
    argsHash: step.argsHash,
    occurrence: step.occurrence,
    idempotency: step.idempotency,
    status: step.status,
  };
  if (step.status === "succeeded") out.result = step.result ?? null;
  if (step.error !== undefined && step.error !== null) out.error = step.error;
  Object.assign(out, decisionOf(step.stepId, events));
  if (step.startedAt !== undefined) out.startedAt = step.startedAt;
  if (step.completedAt !== undefined) out.completedAt = step.completedAt;
  return out as unknown as RecordedStep;
}

/** Steps by the sequence number of their first event (the kernel lists them by id, a hash). */
function inRecordingOrder(steps: readonly Step[], events: readonly Event[]): Step[] {
  const first = new Map<string, number>();
  for (const e of events) {
    const id = (e.payload as Payload).step_id;
    if (typeof id === "string" && !first.has(id)) first.set(id, e.eventSeq);
  }
  const seq = (s: Step) => first.get(s.stepId) ?? Number.MAX_SAFE_INTEGER;
  return [...steps].sort((a, b) => seq(a) - seq(b));
}

function recordedExecution(e: Execution, previous: unknown): RecordedExecution {
  const out: Record<string, unknown> = {
    id: e.id,
    agentId: e.agentId,
    status: e.status,
    input: e.input,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
  if (e.status === "completed") out.output = e.output ?? null;
  const optional: Record<string, unknown> = {
    failureReason: e.failureReason,
    session: e.session,
    previous,
    parentExecutionId: e.parentExecutionId,
    spawnedBy: e.spawnedBy,
    forkedFrom: e.forkedFrom,
    forkSeq: e.forkSeq,
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) out[k] = v;
  return out as unknown as RecordedExecution;
}

async function childrenOf(source: RecordingSource, parent: Execution): Promise<Execution[]> {
  const found: Execution[] = [];
  // Newest first: children were created after their parent, so stop at the first older one.
  for await (const e of source.listAll({ limit: 200 })) {
    if (e.createdAt < parent.createdAt) break;
    if (e.spawnedBy?.executionId === parent.id) found.push(e);
  }
  return found.reverse();
}

/** Read execution `id` (and, with `children`, its subagents) into a recording. */
export async function exportRecording(
  source: RecordingSource,
  id: string,
  options: ExportRecordingOptions = {},
): Promise<Recording> {
  const execution = await source.get(id);
  const [steps, events] = await Promise.all([source.listSteps(id), allEvents(source, id)]);
  // Previous state exists only for session turns, and only v1 kernels have sessions.
  const previous =
    source.protocol === "v1" && execution.parentExecutionId !== undefined
      ? await source.previous(id)
      : undefined;
  const recording: Record<string, unknown> = {
    format: RECORDING_FORMAT,
    exportedAt: new Date().toISOString(),
    protocol: source.protocol,
    execution: recordedExecution(execution, previous),
    steps: inRecordingOrder(steps, events).map((s) => recordedStep(s, events)),
    events,
  };
  if (options.children === true && source.protocol === "v1") {
    const children = await childrenOf(source, execution);
    recording.children = await Promise.all(children.map((c) => exportRecording(source, c.id, options)));
  }
  return recording as unknown as Recording;
}
