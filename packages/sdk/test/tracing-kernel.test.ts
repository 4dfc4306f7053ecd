/**
 * OpenTelemetry spans (docs/observability.md) against the real dev kernel, read back from the
 * OpenTelemetry JS SDK's in-memory exporter: one trace per execution, the GenAI and `rebuno.*`
 * attributes, decisions (allowed, denied, awaiting approval, replayed), subagent links, and
 * rebunoFetch spans with token usage. The provider is a local fetch function (the external service).
 */

import { SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { startDevKernel } from "@rebuno/dev-kernel";
import { rootSpanIdOfExecution, traceIdOfExecution } from "@rebuno/protocol";
import {
  Agent,
  type AgentOptions,
  createRebunoFetch,
  execution,
  raiseForRefusal,
  step,
  subagent,
  Toolbox,
  ToolError,
  tool,
} from "@rebuno/sdk";
import { freePort } from "@rebuno/test-kit";
import { TestEnvironment } from "@rebuno/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
  exporter.reset();
});

const POLICY = `
default_action: allow
rules:
  - id: blocked-card
    when:
      target: charge
      arguments:
        card: { equals: "0000" }
    then: { decision: deny, reason: card is blocked }
  - id: review-charges
    when:
      target: charge
      arguments:
        card: { equals: "9999" }
    then:
      decision: require_approval
      approval_config: { message: review this charge }
  - id: no-big-model
    when: { target: m-large, step_kind: llm_call }
    then: { decision: deny, reason: too expensive }
`;

class Billing extends Toolbox {
  @tool("charge", {
    idempotency: "at_most_once",
    description: "Charge a card",
    input: {
      type: "object",
      properties: { card: { type: "string" }, cents: { type: "number" } },
      required: ["card", "cents"],
    },
  })
  async charge(args: { card: string; cents: number }) {
    return { receipt: `r-${args.cents}` };
  }
}
const billing = new Billing();

class Charger extends Agent<{ card: string; cents: number }, unknown> {
  static override id = "charger";
  override async run(input: { card: string; cents: number }) {
    const ref = await step("order-ref", () => `ord-${input.cents}`);
    try {
      return { ref, ...(await billing.charge(input)) };
    } catch (error) {
      if (ToolError.isInstance(error) && error.reason === "denied") return { declined: error.policyReason };
      throw error;
    }
  }
}

const attr = (span: ReadableSpan, key: string) => span.attributes[key];
const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const only = (name: string) => {
  const spans = named(name);
  expect(spans, name).toHaveLength(1);
  return spans[0] as ReadableSpan;
};

/** Every finished span of `executionId` is in its trace, under its remote root or a span of it. */
function expectOneTrace(executionId: string): ReadableSpan[] {
  const traceId = traceIdOfExecution(executionId);
  const spans = exporter
    .getFinishedSpans()
    .filter((s) => s.attributes["rebuno.execution.id"] === executionId);
  expect(spans.length).toBeGreaterThan(0);
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const span of spans) {
    expect(span.spanContext().traceId, span.name).toBe(traceId);
    const parent = span.parentSpanContext?.spanId;
    expect(parent === rootSpanIdOfExecution(executionId) || ids.has(parent ?? ""), span.name).toBe(true);
  }
  return spans;
}

