/** Live stream deltas (docs/protocol.md §4.5, §4.10): publish from the agent, SSE to clients. */
import { StreamDeltaRequestSchema, validateRequest } from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { requireCurrentLease } from "../engine/leases.js";
import { agentExecution } from "../engine/steps.js";
import { conflict, notFound } from "../errors.js";
import { leaseFromHeaders } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import type { CoreStreamResponse } from "../http/types.js";
import { STREAM_LEASE_CHECK } from "../inferences.js";
import { callerAgent } from "./agent-execution.js";
import { readableExecution } from "./executions.js";

/** Interval of the `: keep-alive` comment. */
export const KEEP_ALIVE_MS = 15_000;

const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
});

function publish(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(StreamDeltaRequestSchema, v));
  const lease = leaseFromHeaders(input.req, false);
  const execution = agentExecution(ctx, input.params[0]!, callerAgent(input));
  const step = ctx.store.getStep(execution.id, input.params[1]!);
  if (step === undefined) throw notFound("step");
  if (lease !== undefined && STREAM_LEASE_CHECK === "current_when_present") {
    requireCurrentLease(ctx, execution.id, lease);
  }
  if (step.status !== "executing") throw conflict(`the step is in status ${step.status}`);
  ctx.bus.publish(execution.id, step.stepId, body.seq, body.data);
  return noContent();
}

function subscribe(ctx: KernelContext, input: RouteInput): CoreStreamResponse {
  const execution = readableExecution(ctx, input);
  return {
    status: 200,
    headers: SSE_HEADERS,
    stream: {
      open(write, end) {
        const subscription = ctx.bus.subscribe(execution.id, { write });
        const keepAlive = setInterval(() => write(": keep-alive\n\n"), KEEP_ALIVE_MS);
        keepAlive.unref();
        const close = (): void => {
          clearInterval(keepAlive);
          subscription.close();
          ctx.openStreams.delete(end);
        };
        // close() of the kernel ends every open stream.
        ctx.openStreams.set(end, close);
        return { close, drain: () => subscription.drain() };
      },
    },
  };
}

/** Routes of this family. */
export const streamRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/executions/:uuid/steps/:name/stream", auth: "hmac", handler: publish },
  {
    method: "GET",
    path: "/v0/executions/:uuid/stream",
    auth: "bearer",
    scopes: ["executions:read"],
    handler: subscribe,
  },
];
