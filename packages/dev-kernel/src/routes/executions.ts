/** Execution routes for clients (docs/protocol.md §4.1–4.6) and the dual-auth reads. */
import { CreateExecutionRequestSchema, EXECUTION_STATUSES, validateRequest } from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { cancelExecution, createExecution, executionView, previousState } from "../engine/executions.js";
import { forbidden, invalid, notFound } from "../errors.js";
import { parseBody } from "../http/core.js";
import { json, jsonText, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { parseUuid } from "../ids.js";
import { IDEMPOTENT_REPEAT_CREATE_STATUS } from "../inferences.js";
import type { ExecutionRow, ExecutionStatus } from "../store/types.js";
import { formatTime } from "../time.js";

const STATUSES: ReadonlySet<string> = new Set(EXECUTION_STATUSES);

/**
 * The execution named by the first path parameter, for a read: 404 when unknown; an agent caller
 * may only read its own executions (403).
 */
export function readableExecution(ctx: KernelContext, input: RouteInput): ExecutionRow {
  const execution = ctx.store.getExecution(input.params[0]!);
  if (execution === undefined) throw notFound("execution");
  if (input.caller.kind === "agent" && input.caller.agentId !== execution.agentId) {
    throw forbidden("execution belongs to another agent");
  }
  return execution;
}

function optional(v: string | null | undefined): string | undefined {
  return v === null || v === undefined ? undefined : v;
}

function create(ctx: KernelContext, input: RouteInput) {
  const { body, raw } = parseBody(input.req, (v) => validateRequest(CreateExecutionRequestSchema, v));
  if (body.agent_id === "") throw invalid("agent_id is required");
  let parentExecutionId: string | undefined;
  if (
    body.parent_execution_id !== undefined &&
    body.parent_execution_id !== null &&
    body.parent_execution_id !== ""
  ) {
    parentExecutionId = parseUuid(body.parent_execution_id);
    if (parentExecutionId === undefined) throw invalid("parent_execution_id is not a UUID");
  }
  let spawnedBy: { executionId: string; stepId: string } | undefined;
  if (body.spawned_by !== undefined && body.spawned_by !== null) {
    const parentId = parseUuid(body.spawned_by.execution_id);
    if (parentId === undefined) throw invalid("spawned_by.execution_id is not a UUID");
    spawnedBy = { executionId: parentId, stepId: body.spawned_by.step_id };
  }
  const inputJson = raw.input;
  const session = optional(body.session);
  const idempotencyKey = optional(body.idempotency_key);
  const onBehalfOf = optional(body.on_behalf_of);
  const { execution, created } = ctx.store.transaction(() =>
    createExecution(ctx, {
      agentId: body.agent_id,
      inputJson,
      agentVersion: optional(body.agent_version),
      session: session === "" ? undefined : session,
      parentExecutionId,
      idempotencyKey: idempotencyKey === "" ? undefined : idempotencyKey,
      spawnedBy,
      onBehalfOf: onBehalfOf === "" ? undefined : onBehalfOf,
    }),
  );
  return json(created ? 201 : IDEMPOTENT_REPEAT_CREATE_STATUS, executionView(execution));
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  if (!/^[+-]?\d{1,15}$/.test(v)) throw invalid(`${name} must be an integer`);
  return Number(v);
}

function list(ctx: KernelContext, input: RouteInput) {
  const q = input.query;
  const status = q.get("status") ?? undefined;
  if (status !== undefined && status !== "" && !STATUSES.has(status))
    throw invalid(`unknown status ${JSON.stringify(status)}`);
  const cursorText = q.get("cursor");
  let beforeId: string | undefined;
  if (cursorText !== null && cursorText !== "") {
    beforeId = parseUuid(cursorText);
    if (beforeId === undefined) throw invalid("cursor is not a UUID");
  }
  let limit = intParam(q, "limit") ?? 50;
  if (limit <= 0) limit = 50;
  limit = Math.min(limit, 200);
  // One extra row tells whether a next page exists.
  const rows = ctx.store.listExecutions({
    agentId: q.get("agent_id") || undefined,
    session: q.get("session") || undefined,
    status: (status || undefined) as ExecutionStatus | undefined,
    beforeId,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const body: Record<string, unknown> = { executions: page.map(executionView) };
  if (rows.length > limit) body.next_cursor = page[page.length - 1]!.id;
  return json(200, body);
}

function get(ctx: KernelContext, input: RouteInput) {
  return json(200, executionView(readableExecution(ctx, input)));
}

function previous(ctx: KernelContext, input: RouteInput) {
  return json(200, { state: previousState(ctx, readableExecution(ctx, input)) });
}

function events(ctx: KernelContext, input: RouteInput) {
  const execution = readableExecution(ctx, input);
  // Unparseable after_seq is treated as 0, like the production kernel.
  const afterText = input.query.get("after_seq");
  const after = afterText !== null && /^\d{1,15}$/.test(afterText) ? Number(afterText) : 0;
  let limit = intParamLenient(input.query.get("limit")) ?? 100;
  if (limit <= 0) limit = 100;
  limit = Math.min(limit, 1000);
  const rows = ctx.store.listEvents(execution.id, after, limit);
  // Payloads are stored as JSON text: splice them in instead of re-parsing.
  const parts = rows.map(
    (e) =>
      `{"execution_id":${JSON.stringify(e.executionId)},"event_seq":${e.seq},"type":${JSON.stringify(e.type)},` +
      `"payload":${e.payloadJson},"occurred_at":"${formatTime(e.occurredAt)}"}`,
  );
  return jsonText(200, `[${parts.join(",")}]`);
}

function intParamLenient(v: string | null): number | undefined {
  return v !== null && /^[+-]?\d{1,15}$/.test(v) ? Number(v) : undefined;
}

function cancel(ctx: KernelContext, input: RouteInput) {
  ctx.store.transaction(() => cancelExecution(ctx, input.params[0]!));
  return noContent();
}

/** Routes of this family. */
export const executionRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/executions", auth: "bearer", scopes: ["executions:write"], handler: create },
  { method: "GET", path: "/v0/executions", auth: "bearer", scopes: ["executions:read"], handler: list },
  { method: "GET", path: "/v0/executions/:uuid", auth: "dual", scopes: ["executions:read"], handler: get },
  {
    method: "GET",
    path: "/v0/executions/:uuid/previous",
    auth: "dual",
    scopes: ["executions:read"],
    handler: previous,
  },
  {
    method: "GET",
    path: "/v0/executions/:uuid/events",
    auth: "bearer",
    scopes: ["executions:read"],
    handler: events,
  },
  {
    method: "POST",
    path: "/v0/executions/:uuid/cancel",
    auth: "bearer",
    scopes: ["executions:write"],
    handler: cancel,
  },
];
