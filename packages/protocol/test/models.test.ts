import { loadVector } from "@rebuno/test-kit";
import { describe, expect, it } from "vitest";
import {
  AgentWire,
  ApprovalWire,
  DECISIONS,
  DispatchEventPayloadWire,
  ErrorEnvelopeWire,
  EVENT_TYPES,
  EventWire,
  ExecutionEventPayloadWire,
  ExecutionWire,
  ForkPointsWire,
  parseAgent,
  parseApiKey,
  parseApproval,
  parseEvent,
  parseExecution,
  parseExecutionList,
  parseForkPoints,
  parseResourceView,
  parseStep,
  parseStepDecision,
  parseWebhookPayload,
  RebunoError,
  ResourceViewWire,
  StepDecisionWire,
  StepEventPayloadWire,
  StepWire,
  ValidationError,
  WebhookPayloadWire,
} from "../src/index.js";

type Obj = Record<string, unknown>;
const wire = loadVector<Record<string, unknown>>("wire_examples");
const decisions = wire.decisions as Record<string, Obj>;

describe("parseStepDecision", () => {
  it.each(Object.entries(decisions))("%s parses and matches the zod schema", (_name, body) => {
    const d = parseStepDecision(body);
    expect(d.decision).toBe(body.decision);
    expect(StepDecisionWire.safeParse(body).success).toBe(true);
    expect(d.stepId).toBe(body.step_id);
    expect(d.approvalId).toBe(body.approval_id);
    expect(d.reason).toBe(body.reason);
    expect(d.ruleId).toBe(body.rule_id);
  });

  it("maps fields to camelCase", () => {
    expect(parseStepDecision(decisions.proceed_with_resources)).toEqual({
      decision: "proceed",
      stepId: "9a3f0c...64hex",
      resources: [{ key: "workspace", generation: 5, due: true }],
    });
    expect(parseStepDecision(decisions.denied_rule_reason)).toEqual({
      decision: "denied",
      stepId: "9a3f0c...64hex",
      reason: "force pushes are not allowed",
      ruleId: "block-force-push",
      resources: [],
    });
  });

  it("distinguishes replayed results from replayed failures", () => {
    const ok = parseStepDecision(decisions.replay_success_null_result);
    expect(Object.hasOwn(ok, "result")).toBe(true);
    expect(ok.result).toBeNull();
    expect(ok.error).toBeUndefined();
    expect(parseStepDecision({ decision: "replay", step_id: "s" }).result).toBeNull();
    const failed = parseStepDecision(decisions.replay_failure);
    expect(failed.error).toEqual({ message: "timeout talking to search API" });
    expect(Object.hasOwn(failed, "result")).toBe(false);
    expect(parseStepDecision({ decision: "replay", result: 1, error: null }).error).toBeUndefined();
  });

  it("normalizes null and empty optional fields", () => {
    const d = parseStepDecision({
      decision: "proceed",
      step_id: "s",
      approval_id: null,
      reason: "",
      rule_id: null,
      resources: null,
      extra: 1,
    });
    expect(d).toEqual({ decision: "proceed", stepId: "s", resources: [] });
    expect(Object.keys(d).sort()).toEqual(["decision", "resources", "stepId"]);
  });

  it("rejects unknown decisions with the SDK message", () => {
    const err = (() => {
      try {
        parseStepDecision({ decision: "waiting" });
      } catch (e) {
        return e;
      }
    })();
    expect(RebunoError.isInstance(err)).toBe(true);
    expect((err as Error).message).toBe("unexpected step decision: waiting");
    expect(() => parseStepDecision({})).toThrow(ValidationError);
    expect(() => parseStepDecision(null)).toThrow(ValidationError);
    expect(() => parseStepDecision({ decision: "proceed", resources: {} })).toThrow(
      /resources must be an array/,
    );
  });

  it("accepts every documented decision", () => {
    for (const decision of DECISIONS) expect(parseStepDecision({ decision }).decision).toBe(decision);
  });
});

