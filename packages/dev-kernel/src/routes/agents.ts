/** Agent and policy routes (docs/protocol.md §4.14). */

import { type CompiledPolicy, PERMISSIVE_RESULT, type PolicyResult } from "@rebuno/policy";
import {
  RawJson,
  RegisterAgentRequestSchema,
  SetAgentMetadataRequestSchema,
  SetPolicyRequestSchema,
  TestPolicyRequestSchema,
  validateRequest,
} from "@rebuno/protocol";
import type { AgentProvision } from "../config.js";
import type { KernelContext } from "../engine/context.js";
import { forbidden, invalid, notFound } from "../errors.js";
import { parseBody } from "../http/core.js";
import { json, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { parseUuid } from "../ids.js";
import { REREGISTER_KEEPS_BUNDLE } from "../inferences.js";
import type { AgentRow, ExecutionRow, StepKind } from "../store/types.js";
import { formatTime, parseTime } from "../time.js";
import { callerAgent } from "./agent-execution.js";

/** The Agent JSON object (secret never included). */
export function agentView(a: AgentRow): Record<string, unknown> {
  const v: Record<string, unknown> = { id: a.id, webhook_url: a.webhookUrl };
  if (a.policyBundle !== undefined) v.policy_bundle = a.policyBundle;
  v.registered_at = formatTime(a.registeredAt);
  if (a.leaseTimeoutSeconds !== undefined) v.lease_timeout_seconds = a.leaseTimeoutSeconds;
  // Published metadata (interop O1); omitted when unset, never `null` (interop D4).
  if (a.description !== undefined && a.description !== "") v.description = a.description;
  if (a.inputSchemaJson !== undefined) v.input_schema = new RawJson(a.inputSchemaJson);
  if (a.outputSchemaJson !== undefined) v.output_schema = new RawJson(a.outputSchemaJson);
  return v;
}

/**
 * Upsert an agent. With `policy` the bundle is compiled first (400 when invalid) and replaces the
 * stored one; without it the stored bundle is kept (docs/protocol.md §16.22).
 */
export function registerAgent(ctx: KernelContext, p: AgentProvision): AgentRow {
  if (p.id === "") throw invalid("agent id is required");
  if (p.secret === "") throw invalid("agent secret is required");
  let url: URL;
  try {
    url = new URL(p.webhookUrl);
  } catch {
    throw invalid("webhook_url is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid("webhook_url must be http or https");
  if (
    p.leaseTimeoutSeconds !== undefined &&
    (!Number.isFinite(p.leaseTimeoutSeconds) || p.leaseTimeoutSeconds < 0)
  ) {
    throw invalid("lease_timeout_seconds must be a non-negative number");
  }
  if (p.policy !== undefined) ctx.policies.compile(p.policy);
  const existing = ctx.store.getAgent(p.id);
  const row: AgentRow = {
    id: p.id,
    webhookUrl: p.webhookUrl,
    secret: p.secret,
    policyBundle: p.policy ?? (REREGISTER_KEEPS_BUNDLE ? existing?.policyBundle : undefined),
    registeredAt: ctx.clock(),
    leaseTimeoutSeconds: p.leaseTimeoutSeconds,
    // The agent publishes its metadata itself; an operator re-registering it must not erase it.
    description: existing?.description,
    inputSchemaJson: existing?.inputSchemaJson,
    outputSchemaJson: existing?.outputSchemaJson,
  };
  ctx.store.transaction(() => ctx.store.putAgent(row));
  return row;
}

function register(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(RegisterAgentRequestSchema, v));
  const row = registerAgent(ctx, {
    id: body.id,
    webhookUrl: body.webhook_url,
    secret: body.secret,
    leaseTimeoutSeconds: body.lease_timeout_seconds ?? undefined,
  });
  return json(201, agentView(row));
}

function agentOr404(ctx: KernelContext, id: string): AgentRow {
  const agent = ctx.store.getAgent(id);
  if (agent === undefined) throw notFound(`agent ${JSON.stringify(id)}`);
  return agent;
}

function setPolicy(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(SetPolicyRequestSchema, v));
  const agent = agentOr404(ctx, input.params[0]!);
  ctx.policies.compile(body.bundle);
  ctx.store.transaction(() => ctx.store.putAgent({ ...agent, policyBundle: body.bundle }));
  return noContent();
}

/**
 * `PUT /v0/agents/{id}/metadata` (interop O1, not in docs/protocol.md): the official Python SDK publishes
 * its description and input/output JSON Schemas at start-up. Only the agent itself may write them.
 */
function setMetadata(ctx: KernelContext, input: RouteInput) {
  const id = input.params[0]!;
  if (callerAgent(input) !== id) throw forbidden("an agent may only publish its own metadata");
  const { body, raw } = parseBody(input.req, (v) => validateRequest(SetAgentMetadataRequestSchema, v));
  // Schemas are kept as the raw text sent (store rule: never re-serialize payloads); `null` → unset.
  const schema = (value: unknown, text: string | undefined) =>
    value === null || value === undefined ? undefined : text;
  // PUT replaces the whole metadata: an absent or null field clears it (inferences.ts, O1).
  ctx.store.transaction(() => {
    const agent = agentOr404(ctx, id);
    ctx.store.putAgent({
      ...agent,
      description: body.description ?? undefined,
      inputSchemaJson: schema(body.input_schema, raw.input_schema),
      outputSchemaJson: schema(body.output_schema, raw.output_schema),
    });
  });
  return noContent();
}

interface TestCase {
  readonly name?: string | undefined;
  readonly executionId?: string | undefined;
  readonly kind: StepKind;
  readonly target: string;
  readonly args: unknown;
  readonly expect?: string | undefined;
  readonly expectRule?: string | undefined;
}

function evaluateCase(policy: CompiledPolicy | undefined, agentId: string, c: TestCase): PolicyResult {
  if (policy === undefined) return PERMISSIVE_RESULT;
  return policy.evaluate({ agentId, kind: c.kind, target: c.target, args: c.args });
}

/** What the recorded step tells about the decision it got, for replayed cases. */
function recordedDecision(
  ctx: KernelContext,
  execution: ExecutionRow,
  stepId: string,
  errorJson: string | undefined,
) {
  if (ctx.store.listApprovals(undefined).some((a) => a.executionId === execution.id && a.stepId === stepId)) {
    return "require_approval";
  }
  if (errorJson !== undefined) {
    try {
      const e = JSON.parse(errorJson) as { rule_id?: unknown };
      if (typeof e.rule_id === "string" && e.rule_id !== "__indeterminate_retry") return "deny";
    } catch {
      // not a kernel-written error
    }
  }
  return "allow";
}

function replayCases(
  ctx: KernelContext,
  agentId: string,
  body: {
    execution_id?: string | null | undefined;
    executions?:
      | {
          session?: string | null | undefined;
          since?: string | null | undefined;
          limit?: number | null | undefined;
        }
      | null
      | undefined;
  },
): TestCase[] {
  let executions: ExecutionRow[] = [];
  if (body.execution_id !== undefined && body.execution_id !== null && body.execution_id !== "") {
    const id = parseUuid(body.execution_id);
    if (id === undefined) throw invalid("execution_id is not a UUID");
    const e = ctx.store.getExecution(id);
    if (e === undefined) throw notFound("execution");
    executions = [e];
  } else if (body.executions !== undefined && body.executions !== null) {
    const f = body.executions;
    const limit = Math.min(f.limit !== undefined && f.limit !== null && f.limit > 0 ? f.limit : 100, 1000);
    const since =
      f.since !== undefined && f.since !== null && f.since !== "" ? parseTime(f.since) : undefined;
    if (since === null) throw invalid("executions.since is not an RFC 3339 time");
    executions = ctx.store
      .listExecutions({ agentId, session: f.session ?? undefined, limit })
      .filter((e) => since === undefined || e.createdAt >= since);
  }
  const cases: TestCase[] = [];
  for (const e of executions) {
    for (const s of ctx.store.listSteps(e.id)) {
      cases.push({
        executionId: e.id,
        name: s.stepId,
        kind: s.kind,
        target: s.target,
        args: s.argsJson === undefined ? null : JSON.parse(s.argsJson),
        expect: recordedDecision(ctx, e, s.stepId, s.errorJson),
      });
    }
  }
  return cases;
}

function testPolicy(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(TestPolicyRequestSchema, v));
  const agent = agentOr404(ctx, input.params[0]!);
  const yaml = body.bundle ?? agent.policyBundle;
  const policy = yaml === undefined || yaml === null ? undefined : ctx.policies.compile(yaml);
  const cases: TestCase[] = (body.cases ?? []).map((c) => ({
    name: c.name ?? undefined,
    kind: c.kind ?? "tool_call",
    target: c.target,
    args: c.args === undefined ? null : c.args,
    expect: c.expect ?? undefined,
    expectRule: c.expect_rule ?? undefined,
  }));
  cases.push(...replayCases(ctx, agent.id, body));
  let mismatches = 0;
  const results = cases.map((c) => {
    const r = evaluateCase(policy, agent.id, c);
    const matched =
      (c.expect === undefined || c.expect === r.decision) &&
      (c.expectRule === undefined || c.expectRule === r.ruleId);
    if (!matched) mismatches++;
    const out: Record<string, unknown> = {};
    if (c.name !== undefined) out.name = c.name;
    if (c.executionId !== undefined) out.execution_id = c.executionId;
    Object.assign(out, { kind: c.kind, target: c.target, decision: r.decision, rule_id: r.ruleId });
    if (r.reason !== undefined) out.reason = r.reason;
    if (c.expect !== undefined) out.expect = c.expect;
    if (c.expectRule !== undefined) out.expect_rule = c.expectRule;
    out.matched = matched;
    return out;
  });
  const response: Record<string, unknown> = { results, mismatches };
  if (policy !== undefined) response.policy_hash = policy.hash;
  return json(200, response);
}