describe("spans of one execution", () => {
  it("first run: invoke_agent with execute_tool and step spans, one trace keyed by the execution id", async () => {
    env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
    const { execution: done, steps } = await env.run(Charger, { card: "4242", cents: 5 });
    expect(done.status).toBe("completed");
    expect(traceIdOfExecution(done.id)).toBe(done.id.replaceAll("-", ""));
    expectOneTrace(done.id);
    const invoke = only("invoke_agent charger");
    expect(invoke.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.id": "charger",
      "gen_ai.agent.name": "charger",
      "rebuno.execution.id": done.id,
      "rebuno.dispatch.attempt": 1,
      "rebuno.dispatch.outcome": "completed",
    });
    expect(invoke.parentSpanContext?.spanId).toBe(rootSpanIdOfExecution(done.id));
    const charge = only("execute_tool charge");
    const chargeStep = steps.find((s) => s.target === "charge");
    expect(charge.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "charge",
      "gen_ai.tool.call.id": chargeStep?.stepId,
      "gen_ai.tool.description": "Charge a card",
      "gen_ai.tool.type": "function",
      "rebuno.step.id": chargeStep?.stepId,
      "rebuno.step.kind": "tool_call",
      "rebuno.step.idempotency": "at_most_once",
      "rebuno.decision": "allowed",
    });
    // Arguments and results only on opt-in.
    expect(attr(charge, "gen_ai.tool.call.arguments")).toBeUndefined();
    expect(charge.parentSpanContext?.spanId).toBe(invoke.spanContext().spanId);
    expect(charge.status.code).toBe(SpanStatusCode.UNSET);
    const ref = only("order-ref");
    expect(ref.attributes).toMatchObject({ "rebuno.step.kind": "local", "rebuno.decision": "allowed" });
  });

  it("denial of a direct call: error status, the rule and its reason, the exception recorded", async () => {
    env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
    const { execution: done } = await env.run(Charger, { card: "0000", cents: 5 });
    expect(done.output).toMatchObject({ declined: "card is blocked" });
    expectOneTrace(done.id);
    const charge = only("execute_tool charge");
    expect(charge.attributes).toMatchObject({
      "rebuno.decision": "denied",
      "rebuno.rule.id": "blocked-card",
      "rebuno.policy.reason": "card is blocked",
      "error.type": "denied",
    });
    expect(charge.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "card is blocked" });
    expect(charge.events.map((e) => e.name)).toContain("exception");
    // The kernel's own spans (docs/observability.md §3) land in the same trace.
    expect(only("policy charge").attributes).toMatchObject({
      "rebuno.execution.id": done.id,
      "rebuno.decision": "deny",
      "rebuno.rule.id": "blocked-card",
      "rebuno.policy.reason": "card is blocked",
    });
    expect(only("webhook deliver charger").attributes).toMatchObject({
      "rebuno.execution.id": done.id,
      "http.response.status_code": 200,
    });
    expect(named("kernel POST /v0/executions/:uuid/steps").length).toBeGreaterThan(0);
  });

  it("approval hold and grant: a suspended attempt, then a resumed one that replays the step", async () => {
    env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
    const created = await env.client.create("charger", { card: "9999", cents: 70 });
    await env.waitForStatus(created.id, "blocked");
    const [approval] = await env.client.listApprovals({ status: "pending" });
    await env.client.grantApproval(approval?.id ?? "", { decidedBy: "ops@example.com" });
    const { execution: done } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expectOneTrace(done.id);
    // Two dispatches (the grant redispatches): the wait between them is the approval.
    const attempts = named("invoke_agent charger").sort(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
    );
    expect(attempts.map((s) => attr(s, "rebuno.dispatch.outcome"))).toEqual(["suspended", "completed"]);
    expect(new Set(attempts.map((s) => attr(s, "rebuno.dispatch.id"))).size).toBe(2);
    const charges = named("execute_tool charge");
    expect(charges.map((s) => attr(s, "rebuno.decision")).sort()).toEqual(["allowed", "awaiting_approval"]);
    const held = charges.find((s) => attr(s, "rebuno.decision") === "awaiting_approval");
    expect(attr(held as ReadableSpan, "rebuno.approval.id")).toBe(approval?.id);
    // The rerun serves the recorded step() value: its own span, marked replayed.
    const refs = named("order-ref");
    expect(refs.map((s) => attr(s, "rebuno.decision")).sort()).toEqual(["allowed", "replayed"]);
    expect(refs.find((s) => attr(s, "rebuno.decision") === "replayed")?.attributes["rebuno.replayed"]).toBe(
      true,
    );
    // Both attempts' spans hang off the same remote root.
    for (const attempt of attempts)
      expect(attempt.parentSpanContext?.spanId).toBe(rootSpanIdOfExecution(done.id));
  });

  it("without a registered provider no span is recorded and the run is unchanged", async () => {
    trace.disable();
    try {
      env = await TestEnvironment.create({ agents: [Charger], policy: POLICY });
      const { execution: done } = await env.run(Charger, { card: "4242", cents: 9 });
      expect(done.output).toEqual({ ref: "ord-9", receipt: "r-9" });
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
  });
});

describe("subagents", () => {
  class Desk extends Toolbox {
    @tool({
      input: {
        type: "object",
        properties: { topic: { type: "string" }, session: { type: "string" } },
        required: ["topic", "session"],
      },
    })
    async research(args: { topic: string; session: string }) {
      return subagent("researcher", { topic: args.topic }, { session: args.session });
    }
  }
  const desk = new Desk();
  const parent = (options: AgentOptions) =>
    new Agent(
      "parent",
      () => desk.research({ topic: "tea", session: `researcher:${execution().id}` }),
      options,
    );
  const researcher = (options: AgentOptions) =>
    new Agent<{ topic: string }, unknown>("researcher", (input) => ({ notes: [input.topic] }), options);

  it("links the parent's tool span and the child's dispatch both ways, each in its own trace", async () => {
    env = await TestEnvironment.create({ agents: [parent, researcher] });
    const { execution: done, steps } = await env.run("parent", {});
    expect(done.status).toBe("completed");
    const [child] = (await env.client.list({ agentId: "researcher" })).executions;
    const childId = child?.id ?? "";
    expectOneTrace(done.id);
    expectOneTrace(childId);
    const research = named("execute_tool research");
    const linked = research.filter((s) => s.links.length > 0);
    expect(linked.length).toBeGreaterThan(0);
    for (const span of linked) {
      expect(span.links[0]?.context.traceId).toBe(traceIdOfExecution(childId));
      expect(attr(span, "rebuno.child.execution.id")).toBe(childId);
    }
    const childInvoke = only("invoke_agent researcher");
    const stepId = steps.find((s) => s.target === "research")?.stepId;
    expect(childInvoke.attributes).toMatchObject({
      "rebuno.parent.execution.id": done.id,
      "rebuno.parent.step.id": stepId,
    });
    expect(childInvoke.links[0]?.context.traceId).toBe(traceIdOfExecution(done.id));
    expect(childInvoke.spanContext().traceId).toBe(traceIdOfExecution(childId));
  });
});