describe("parseExecution", () => {
  it("parses the wire example", () => {
    const body = wire.execution as Obj;
    expect(ExecutionWire.safeParse(body).success).toBe(true);
    expect(parseExecution(body)).toEqual({
      id: "0192f1a0-0000-7000-8000-000000000000",
      agentId: "researcher",
      input: { query: "hello" },
      status: "completed",
      output: { answer: "42" },
      createdAt: "2026-07-07T12:00:00.123456789Z",
      updatedAt: "2026-07-07T12:00:03.5Z",
      session: "chat:u42:c7",
      parentExecutionId: "0192f19f-0000-7000-8000-000000000000",
    });
  });

  it("treats absent, null and empty optional fields alike (docs/protocol.md §1.1)", () => {
    const base = { id: "e", agent_id: "a", status: "failed", created_at: "t0", updated_at: "t1" };
    const withNulls = {
      ...base,
      failure_reason: "",
      deadline_at: null,
      session: "",
      spawned_by: null,
      fork_seq: null,
      restoration: null,
      idempotency_key: null,
    };
    expect(parseExecution(withNulls)).toEqual(parseExecution(base));
    expect(parseExecution(base)).toEqual({
      id: "e",
      agentId: "a",
      input: null,
      status: "failed",
      createdAt: "t0",
      updatedAt: "t1",
    });
    expect(Object.hasOwn(parseExecution(withNulls), "failureReason")).toBe(false);
    expect(ExecutionWire.safeParse(withNulls).success).toBe(true);
  });

  it("parses subagent and fork fields", () => {
    const e = parseExecution({
      id: "e",
      agent_id: "a",
      input: null,
      status: "running",
      created_at: "t",
      updated_at: "t",
      spawned_by: { execution_id: "p", step_id: "s" },
      idempotency_key: "s",
      forked_from: "src",
      fork_seq: 7,
      restoration: {
        ws: { checkpoint_ref: "snap", checkpoint_seq: 5, covered: true },
        db: { covered: false },
      },
    });
    expect(e.spawnedBy).toEqual({ executionId: "p", stepId: "s" });
    expect(e.forkSeq).toBe(7);
    expect(e.restoration).toEqual({
      ws: { checkpointRef: "snap", checkpointSeq: 5, covered: true },
      db: { covered: false },
    });
  });

  it("rejects bad required fields", () => {
    expect(() => parseExecution({ id: "e" })).toThrow(/invalid execution: agent_id must be a string/);
    const bad = { id: "e", agent_id: "a", status: "exploded", created_at: "t", updated_at: "t" };
    expect(() => parseExecution(bad)).toThrow(/status must be one of/);
    expect(ExecutionWire.safeParse(bad).success).toBe(false);
  });

  it("parses lists", () => {
    expect(parseExecutionList(wire.execution_list)).toEqual({
      executions: [],
      nextCursor: "0192f1a0-0000-7000-8000-000000000000",
    });
    expect(parseExecutionList({ executions: null })).toEqual({ executions: [] });
  });
});

