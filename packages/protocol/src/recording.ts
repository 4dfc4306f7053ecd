/**
 * Recordings: one execution as a versioned JSON file (its input and outcome, its steps in
 * recording order with their identity fields and outcomes, its events, and optionally its
 * subagents' recordings). `Client.exportRecording` writes them; `replayRecording` of
 * `@rebuno/testing` answers a handler from them offline. The JSON Schema is
 * docs/recordings.schema.json; this module checks the same shape and, beyond the schema, that
 * every step's arguments still hash to its `argsHash` and its identity fields to its `stepId`
 * (docs/protocol.md §5.1), so a truncated or edited file fails here, naming the step.
 */
import { RebunoError, type RebunoErrorOptions } from "./errors.js";
import { argsHash, computeStepId } from "./identity.js";
import type { Event, SpawnedBy } from "./models.js";
import type { ExecutionStatus, Idempotency, StepKind, StepStatus } from "./wire-common.js";

/** The format this version of the SDK writes and reads. */
export const RECORDING_FORMAT = "rebuno.recording/1";

/** The execution a recording holds. Fields the kernel did not report are absent. */
export interface RecordedExecution {
  readonly id: string;
  readonly agentId: string;
  readonly status: ExecutionStatus;
  readonly input: unknown;
  readonly output?: unknown;
  readonly failureReason?: string | undefined;
  readonly session?: string | undefined;
  /** The state handed over by the session's previous turn (`GET …/previous`); v1 kernels only. */
  readonly previous?: unknown;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly parentExecutionId?: string | undefined;
  readonly spawnedBy?: SpawnedBy | undefined;
  readonly forkedFrom?: string | undefined;
  readonly forkSeq?: number | undefined;
}

/** How a human decided a step that policy sent for approval. */
export interface RecordedApproval {
  readonly approvalId: string;
  readonly status: "pending" | "granted" | "denied" | "expired";
  readonly decidedBy?: string | undefined;
  readonly rationale?: string | undefined;
}

/** One step: identity (docs/protocol.md §5.1), policy decision and outcome. */
export interface RecordedStep {
  readonly stepId: string;
  readonly kind: StepKind;
  readonly target: string;
  readonly args: unknown;
  readonly argsHash: string;
  readonly occurrence: number;
  readonly idempotency: Idempotency;
  readonly status: StepStatus;
  readonly result?: unknown;
  readonly error?: unknown;
  /** The policy's decision as recorded by the step's events. */
  readonly decision?: "allowed" | "denied" | "awaiting_approval" | undefined;
  /** The rule that decided (absent on kernels that do not record it). */
  readonly ruleId?: string | undefined;
  /** Why it was denied. */
  readonly reason?: string | undefined;
  readonly approval?: RecordedApproval | undefined;
  readonly startedAt?: string | undefined;
  readonly completedAt?: string | undefined;
}

/** A whole recording (format {@link RECORDING_FORMAT}). */
export interface Recording {
  readonly format: typeof RECORDING_FORMAT;
  readonly exportedAt: string;
  /** The kernel generation it was exported from. */
  readonly protocol: "v1" | "legacy";
  readonly execution: RecordedExecution;
  /** In recording order: by the sequence number of each step's first event. */
  readonly steps: readonly RecordedStep[];
  readonly events: readonly Event[];
  /** Recordings of the subagents it spawned (`--children`). */
  readonly children?: readonly Recording[] | undefined;
}

/** What is wrong with a recording file. */
export type RecordingProblem = "unsupported_format" | "malformed" | "step_mismatch";

/** Options of {@link RecordingError}. */
export interface RecordingErrorOptions extends RebunoErrorOptions {
  readonly problem: RecordingProblem;
  /** Where in the document (JSON path such as `$.steps[2].args`). */
  readonly path?: string | undefined;
  /** The step whose identity no longer matches its fields. */
  readonly stepId?: string | undefined;
  readonly target?: string | undefined;
}

/**
 * A recording that cannot be used: another format version, a document that is not a recording
 * (truncated, wrong shape), or a step whose arguments or identity fields were edited.
 */
export class RecordingError extends RebunoError {
  static {
    RecordingError.prototype.name = "RecordingError";
  }
  readonly problem: RecordingProblem;
  readonly path: string | undefined;
  readonly stepId: string | undefined;
  readonly target: string | undefined;
  constructor(message: string, options: RecordingErrorOptions) {
    const { problem, path, stepId, target, ...rest } = options;
    super(message, { ...rest, code: `recording_${problem}` });
    this.problem = problem;
    this.path = path;
    this.stepId = stepId;
    this.target = target;
  }
}

type Json = Record<string, unknown>;

function malformed(path: string, what: string): never {
  throw new RecordingError(`not a valid recording: ${path} ${what}`, { problem: "malformed", path });
}

function object(value: unknown, path: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    malformed(path, "must be an object");
  return value as Json;
}

function text(o: Json, key: string, path: string, optional = false): void {
  const v = o[key];
  if (v === undefined && optional) return;
  if (typeof v !== "string") malformed(`${path}.${key}`, "must be a string");
}

