/** Step routes (docs/protocol.md §4.7–4.9): reads, submission, complete and fail. */

import { evaluateJudge, type JudgeOutcome } from "@rebuno/policy";
import {
  CompleteStepRequestSchema,
  FailStepRequestSchema,
  RawJson,
  SubmitStepRequestSchema,
  validateRequest,
} from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { jsonString } from "../engine/events.js";
import { RECORDED, recordStepOutcome } from "../engine/outcomes.js";
import type { Capture, CaptureFailure } from "../engine/resources.js";
import { type StepDecision, type SubmitRequest, type SubmitResult, submitStep } from "../engine/steps.js";
import { invalid, notFound } from "../errors.js";
import { leaseFromHeaders } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json, jsonText } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import type { CoreBodyResponse, CoreResponse } from "../http/types.js";
import type { StepRow } from "../store/types.js";
import { isTerminalStep } from "../store/types.js";
import { formatTime } from "../time.js";
import { callerAgent } from "./agent-execution.js";
import { readableExecution } from "./executions.js";

/** The Step JSON object (docs/protocol.md §1.2); empty optional fields omitted. */
export function stepView(s: StepRow): Record<string, unknown> {
  const v: Record<string, unknown> = {
    step_id: s.stepId,
    execution_id: s.executionId,
    kind: s.kind,
    target: s.target,
    args_hash: s.argsHash,
    occurrence: s.occurrence,
    status: s.status,
    idempotency: s.idempotency,
  };
  if (s.argsJson !== undefined) v.args = new RawJson(s.argsJson);
  if (s.resultJson !== undefined) v.result = new RawJson(s.resultJson);
  if (s.errorJson !== undefined) v.error = new RawJson(s.errorJson);
  if (s.startedAt !== undefined) v.started_at = formatTime(s.startedAt);
  if (s.completedAt !== undefined) v.completed_at = formatTime(s.completedAt);
  return v;
}

function listSteps(ctx: KernelContext, input: RouteInput) {
  const execution = readableExecution(ctx, input);
  const filter = input.query.get("status");
  let rows = ctx.store.listSteps(execution.id);
  if (filter === "terminal") rows = rows.filter((s) => isTerminalStep(s.status));
  else if (filter !== null && filter !== "") throw invalid(`unknown status filter ${JSON.stringify(filter)}`);
  return json(200, rows.map(stepView));
}

function getStep(ctx: KernelContext, input: RouteInput) {
  const execution = readableExecution(ctx, input);
  const step = ctx.store.getStep(execution.id, input.params[1]!);
  if (step === undefined) throw notFound("step");
  return json(200, stepView(step));
}

const validateSubmit = (v: unknown) => validateRequest(SubmitStepRequestSchema, v);
const validateComplete = (v: unknown) => validateRequest(CompleteStepRequestSchema, v);
const validateFail = (v: unknown) => validateRequest(FailStepRequestSchema, v);
const NO_VERDICTS: ReadonlyMap<string, JudgeOutcome> = new Map();
const NO_KEYS: readonly string[] = Object.freeze([]);

// Synchronous unless a judge rule needs an answer: the common submission takes no promise hop.
function submit(ctx: KernelContext, input: RouteInput): CoreResponse | Promise<CoreResponse> {
  const { body, raw } = parseBody(input.req, validateSubmit);
  const lease = leaseFromHeaders(input.req, true);
  const req: SubmitRequest = {
    executionId: input.params[0]!,
    agentId: callerAgent(input),
    lease,
    kind: body.kind,
    target: body.target,
    argsJson: raw.args,
    args: body.args === undefined ? null : body.args,
    idempotency: body.idempotency ?? "safe_to_retry",
    resources: body.resources ?? NO_KEYS,
  };
  const result = ctx.store.transaction(() => submitStep(ctx, req, NO_VERDICTS));
  return result.kind === "decision" ? decided(ctx, result.body) : submitJudged(ctx, req, result);
}

