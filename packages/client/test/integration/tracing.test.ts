/**
 * The caller's spans (docs/observability.md §3) against the real dev kernel in process, read back
 * from the OpenTelemetry JS SDK's in-memory exporter: `create_execution` and `wait_for_terminal`
 * land in the execution's trace (the ids derived from its id), linked both ways with the caller's
 * active span; a refused create keeps its span in the caller's trace with error status.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { AgentTransport } from "@rebuno/kernel-transport";
import { NotFoundError, rootSpanIdOfExecution, TimeoutError, traceIdOfExecution } from "@rebuno/protocol";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type Env, startEnv } from "./setup.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

// The caller's active span travels through the context manager, as under the Node SDK.
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

const spansNamed = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);

describe("client spans in the execution's trace", () => {
  let env: Env;
  let agent: AgentTransport;

  beforeEach(async () => {
    env = await startEnv("in-process");
    agent = env.agent();
  });
  afterEach(async () => {
    await env.close();
    exporter.reset();
  });

  test("create_execution and wait_for_terminal share the execution's trace, under its root", async () => {
    const client = env.client();
    const before = Date.now();
    const created = await client.create("alpha", { n: 1 });
    const after = Date.now();
    const lease = await env.lease(created.id);
    await agent.completeExecution(created.id, lease, { output: { ok: true } });
    const done = await client.waitForTerminal(created.id, { timeoutMs: 5_000 });
    expect(done.status).toBe("completed");

    const [create] = spansNamed("create_execution alpha");
    const [wait] = spansNamed("wait_for_terminal");
    for (const span of [create!, wait!]) {
      expect(span.spanContext().traceId).toBe(traceIdOfExecution(created.id));
      expect(span.parentSpanContext?.spanId).toBe(rootSpanIdOfExecution(created.id));
      expect(span.parentSpanContext?.isRemote).toBe(true);
      expect(span.attributes["rebuno.execution.id"]).toBe(created.id);
      expect(span.kind).toBe(SpanKind.CLIENT);
    }
    expect(create!.attributes["gen_ai.agent.id"]).toBe("alpha");
    expect(wait!.attributes["rebuno.execution.status"]).toBe("completed");
    // Started before the request went out, not when the answer named the trace.
    const startMs = create!.startTime[0] * 1000 + create!.startTime[1] / 1e6;
    expect(startMs).toBeGreaterThanOrEqual(before - 1);
    expect(startMs).toBeLessThanOrEqual(after + 1);
  });

  test("the caller's active span links to the execution and the client spans link back", async () => {
    const client = env.client();
    const caller = provider.getTracer("test").startSpan("handle request");
    const created = await context.with(trace.setSpan(context.active(), caller), () =>
      client.create("alpha", null),
    );
    caller.end();
    const [create] = spansNamed("create_execution alpha");
    const [ended] = spansNamed("handle request");
    expect(create!.links.map((l) => l.context.spanId)).toEqual([caller.spanContext().spanId]);
    expect(ended!.attributes["rebuno.execution.id"]).toBe(created.id);
    expect(ended!.links.map((l) => l.context.traceId)).toEqual([traceIdOfExecution(created.id)]);
  });

  test("a refused create records an error span in the caller's trace and rethrows", async () => {
    const client = env.client();
    await expect(client.create("no-such-agent", null)).rejects.toBeInstanceOf(NotFoundError);
    const [span] = spansNamed("create_execution no-such-agent");
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes["error.type"]).toBe("NotFoundError");
    expect(span!.events.map((e) => e.name)).toEqual(["exception"]);
    expect(span!.parentSpanContext).toBeUndefined();
  });

  test("a wait that times out ends its span with error status", async () => {
    const client = env.client();
    const created = await client.create("alpha", null);
    await expect(client.waitForTerminal(created.id, { timeoutMs: 50, pollMs: 10 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    const [wait] = spansNamed("wait_for_terminal");
    expect(wait!.status.code).toBe(SpanStatusCode.ERROR);
    expect(wait!.attributes["error.type"]).toBe("TimeoutError");
    expect(wait!.spanContext().traceId).toBe(traceIdOfExecution(created.id));
  });
});

describe("client spans without a registered provider", () => {
  test("the API installed and no provider: create and wait record nothing", async () => {
    const env = await startEnv("in-process");
    trace.disable();
    try {
      const client = env.client();
      const created = await client.create("alpha", null);
      const lease = await env.lease(created.id);
      await env.agent().completeExecution(created.id, lease, { output: null });
      expect((await client.waitForTerminal(created.id, { timeoutMs: 5_000 })).status).toBe("completed");
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
      await env.close();
    }
  });
});