describe("other parsers", () => {
  it("parseStep", () => {
    const body = wire.step as Obj;
    expect(StepWire.safeParse(body).success).toBe(true);
    expect(parseStep(body)).toEqual({
      stepId: "9a3f0c...64hex",
      executionId: "0192f1a0-0000-7000-8000-000000000000",
      kind: "tool_call",
      target: "web_search",
      argsHash: "64hex",
      occurrence: 0,
      status: "succeeded",
      idempotency: "safe_to_retry",
      args: { q: "rebuno" },
      result: { hits: 3 },
      startedAt: "2026-07-07T12:00:01Z",
      completedAt: "2026-07-07T12:00:02Z",
    });
    const { idempotency: _omit, ...noIdem } = body;
    expect(parseStep({ ...noIdem, idempotency: "" }).idempotency).toBe("safe_to_retry");
    expect(() => parseStep({ ...body, occurrence: -1 })).toThrow(/occurrence must be a non-negative integer/);
  });

  it("parseEvent", () => {
    for (const e of wire.events as Obj[]) {
      expect(EventWire.safeParse(e).success).toBe(true);
      const parsed = parseEvent(e);
      expect(parsed.eventSeq).toBe(e.event_seq);
      expect(parsed.payload).toEqual(e.payload);
    }
    expect(
      parseEvent({ execution_id: "e", event_seq: 1, type: "x.y", payload: null, occurred_at: "t" }).payload,
    ).toEqual({});
  });

  it("event payload schemas accept the example events", () => {
    const byPrefix = {
      execution: ExecutionEventPayloadWire,
      step: StepEventPayloadWire,
      dispatch: DispatchEventPayloadWire,
    } as const;
    for (const e of wire.events as { type: string; payload: unknown }[]) {
      const schema = byPrefix[e.type.split(".")[0] as keyof typeof byPrefix];
      expect(schema.safeParse(e.payload).success).toBe(true);
      expect(EVENT_TYPES).toContain(e.type);
    }
  });

  it("parseApproval", () => {
    const body = wire.approval as Obj;
    expect(ApprovalWire.safeParse(body).success).toBe(true);
    expect(parseApproval(body)).toEqual({
      id: "0192aaaa-0000-7000-8000-000000000001",
      stepId: "9a3f0c...64hex",
      executionId: "0192f1a0-0000-7000-8000-000000000000",
      status: "pending",
      approvers: ["alice", "bob"],
      message: "check the target path before granting",
      timeoutAt: "2026-07-07T12:05:00Z",
      createdAt: "2026-07-07T12:00:00Z",
    });
    expect(parseApproval({ ...body, approvers: null }).approvers).toEqual([]);
  });

  it("parseAgent", () => {
    const body = wire.agent as Obj;
    expect(AgentWire.safeParse(body).success).toBe(true);
    expect(parseAgent(body)).toEqual({
      id: "researcher",
      webhookUrl: "http://localhost:5001/webhook",
      policyBundle: "default_action: deny\nrules: []\n",
      registeredAt: "2026-07-07T11:00:00Z",
      leaseTimeoutSeconds: 600,
    });
  });

  it("parseApiKey", () => {
    expect(parseApiKey(wire.api_key_create_response)).toEqual({
      id: "0192...",
      name: "reader",
      scopes: ["executions:read"],
      createdAt: "2026-07-07T11:00:00Z",
      token: "<shown once>",
      revoked: false,
    });
    expect(parseApiKey({ id: "k", name: "n", scopes: [], created_at: "t", revoked_at: "t2" }).revoked).toBe(
      true,
    );
  });

  it("parseResourceView", () => {
    const body = {
      key: "workspace",
      driver_id: "e2b",
      configuration: { template: "base" },
      coverage_reuse: true,
      every_steps: 3,
      on_completion: true,
      generation: 2,
      count: 5,
      registered_seq: 9,
      binding: { sandbox_id: "sb1" },
      checkpoint_ref: "snap-1",
      covered: true,
      policy: "ignored",
    };
    expect(ResourceViewWire.safeParse(body).success).toBe(true);
    expect(parseResourceView(body)).toEqual({
      key: "workspace",
      driverId: "e2b",
      configuration: { template: "base" },
      coverageReuse: true,
      everySteps: 3,
      onCompletion: true,
      generation: 2,
      count: 5,
      registeredSeq: 9,
      binding: { sandbox_id: "sb1" },
      checkpointRef: "snap-1",
      covered: true,
    });
    expect(parseResourceView({ key: "k", driver_id: "d" })).toMatchObject({
      generation: 0,
      configuration: null,
    });
  });

  it("parseWebhookPayload is strict about the lease fields", () => {
    const body = (wire.webhook as Obj).body as Obj;
    expect(WebhookPayloadWire.safeParse(body).success).toBe(true);
    expect(parseWebhookPayload(body)).toEqual({
      executionId: "018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b",
      dispatchId: "01920000-0000-7000-8000-000000000001",
      dispatchAttempt: 1,
      leaseTimeoutSeconds: 120,
    });
    expect(parseWebhookPayload({ ...body, lease_timeout_seconds: 7.5 }).leaseTimeoutSeconds).toBe(7.5);
    for (const bad of [
      { ...body, dispatch_attempt: 0 },
      { ...body, dispatch_attempt: 1.5 },
      { ...body, dispatch_attempt: "1" },
      { ...body, lease_timeout_seconds: 0 },
      { ...body, execution_id: "" },
      { execution_id: "e", dispatch_id: "d" },
    ]) {
      expect(() => parseWebhookPayload(bad)).toThrow(ValidationError);
      expect(WebhookPayloadWire.safeParse(bad).success).toBe(false);
    }
  });

  it("parseForkPoints", () => {
    const body = {
      latest_seq: 12,
      resources: { ws: 3 },
      checkpoints: [
        { key: "ws", generation: 1, checkpoint_ref: "a", covered_seq: 3, invalidated_seq: 8 },
        { key: "ws", generation: 2, checkpoint_ref: "b", covered_seq: 8 },
      ],
    };
    expect(ForkPointsWire.safeParse(body).success).toBe(true);
    expect(parseForkPoints(body)).toEqual({
      latestSeq: 12,
      resources: { ws: 3 },
      checkpoints: [
        { key: "ws", generation: 1, checkpointRef: "a", coveredSeq: 3, invalidatedSeq: 8 },
        { key: "ws", generation: 2, checkpointRef: "b", coveredSeq: 8 },
      ],
    });
    expect(parseForkPoints({ latest_seq: 0, resources: null, checkpoints: null })).toEqual({
      latestSeq: 0,
      resources: {},
      checkpoints: [],
    });
  });

  it("error envelopes in the wire examples match the schema", () => {
    for (const e of Object.values(wire.errors as Record<string, { body: unknown }>)) {
      expect(ErrorEnvelopeWire.safeParse(e.body).success).toBe(true);
    }
  });
});