/** Routes of this family. */
export const agentRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/agents", auth: "bearer", scopes: ["agents:write"], handler: register },
  {
    method: "GET",
    path: "/v0/agents",
    auth: "bearer",
    scopes: ["agents:read"],
    handler: (ctx) => json(200, ctx.store.listAgents().map(agentView)),
  },
  {
    method: "GET",
    path: "/v0/agents/:name",
    auth: "bearer",
    scopes: ["agents:read"],
    handler: (ctx, input) => json(200, agentView(agentOr404(ctx, input.params[0]!))),
  },
  { method: "PUT", path: "/v0/agents/:name/metadata", auth: "hmac", handler: setMetadata },
  {
    method: "DELETE",
    path: "/v0/agents/:name",
    auth: "bearer",
    scopes: ["agents:write"],
    handler: (ctx, input) => {
      ctx.store.transaction(() => ctx.store.deleteAgent(input.params[0]!));
      return noContent();
    },
  },
  {
    method: "POST",
    path: "/v0/policies/:name",
    auth: "bearer",
    scopes: ["policies:write"],
    handler: setPolicy,
  },
  {
    method: "POST",
    path: "/v0/policies/:name/test",
    auth: "bearer",
    scopes: ["policies:write", "executions:read"],
    handler: testPolicy,
  },
];