describe("rebunoFetch spans", () => {
  async function providerFetch(_input: unknown, init?: RequestInit): Promise<Response> {
    const body = JSON.parse(String(init?.body)) as { model: string; stream?: boolean };
    if (body.stream) {
      const events = [
        'data: {"type":"message_start","message":{"usage":{"input_tokens":11}}}\n\n',
        'data: {"delta":"Hi"}\n\n',
        'data: {"type":"message_delta","usage":{"output_tokens":4}}\n\n',
      ];
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const e of events) controller.enqueue(new TextEncoder().encode(e));
          controller.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    }
    return Response.json({ text: "ok", usage: { prompt_tokens: 7, completion_tokens: 3 } });
  }
  const llm = createRebunoFetch({ fetch: providerFetch as typeof fetch });
  async function complete(model: string, stream: boolean): Promise<string> {
    const res = await llm("https://llm.test/v1/complete", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, stream }),
    });
    if (res.status === 403) raiseForRefusal(new Error(await res.text()));
    return res.text();
  }
  const writer = (options: AgentOptions) =>
    new Agent<{ model: string }, unknown>(
      "writer",
      async (input) => ({
        plain: await complete(input.model, false),
        streamed: await complete(input.model, true),
      }),
      options,
    );

  it("plain and streamed calls: chat spans with the model and token usage", async () => {
    env = await TestEnvironment.create({ agents: [writer], policy: POLICY });
    const { execution: done } = await env.run("writer", { model: "m-small" });
    expect(done.status).toBe("completed");
    expectOneTrace(done.id);
    const chats = named("chat m-small");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m-small",
        "rebuno.step.kind": "llm_call",
        "rebuno.decision": "allowed",
      });
    }
    const usage = chats.map((s) => [
      attr(s, "gen_ai.usage.input_tokens"),
      attr(s, "gen_ai.usage.output_tokens"),
    ]);
    expect(usage.sort()).toEqual([
      [11, 4],
      [7, 3],
    ]);
  });

  it("an LLM call denied by policy: the chat span has error status and the rule's reason", async () => {
    env = await TestEnvironment.create({ agents: [writer], policy: POLICY });
    const { execution: done } = await env.run("writer", { model: "m-large" });
    expect(done.status).toBe("failed");
    expectOneTrace(done.id);
    const chat = only("chat m-large");
    expect(chat.attributes).toMatchObject({
      "rebuno.decision": "denied",
      "rebuno.rule.id": "no-big-model",
      "rebuno.policy.reason": "too expensive",
    });
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    const invoke = only("invoke_agent writer");
    expect(invoke.attributes["rebuno.dispatch.outcome"]).toBe("failed");
    expect(invoke.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe("the kernel's webhook delivery span", () => {
  it("records why a delivery failed (nothing listens at the agent's URL)", async () => {
    const kernel = await startDevKernel({ dispatch: { maxAttempts: 1, pollMs: 20 } });
    try {
      // A port that was just free: the delivery meets a refused connection.
      const probe = await kernel.listen({ host: "127.0.0.1", port: 0 });
      const closedPort = await freePort();
      kernel.registerAgent({
        id: "gone",
        webhookUrl: `http://127.0.0.1:${closedPort}/`,
        secret: "s".repeat(32),
      });
      const created = (await await fetch(`${probe}/v0/executions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ agent_id: "gone", input: {} }),
      }).then((r) => r.json())) as { id: string };
      const span = await vi.waitFor(
        () => {
          const found = named("webhook deliver gone")[0];
          if (found === undefined) throw new Error("no delivery span yet");
          return found;
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(span.attributes).toMatchObject({
        "rebuno.execution.id": created.id,
        "rebuno.dispatch.attempt": 1,
        "error.type": "connection_refused",
      });
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.spanContext().traceId).toBe(traceIdOfExecution(created.id));
    } finally {
      await kernel.close();
    }
  });
});
