/** Step routes (protocol §4.7–4.9): reads, submission, complete and fail. */
import {
  CompleteStepRequestSchema,
  FailStepRequestSchema,
  RawJson,
  SubmitStepRequestSchema,
  validateRequest,
} from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { recordStepOutcome } from "../engine/outcomes.js";
import type { Capture, CaptureFailure } from "../engine/resources.js";
import { type SubmitRequest, submitStep } from "../engine/steps.js";
import { invalid, notFound } from "../errors.js";
import { leaseFromHeaders } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { evaluateJudge, type JudgeOutcome } from "../policy/index.js";
import type { StepRow } from "../store/types.js";
import { isTerminalStep } from "../store/types.js";
import { formatTime } from "../time.js";
import { callerAgent } from "./agent-execution.js";
import { readableExecution } from "./executions.js";

/** The Step JSON object (protocol §1.2); empty optional fields omitted. */
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

async function submit(ctx: KernelContext, input: RouteInput) {
  const { body, raw } = parseBody(input.req, (v) => validateRequest(SubmitStepRequestSchema, v));
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
    resources: body.resources ?? [],
  };
  const verdicts = new Map<string, JudgeOutcome>();
  // A judge answer is fetched outside the transaction; the next pass re-checks everything and
  // uses it only if the same rule still decides. Bounded: each pass adds one rule's answer.
  for (;;) {
    const result = ctx.store.transaction(() => submitStep(ctx, req, verdicts));
    if (result.kind === "decision") {
      ctx.metrics.inc("rebuno_step_decisions_total", ["decision", result.body.decision]);
      return json(200, result.body);
    }
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

/** Captures and capture failures of an outcome or checkpoints body, camelCased. */
export function capturesOf(body: CaptureBody): { captures: Capture[]; failures: CaptureFailure[] } {
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

function outcome(status: "succeeded" | "failed") {
  return (ctx: KernelContext, input: RouteInput) => {
    const { body, raw } =
      status === "succeeded"
        ? parseBody(input.req, (v) => validateRequest(CompleteStepRequestSchema, v))
        : parseBody(input.req, (v) => validateRequest(FailStepRequestSchema, v));
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
    return json(200, answer);
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
