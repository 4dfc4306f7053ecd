/** Resource routes (docs/protocol.md §4.17): register, bind, checkpoints, and fork points. */
import {
  BindResourceRequestSchema,
  CheckpointsRequestSchema,
  RegisterResourceRequestSchema,
  validateRequest,
} from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { requireLiveLease } from "../engine/leases.js";
import { publishCheckpoints } from "../engine/outcomes.js";
import { bindResource, registerResource, resourceView } from "../engine/resources.js";
import { agentExecution } from "../engine/steps.js";
import { executionTerminal } from "../errors.js";
import { leaseFromHeaders } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { RESOURCE_REGISTER_STATUS } from "../inferences.js";
import { isTerminalExecution } from "../store/types.js";
import { callerAgent } from "./agent-execution.js";
import { readableExecution } from "./executions.js";
import { capturesOf } from "./steps.js";

function register(ctx: KernelContext, input: RouteInput) {
  const { body, raw } = parseBody(input.req, (v) => validateRequest(RegisterResourceRequestSchema, v));
  const lease = leaseFromHeaders(input.req, true);
  const view = ctx.store.transaction(() => {
    const execution = agentExecution(ctx, input.params[0]!, callerAgent(input));
    if (isTerminalExecution(execution.status)) throw executionTerminal();
    requireLiveLease(ctx, execution.id, lease);
    const row = registerResource(ctx, execution, {
      key: body.key,
      driverId: body.driver_id,
      configurationJson: raw.configuration ?? "null",
      coverageReuse: body.coverage_reuse ?? undefined,
      everySteps: body.every_steps ?? undefined,
      onCompletion: body.on_completion ?? undefined,
    });
    return resourceView(ctx, row);
  });
  return json(RESOURCE_REGISTER_STATUS, view);
}

function bind(ctx: KernelContext, input: RouteInput) {
  const { raw } = parseBody(input.req, (v) => validateRequest(BindResourceRequestSchema, v));
  const lease = leaseFromHeaders(input.req, true);
  ctx.store.transaction(() => {
    const execution = agentExecution(ctx, input.params[0]!, callerAgent(input));
    if (isTerminalExecution(execution.status)) throw executionTerminal();
    requireLiveLease(ctx, execution.id, lease);
    bindResource(ctx, execution, input.params[1]!, raw.binding!);
  });
  return noContent();
}

function checkpoints(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(CheckpointsRequestSchema, v));
  const lease = leaseFromHeaders(input.req, true);
  const { captures, failures } = capturesOf(body);
  ctx.store.transaction(() =>
    publishCheckpoints(ctx, input.params[0]!, callerAgent(input), lease, captures, failures),
  );
  return noContent();
}

function forkPoints(ctx: KernelContext, input: RouteInput) {
  const execution = readableExecution(ctx, input);
  const resources: Record<string, number> = {};
  for (const r of ctx.store.listResources(execution.id)) resources[r.key] = r.registeredSeq;
  const points = ctx.store.listCheckpoints(execution.id, undefined).map((c) => {
    const p: Record<string, unknown> = {
      key: c.key,
      generation: c.generation,
      checkpoint_ref: c.checkpointRef,
      covered_seq: c.coveredSeq,
    };
    if (c.invalidatedSeq !== undefined) p.invalidated_seq = c.invalidatedSeq;
    return p;
  });
  return json(200, { latest_seq: ctx.store.lastEventSeq(execution.id), resources, checkpoints: points });
}

/** Routes of this family. */
export const resourceRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/executions/:uuid/resources", auth: "hmac", handler: register },
  { method: "POST", path: "/v0/executions/:uuid/resources/checkpoints", auth: "hmac", handler: checkpoints },
  { method: "POST", path: "/v0/executions/:uuid/resources/:name/binding", auth: "hmac", handler: bind },
  {
    method: "GET",
    path: "/v0/executions/:uuid/fork-points",
    auth: "bearer",
    scopes: ["executions:read"],
    handler: forkPoints,
  },
];