function count(o: Json, key: string, path: string, optional = false): void {
  const v = o[key];
  if (v === undefined && optional) return;
  if (!Number.isSafeInteger(v) || (v as number) < 0)
    malformed(`${path}.${key}`, "must be a non-negative integer");
}

function oneOf(o: Json, key: string, path: string, values: readonly string[], optional = false): void {
  const v = o[key];
  if (v === undefined && optional) return;
  if (typeof v !== "string" || !values.includes(v))
    malformed(`${path}.${key}`, `must be one of ${values.join(", ")}`);
}

const STEP_KINDS = ["tool_call", "llm_call", "local"];
const STEP_STATUSES = [
  "proposed",
  "allowed",
  "denied",
  "awaiting_approval",
  "executing",
  "succeeded",
  "failed",
  "cancelled",
];
const EXECUTION_STATUSES = ["pending", "running", "blocked", "completed", "failed", "cancelled"];

function checkExecution(value: unknown, path: string): void {
  const e = object(value, path);
  for (const key of ["id", "agentId", "createdAt", "updatedAt"]) text(e, key, path);
  for (const key of ["failureReason", "session", "parentExecutionId", "forkedFrom"]) text(e, key, path, true);
  oneOf(e, "status", path, EXECUTION_STATUSES);
  if (!("input" in e)) malformed(`${path}.input`, "is missing");
  count(e, "forkSeq", path, true);
}

function checkStep(value: unknown, path: string, executionId: string): void {
  const s = object(value, path);
  for (const key of ["stepId", "target", "argsHash", "idempotency"]) text(s, key, path);
  for (const key of ["ruleId", "reason", "startedAt", "completedAt"]) text(s, key, path, true);
  oneOf(s, "kind", path, STEP_KINDS);
  oneOf(s, "status", path, STEP_STATUSES);
  oneOf(s, "decision", path, ["allowed", "denied", "awaiting_approval"], true);
  count(s, "occurrence", path);
  if (!("args" in s)) malformed(`${path}.args`, "is missing");
  if (s.approval !== undefined) {
    const a = object(s.approval, `${path}.approval`);
    text(a, "approvalId", `${path}.approval`);
    oneOf(a, "status", `${path}.approval`, ["pending", "granted", "denied", "expired"]);
  }
  // Identity (docs/protocol.md §5.1): an edited argument or field changes the hash or the id.
  const stepId = s.stepId as string;
  const target = s.target as string;
  const hash = argsHash(s.args);
  const recomputed = computeStepId(executionId, s.kind as string, target, hash, s.occurrence as number);
  if (hash !== s.argsHash || recomputed !== stepId) {
    const which =
      hash !== s.argsHash
        ? "its args no longer hash to its argsHash"
        : "its fields no longer give its stepId";
    throw new RecordingError(`recording step ${stepId} (${target}) was changed: ${which}`, {
      problem: "step_mismatch",
      path,
      stepId,
      target,
    });
  }
}

function checkRecording(value: unknown, path: string): Recording {
  const r = object(value, path);
  if (r.format !== RECORDING_FORMAT) {
    throw new RecordingError(
      `unsupported recording format ${JSON.stringify(r.format)} at ${path}.format: this SDK reads ${RECORDING_FORMAT}`,
      { problem: "unsupported_format", path: `${path}.format` },
    );
  }
  text(r, "exportedAt", path);
  oneOf(r, "protocol", path, ["v1", "legacy"]);
  checkExecution(r.execution, `${path}.execution`);
  const executionId = (r.execution as Json).id as string;
  if (!Array.isArray(r.steps)) malformed(`${path}.steps`, "must be an array");
  r.steps.forEach((s, i) => {
    checkStep(s, `${path}.steps[${i}]`, executionId);
  });
  if (!Array.isArray(r.events)) malformed(`${path}.events`, "must be an array");
  r.events.forEach((e, i) => {
    const ev = object(e, `${path}.events[${i}]`);
    count(ev, "eventSeq", `${path}.events[${i}]`);
    text(ev, "type", `${path}.events[${i}]`);
  });
  if (r.children !== undefined) {
    if (!Array.isArray(r.children)) malformed(`${path}.children`, "must be an array");
    r.children.forEach((c, i) => {
      checkRecording(c, `${path}.children[${i}]`);
    });
  }
  return r as unknown as Recording;
}

/**
 * Parse and check a recording (text or an already parsed value).
 * @throws RecordingError (`problem`: `unsupported_format`, `malformed` with the JSON `path`, or
 *   `step_mismatch` with the `stepId` and `target`).
 */
export function parseRecording(source: string | unknown): Recording {
  let value = source;
  if (typeof source === "string") {
    try {
      value = JSON.parse(source);
    } catch (error) {
      throw new RecordingError(`not a valid recording: not JSON (${(error as Error).message})`, {
        problem: "malformed",
        path: "$",
        cause: error,
      });
    }
  }
  return checkRecording(value, "$");
}