function decided(ctx: KernelContext, body: StepDecision): CoreBodyResponse {
  ctx.metrics.inc("rebuno_step_decisions_total", ["decision", body.decision]);
  // The usual answer, written directly: the same bytes `json` produces for this two-key object.
  if (body.decision === "proceed" && body.resources === undefined && typeof body.step_id === "string") {
    return jsonText(200, `{"decision":"proceed","step_id":${jsonString(body.step_id)}}`);
  }
  return json(200, body);
}

async function submitJudged(
  ctx: KernelContext,
  req: SubmitRequest,
  first: Extract<SubmitResult, { kind: "needs_judge" }>,
): Promise<CoreResponse> {
  const verdicts = new Map<string, JudgeOutcome>();
  // A judge answer is fetched outside the transaction; the next pass re-checks everything and
  // uses it only if the same rule still decides. Bounded: each pass adds one rule's answer.
  let result: SubmitResult = first;
  for (;;) {
    if (result.kind === "decision") return decided(ctx, result.body);
    if (verdicts.has(result.ruleId))
      throw new Error(`judge verdict for rule ${result.ruleId} was not applied`);
    const verdict = await evaluateJudge(
      ctx.config.judgeEndpoint!,
      {
        agentId: req.agentId,
        target: req.target,
        args: req.args,
        instructions: result.judge.instructions,
      },
      result.judge.threshold,
      result.judge.fallback,
    );
    verdicts.set(result.ruleId, verdict);
    result = ctx.store.transaction(() => submitStep(ctx, req, verdicts));
  }
}

interface CaptureBody {
  readonly captures?:
    | readonly { key: string; generation: number; checkpoint_ref: string }[]
    | null
    | undefined;
  readonly capture_failures?:
    | readonly { key: string; generation: number; error: string }[]
    | null
    | undefined;
}

const NO_CAPTURES = Object.freeze({ captures: Object.freeze([]), failures: Object.freeze([]) });

/** Captures and capture failures of an outcome or checkpoints body, camelCased. */
export function capturesOf(body: CaptureBody): {
  captures: readonly Capture[];
  failures: readonly CaptureFailure[];
} {
  // Nearly every outcome carries none.
  if (
    (body.captures === undefined || body.captures === null || body.captures.length === 0) &&
    (body.capture_failures === undefined ||
      body.capture_failures === null ||
      body.capture_failures.length === 0)
  ) {
    return NO_CAPTURES;
  }
  return {
    captures: (body.captures ?? []).map((c) => ({
      key: c.key,
      generation: c.generation,
      checkpointRef: c.checkpoint_ref,
    })),
    failures: (body.capture_failures ?? []).map((f) => ({
      key: f.key,
      generation: f.generation,
      error: f.error,
    })),
  };
}

const RECORDED_TEXT = JSON.stringify(RECORDED);

function outcome(status: "succeeded" | "failed") {
  return (ctx: KernelContext, input: RouteInput) => {
    const { body, raw } =
      status === "succeeded" ? parseBody(input.req, validateComplete) : parseBody(input.req, validateFail);
    const lease = leaseFromHeaders(input.req, true);
    const { captures, failures } = capturesOf(body);
    const answer = ctx.store.transaction(() =>
      recordStepOutcome(ctx, {
        executionId: input.params[0]!,
        agentId: callerAgent(input),
        lease,
        stepId: input.params[1]!,
        status,
        valueJson: status === "succeeded" ? raw.result : raw.error,
        captures,
        captureFailures: failures,
      }),
    );
    return answer === RECORDED ? jsonText(200, RECORDED_TEXT) : json(200, answer);
  };
}

/** Routes of this family. */
export const stepRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/v0/executions/:uuid/steps",
    auth: "dual",
    scopes: ["executions:read"],
    handler: listSteps,
  },
  {
    method: "GET",
    path: "/v0/executions/:uuid/steps/:name",
    auth: "dual",
    scopes: ["executions:read"],
    handler: getStep,
  },
  { method: "POST", path: "/v0/executions/:uuid/steps", auth: "hmac", handler: submit },
  {
    method: "POST",
    path: "/v0/executions/:uuid/steps/:name/complete",
    auth: "hmac",
    handler: outcome("succeeded"),
  },
  { method: "POST", path: "/v0/executions/:uuid/steps/:name/fail", auth: "hmac", handler: outcome("failed") },
];
