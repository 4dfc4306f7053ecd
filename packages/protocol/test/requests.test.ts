import { loadVector } from "@rebuno/test-kit";
import { describe, expect, it } from "vitest";
import {
  BindResourceRequestSchema,
  CheckpointsRequestSchema,
  CompleteExecutionRequestSchema,
  CompleteStepRequestSchema,
  CreateApiKeyRequestSchema,
  CreateExecutionRequestSchema,
  DecideApprovalRequestSchema,
  FailExecutionRequestSchema,
  FailStepRequestSchema,
  ForkRequestSchema,
  RegisterAgentRequestSchema,
  RegisterResourceRequestSchema,
  SetPolicyRequestSchema,
  StreamDeltaRequestSchema,
  SubmitStepRequestSchema,
  ValidationError,
  validateRequest,
} from "../src/index.js";

const wire = loadVector<Record<string, Record<string, unknown>>>("wire_examples");

const VALID = [
  ["SubmitStep", SubmitStepRequestSchema, (wire.submit_step_request as { body: unknown }).body],
  ["SubmitStep minimal", SubmitStepRequestSchema, { kind: "local", target: "t" }],
  [
    "SubmitStep nulls",
    SubmitStepRequestSchema,
    { kind: "llm_call", target: "m", idempotency: null, resources: null },
  ],
  ["CompleteStep", CompleteStepRequestSchema, wire.complete_step_request],
  ["FailStep", FailStepRequestSchema, wire.fail_step_request],
  ["CreateExecution", CreateExecutionRequestSchema, wire.create_execution_request],
  ["CreateExecution subagent", CreateExecutionRequestSchema, wire.create_subagent_request],
  ["CompleteExecution", CompleteExecutionRequestSchema, wire.complete_execution_request],
  ["FailExecution", FailExecutionRequestSchema, wire.fail_execution_request],
  ["RegisterAgent", RegisterAgentRequestSchema, wire.agent_register_request],
  ["SetPolicy", SetPolicyRequestSchema, wire.policy_load_request],
  ["DecideApproval", DecideApprovalRequestSchema, wire.approval_decision_request],
  ["CreateApiKey", CreateApiKeyRequestSchema, wire.api_key_create_request],
  ["StreamDelta", StreamDeltaRequestSchema, wire.stream_delta_request],
  [
    "RegisterResource",
    RegisterResourceRequestSchema,
    { key: "work.space-1", driver_id: "e2b", every_steps: 0 },
  ],
  ["BindResource", BindResourceRequestSchema, { binding: { id: 1 } }],
  ["Checkpoints", CheckpointsRequestSchema, { captures: [{ key: "k", generation: 1, checkpoint_ref: "r" }] }],
  ["Fork", ForkRequestSchema, { at_seq: 4, session: "s" }],
] as const;

const INVALID = [
  [
    "unknown field",
    SubmitStepRequestSchema,
    { kind: "local", target: "t", extra: 1 },
    'json: unknown field "extra"',
  ],
  [
    "unknown nested field",
    CompleteStepRequestSchema,
    { result: 1, captures: [{ key: "k", generation: 1, checkpoint_ref: "r", x: 1 }] },
    'json: unknown field "captures.0.x"',
  ],
  ["bad kind", SubmitStepRequestSchema, { kind: "shell", target: "t" }, "kind"],
  [
    "bad idempotency",
    SubmitStepRequestSchema,
    { kind: "local", target: "t", idempotency: "once" },
    "idempotency",
  ],
  ["missing agent_id", CreateExecutionRequestSchema, { input: 1 }, "agent_id"],
  ["bad scope", CreateApiKeyRequestSchema, { name: "n", scopes: ["root"] }, "scopes"],
  ["delta too large", StreamDeltaRequestSchema, { seq: 0, data: "é".repeat(3501) }, "exceeds 7000 bytes"],
  ["bad resource key", RegisterResourceRequestSchema, { key: "a/b", driver_id: "d" }, "invalid resource key"],
  ["null binding", BindResourceRequestSchema, { binding: null }, "binding must not be null"],
  ["missing binding", BindResourceRequestSchema, {}, "binding"],
  ["negative at_seq", ForkRequestSchema, { at_seq: -1 }, "at_seq"],
  ["not an object", SetPolicyRequestSchema, "bundle", "expected object"],
] as const;

describe("request schemas", () => {
  it.each(VALID)("%s accepts the documented body", (_name, schema, body) => {
    expect(() => validateRequest(schema, body)).not.toThrow();
  });

  it.each(INVALID)("%s is rejected", (_name, schema, body, text) => {
    let err: unknown;
    try {
      validateRequest(schema, body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).message).toMatch(/^validation error: /);
    expect((err as ValidationError).message).toContain(text);
    expect((err as ValidationError).issues.length).toBeGreaterThan(0);
    expect((err as ValidationError).status).toBe(400);
  });

  it("accepts a 7000-byte delta", () => {
    expect(() => validateRequest(StreamDeltaRequestSchema, { seq: 1, data: "é".repeat(3500) })).not.toThrow();
  });
});
