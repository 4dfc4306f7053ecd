// Every body the kernel produces in a broad scenario parses with the protocol's wire schemas (the
// same ones the SDK and client read with), and every event payload with its family's schema.
import {
  AgentWire,
  ApiKeyWire,
  ApprovalEventPayloadWire,
  ApprovalWire,
  DispatchEventPayloadWire,
  ErrorEnvelopeWire,
  EventWire,
  ExecutionEventPayloadWire,
  ExecutionListWire,
  ExecutionWire,
  ForkPointsWire,
  PreviousWire,
  ResourceEventPayloadWire,
  ResourceViewWire,
  StepDecisionWire,
  StepEventPayloadWire,
  StepOutcomeWire,
  StepWire,
  SuspendWire,
} from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_AGENTS, Harness } from "./harness.js";
import { stores } from "./stores.js";

const BUNDLE = `default_action: allow
rules:
  - id: review
    when: { target: pay }
    then: { decision: require_approval, approval_config: { approvers: [ops] } }
  - id: nope
    when: { target: rm }
    then: { decision: deny }
`;

function strictParse(
  schema: { safeParse(v: unknown): { success: boolean; error?: unknown } },
  value: unknown,
  what: string,
) {
  const r = schema.safeParse(value);
  expect(r.success, `${what}: ${JSON.stringify(value)} ${String(r.error)}`).toBe(true);
}

const PAYLOAD_SCHEMAS: [string, { safeParse(v: unknown): { success: boolean } }][] = [
  ["execution.", ExecutionEventPayloadWire],
  ["step.", StepEventPayloadWire],
  ["resource.", ResourceEventPayloadWire],
  ["approval.", ApprovalEventPayloadWire],
  ["dispatch.", DispatchEventPayloadWire],
];

describe.each(stores)("wire conformance ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("responses and event payloads match the protocol's wire schemas", async () => {
    h = await Harness.start(store, {
      agents: [{ ...DEFAULT_AGENTS[0]!, policy: BUNDLE }, DEFAULT_AGENTS[1]!],
    });
    const ids: string[] = [];
    const p = await h.started("alpha", { session: "w" });
    ids.push(p.id);
    strictParse(ExecutionWire, await h.execution(p.id), "execution");
    const view = await h.agent("POST", `/v0/executions/${p.id}/resources`, {
      body: { key: "ws", driver_id: "d", every_steps: 1 },
      lease: p.lease,
    });
    strictParse(ResourceViewWire, view.body, "resource view");
    const decisions = [
      await h.submit(p.id, p.lease, { kind: "tool_call", target: "sub", args: {}, resources: ["ws"] }),
      await h.submit(p.id, p.lease, { kind: "tool_call", target: "rm", args: {} }),
      await h.submit(p.id, p.lease, { kind: "llm_call", target: "m", args: {} }),
    ];
    for (const d of decisions) strictParse(StepDecisionWire, d.body, "decision");
    const outcome = await h.agent(
      "POST",
      `/v0/executions/${p.id}/steps/${decisions[2]!.body.step_id}/complete`,
      {
        body: {
          result: { status: 200, headers: {}, body: '{"usage":{"input_tokens":1,"output_tokens":2}}' },
        },
        lease: p.lease,
      },
    );
    strictParse(StepOutcomeWire, outcome.body, "outcome");
    const child = await h.create("beta", {
      spawned_by: { execution_id: p.id, step_id: decisions[0]!.body.step_id },
    });
    ids.push(child.id);
    strictParse(ExecutionWire, child, "child");
    const susp = await h.agent("POST", `/v0/executions/${p.id}/suspend`, { lease: p.lease });
    strictParse(SuspendWire, susp.body, "suspend");
    await h.client("POST", `/v0/executions/${child.id}/cancel`);
    const w = await h.nextWebhook(p.id, 1);
    const l2 = { dispatchId: w.dispatch_id, attempt: w.dispatch_attempt };
    const blocked = await h.submit(p.id, l2, { kind: "tool_call", target: "pay", args: { n: 1 } });
    strictParse(StepDecisionWire, blocked.body, "blocked");
    strictParse(
      ApprovalWire,
      (await h.client("GET", `/v0/approvals/${blocked.body.approval_id}`)).body,
      "approval",
    );
    await h.client("POST", `/v0/approvals/${blocked.body.approval_id}/grant`, {
      decided_by: "ops",
      rationale: "fine",
    });
    strictParse(
      ApprovalWire,
      (await h.client("GET", `/v0/approvals/${blocked.body.approval_id}`)).body,
      "decided",
    );
    const fork = await h.client("POST", `/v0/executions/${p.id}/fork`, {
      at_seq: (await h.events(p.id)).length,
    });
    ids.push(fork.body.id);
    strictParse(ExecutionWire, fork.body, "fork");
    strictParse(
      ForkPointsWire,
      (await h.client("GET", `/v0/executions/${p.id}/fork-points`)).body,
      "fork points",
    );
    strictParse(PreviousWire, (await h.client("GET", `/v0/executions/${p.id}/previous`)).body, "previous");
    strictParse(ExecutionListWire, (await h.client("GET", "/v0/executions?limit=1")).body, "list");
    for (const s of (await h.client("GET", `/v0/executions/${p.id}/steps`)).body)
      strictParse(StepWire, s, "step");
    for (const a of (await h.client("GET", "/v0/agents")).body) strictParse(AgentWire, a, "agent");
    const key = await h.client("POST", "/v0/api-keys", { name: "k", scopes: ["executions:read"] });
    strictParse(ApiKeyWire, key.body, "api key");
    await h.client("DELETE", `/v0/api-keys/${key.body.id}`);
    for (const k of (await h.client("GET", "/v0/api-keys")).body) strictParse(ApiKeyWire, k, "api key list");
    strictParse(ErrorEnvelopeWire, (await h.client("GET", "/v0/executions/x")).body, "error");

    await h.kernel.tick();
    const types = new Set<string>();
    for (const id of ids) {
      for (const e of await h.events(id)) {
        strictParse(EventWire, e, "event");
        types.add(e.type);
        const schema = PAYLOAD_SCHEMAS.find(([prefix]) => e.type.startsWith(prefix))?.[1];
        expect(schema, e.type).toBeDefined();
        strictParse(schema!, e.payload, e.type);
      }
    }
    // The scenario really produced a broad set of event types.
    for (const t of [
      "execution.created",
      "execution.forked",
      "execution.started",
      "execution.blocked",
      "execution.resumed",
      "execution.cancelled",
      "step.proposed",
      "step.allowed",
      "step.denied",
      "step.awaiting_approval",
      "step.executing",
      "step.succeeded",
      "step.failed",
      "resource.registered",
      "resource.initialized",
      "approval.requested",
      "approval.granted",
      "dispatch.queued",
      "dispatch.acked",
    ]) {
      expect(types.has(t), t).toBe(true);
    }
  });
});
