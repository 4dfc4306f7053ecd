/**
 * Request bodies for the agent routes, built as JSON text once per call. That text is what gets
 * signed and sent, byte for byte, on every attempt. User values (args, results, outputs) go through
 * the protocol's strict `toWireJson`, so NaN, Dates, Maps… fail here with a path such as
 * `args.items[2]` instead of being silently changed on the wire (docs/design/strict-json.md).
 */
import { type Idempotency, type StepKind, toWireJson, ValidationError } from "@rebuno/protocol";

/** Body of `submitStep`. */
export interface SubmitStepInput {
  readonly kind: StepKind;
  /** Tool name, model id or local-step name. */
  readonly target: string;
  /** Any JSON value; omitted → the kernel hashes `null`. */
  readonly args?: unknown;
  /** Default (when omitted) is the kernel's: `safe_to_retry`. */
  readonly idempotency?: Idempotency | undefined;
  /** Resource keys the step may change (ignored by the kernel for `llm_call`). */
  readonly resources?: readonly string[] | undefined;
}

/** A resource snapshot taken after a step (`captures[]` on the wire). */
export interface CheckpointCapture {
  readonly key: string;
  /** The generation from the `proceed` decision's `resources[]`. */
  readonly generation: number;
  readonly checkpointRef: string;
}

/** A failed snapshot (`capture_failures[]` on the wire). */
export interface CheckpointCaptureFailure {
  readonly key: string;
  readonly generation: number;
  readonly error: string;
}

/** Captures that travel with a step outcome or on their own. */
export interface CheckpointsInput {
  readonly captures?: readonly CheckpointCapture[] | undefined;
  readonly captureFailures?: readonly CheckpointCaptureFailure[] | undefined;
}

/** Body of `completeStep`. `result` `undefined` is sent as `null`. */
export interface CompleteStepInput extends CheckpointsInput {
  readonly result: unknown;
}

/** Body of `failStep`; both SDKs send `{ message }` as `error`. */
export interface FailStepInput extends CheckpointsInput {
  readonly error: unknown;
}

/** Body of `completeExecution`; `state` is what the next session turn reads via `previous`. */
export interface CompleteExecutionInput {
  readonly output: unknown;
  readonly state?: unknown;
}

/** Body of `publishStreamDelta`. `data` is at most 7000 UTF-8 bytes. */
export interface StreamDeltaInput {
  readonly seq: number;
  readonly data: string;
}

/** Body of `registerResource` (docs/protocol.md §4.17). */
export interface RegisterResourceInput {
  /** `^[A-Za-z0-9_.-]{1,128}$`. */
  readonly key: string;
  readonly driverId: string;
  readonly configuration?: unknown;
  readonly coverageReuse?: boolean | undefined;
  /** 0 disables checkpointing. */
  readonly everySteps?: number | undefined;
  readonly onCompletion?: boolean | undefined;
}

/** Largest `data` the kernel accepts in a stream delta (docs/protocol.md §4.10). */
export const MAX_STREAM_DELTA_BYTES = 7000;

const str = JSON.stringify as (s: string) => string;

function requireString(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "")
    throw new ValidationError(`${what} must be a non-empty string`);
  return value;
}

function capturesJson(input: CheckpointsInput): string {
  let out = "";
  if (input.captures !== undefined && input.captures.length > 0) {
    const wire = input.captures.map((c) => ({
      key: c.key,
      generation: c.generation,
      checkpoint_ref: c.checkpointRef,
    }));
    out += `,"captures":${toWireJson(wire, "captures")}`;
  }
  if (input.captureFailures !== undefined && input.captureFailures.length > 0) {
    const wire = input.captureFailures.map((f) => ({ key: f.key, generation: f.generation, error: f.error }));
    out += `,"capture_failures":${toWireJson(wire, "captureFailures")}`;
  }
  return out;
}

/** `{"kind","target","args"?,"idempotency"?,"resources"?}`. */
export function submitStepBody(input: SubmitStepInput): string {
  let out = `{"kind":${str(requireString(input.kind, "kind"))},"target":${str(requireString(input.target, "target"))}`;
  if (input.args !== undefined) out += `,"args":${toWireJson(input.args, "args")}`;
  if (input.idempotency !== undefined) out += `,"idempotency":${str(input.idempotency)}`;
  if (input.resources !== undefined && input.resources.length > 0) {
    out += `,"resources":${toWireJson(input.resources, "resources")}`;
  }
  return `${out}}`;
}

/** `{"result",captures…}`. */
export function completeStepBody(input: CompleteStepInput): string {
  return `{"result":${toWireJson(input.result, "result")}${capturesJson(input)}}`;
}

/** `{"error",captures…}`. */
export function failStepBody(input: FailStepInput): string {
  return `{"error":${toWireJson(input.error, "error")}${capturesJson(input)}}`;
}

/** `{"output","state"?}`. */
export function completeExecutionBody(input: CompleteExecutionInput): string {
  let out = `{"output":${toWireJson(input.output, "output")}`;
  if (input.state !== undefined) out += `,"state":${toWireJson(input.state, "state")}`;
  return `${out}}`;
}

/** `{"error": "<failure reason>"}`. */
export function failExecutionBody(error: string): string {
  if (typeof error !== "string") throw new ValidationError("failExecution error must be a string");
  return `{"error":${str(error)}}`;
}

/** `{"seq","data"}`, refusing data the kernel would reject (> 7000 bytes). */
export function streamDeltaBody(input: StreamDeltaInput): string {
  if (!Number.isSafeInteger(input.seq)) throw new ValidationError("stream delta seq must be an integer");
  if (typeof input.data !== "string") throw new ValidationError("stream delta data must be a string");
  if (Buffer.byteLength(input.data, "utf8") > MAX_STREAM_DELTA_BYTES) {
    throw new ValidationError(`stream delta data exceeds ${MAX_STREAM_DELTA_BYTES} bytes`);
  }
  return `{"seq":${input.seq},"data":${str(input.data)}}`;
}

/** `{key, driver_id, configuration?, coverage_reuse?, every_steps?, on_completion?}`. */
export function registerResourceBody(input: RegisterResourceInput): string {
  const wire: Record<string, unknown> = {
    key: requireString(input.key, "resource key"),
    driver_id: requireString(input.driverId, "driverId"),
  };
  if (input.configuration !== undefined) wire.configuration = input.configuration;
  if (input.coverageReuse !== undefined) wire.coverage_reuse = input.coverageReuse;
  if (input.everySteps !== undefined) wire.every_steps = input.everySteps;
  if (input.onCompletion !== undefined) wire.on_completion = input.onCompletion;
  return toWireJson(wire, "resource");
}

/** `{"binding"}`; the kernel requires a non-null binding. */
export function bindingBody(binding: unknown): string {
  if (binding === null || binding === undefined)
    throw new ValidationError("resource binding must not be null");
  return `{"binding":${toWireJson(binding, "binding")}}`;
}

/** `{captures?, capture_failures?}`. */
export function checkpointsBody(input: CheckpointsInput): string {
  const rest = capturesJson(input);
  return rest === "" ? "{}" : `{${rest.slice(1)}}`;
}
