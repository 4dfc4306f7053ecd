/** Agent routes on the execution itself (docs/protocol.md §4.11–4.13): heartbeat, suspend, complete, fail. */
import {
  CompleteExecutionRequestSchema,
  FailExecutionRequestSchema,
  validateRequest,
} from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { finishExecution, heartbeat, suspend } from "../engine/outcomes.js";
import { leaseFromHeaders } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";

/** The authenticated agent id of an HMAC route. */
export function callerAgent(input: RouteInput): string {
  if (input.caller.kind !== "agent") throw new Error("agent route reached without agent authentication");
  return input.caller.agentId;
}

function beat(ctx: KernelContext, input: RouteInput) {
  const lease = leaseFromHeaders(input.req, true);
  ctx.store.transaction(() => heartbeat(ctx, input.params[0]!, callerAgent(input), lease));
  return noContent();
}

function suspendRoute(ctx: KernelContext, input: RouteInput) {
  const lease = leaseFromHeaders(input.req, true);
  const suspended = ctx.store.transaction(() => suspend(ctx, input.params[0]!, callerAgent(input), lease));
  return json(200, { suspended });
}

function complete(ctx: KernelContext, input: RouteInput) {
  const { raw } = parseBody(input.req, (v) => validateRequest(CompleteExecutionRequestSchema, v));
  const lease = leaseFromHeaders(input.req, true);
  // A JSON null state is "no state": /previous then falls back to the output.
  const stateJson = raw.state === undefined || raw.state === "null" ? undefined : raw.state;
  ctx.store.transaction(() =>
    finishExecution(ctx, input.params[0]!, callerAgent(input), lease, {
      status: "completed",
      outputJson: raw.output,
      stateJson,
    }),
  );
  return noContent();
}

function fail(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(FailExecutionRequestSchema, v));
  const lease = leaseFromHeaders(input.req, true);
  ctx.store.transaction(() =>
    finishExecution(ctx, input.params[0]!, callerAgent(input), lease, {
      status: "failed",
      reason: body.error ?? "",
    }),
  );
  return noContent();
}

/** Routes of this family. */
export const agentExecutionRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/executions/:uuid/heartbeat", auth: "hmac", handler: beat },
  { method: "POST", path: "/v0/executions/:uuid/suspend", auth: "hmac", handler: suspendRoute },
  { method: "POST", path: "/v0/executions/:uuid/complete", auth: "hmac", handler: complete },
  { method: "POST", path: "/v0/executions/:uuid/fail", auth: "hmac", handler: fail },
];
