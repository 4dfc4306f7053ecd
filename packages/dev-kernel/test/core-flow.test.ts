// The main path over HTTP: create → webhook → steps → complete, and the exact wire shapes.
import { argsHashFromText, computeStepId } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("core flow ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("create starts the execution, queues and delivers a signed webhook", async () => {
    h = await Harness.start(store);
    const e = await h.create("alpha", { input: { n: 1.0 } });
    expect(e).toMatchObject({ agent_id: "alpha", status: "running", created_at: "2026-07-07T12:00:00Z" });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(e).not.toHaveProperty("output");
    expect(e).not.toHaveProperty("failure_reason");
    const w = await h.webhook(e.id);
    expect(w).toEqual({
      execution_id: e.id,
      dispatch_id: expect.any(String),
      dispatch_attempt: 1,
      lease_timeout_seconds: 120,
    });
    await h.kernel.tick();
    expect(await h.eventTypes(e.id)).toEqual([
      "execution.created",
      "execution.started",
      "dispatch.queued",
      "dispatch.acked",
    ]);
    const events = await h.events(e.id);
    expect(events[2].payload).toEqual({
      dispatch_id: w.dispatch_id,
      execution_id: e.id,
      status: "pending",
      attempt: 0,
    });
    expect(events[3].payload).toEqual({
      dispatch_id: w.dispatch_id,
      execution_id: e.id,
      status: "acked",
      attempt: 1,
    });
    expect(events.map((x) => x.event_seq)).toEqual([1, 2, 3, 4]);
  });

  test("input keeps its raw number text", async () => {
    h = await Harness.start(store);
    const r = await h.client(
      "POST",
      "/v0/executions",
      '{"agent_id":"alpha","input":{"n":1.0,"big":100000000000000000000001}}',
    );
    expect(r.status).toBe(201);
    expect(r.text).toContain('"input":{"n":1.0,"big":100000000000000000000001}');
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.text.endsWith("}\n")).toBe(true);
  });

  test("step proceed, complete, replay, then complete the execution", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const raw =
      '{"kind":"tool_call","target":"search","args":{"q":"x","n":1.0},"idempotency":"safe_to_retry","resources":[]}';
    const submitRaw = () => h.agent("POST", `/v0/executions/${id}/steps`, { raw, lease });
    const r1 = await submitRaw();
    expect(r1.status).toBe(200);
    const expectedId = computeStepId(id, "tool_call", "search", argsHashFromText('{"q":"x","n":1.0}'), 0);
    expect(r1.body).toEqual({ decision: "proceed", step_id: expectedId });

    const c = await h.complete(id, lease, expectedId, { hits: 3, score: 1.5 });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ decision: "recorded" });

    const step = await h.client("GET", `/v0/executions/${id}/steps/${expectedId}`);
    expect(step.status).toBe(200);
    expect(step.body).toMatchObject({
      step_id: expectedId,
      execution_id: id,
      kind: "tool_call",
      target: "search",
      args_hash: argsHashFromText('{"q":"x","n":1.0}'),
      occurrence: 0,
      status: "succeeded",
      idempotency: "safe_to_retry",
      args: { q: "x", n: 1 },
      result: { hits: 3, score: 1.5 },
    });
    expect(step.text).toContain('"args":{"q":"x","n":1.0}');

    // Same dispatch, same call again → occurrence 1, a new step.
    const r2 = await submitRaw();
    expect(r2.body.decision).toBe("proceed");
    expect(r2.body.step_id).toBe(
      computeStepId(id, "tool_call", "search", argsHashFromText('{"q":"x","n":1.0}'), 1),
    );

    // Complete the execution.
    const done = await h.agent("POST", `/v0/executions/${id}/complete`, {
      body: { output: { answer: 42 } },
      lease,
    });
    expect(done.status).toBe(204);
    expect(done.text).toBe("");
    const e = await h.execution(id);
    expect(e).toMatchObject({ status: "completed", output: { answer: 42 } });
    const types = await h.eventTypes(id);
    expect(types.at(-1)).toBe("execution.completed");
    expect(types).toContain("step.succeeded");

    // A terminal execution answers the decision, not an error.
    const r3 = await submitRaw();
    expect(r3.body).toEqual({ decision: "execution_terminal" });
    const again = await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: 1 }, lease });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ code: "execution_terminal", message: "execution terminal" });
  });

  test("redelivery replays recorded steps from occurrence zero", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 30 } });
    const { id, lease } = await h.started();
    const call = { kind: "tool_call", target: "t", args: {} };
    const a = await h.submit(id, lease, call);
    await h.complete(id, lease, a.body.step_id, "first");
    // Lease expires → reclaimed → redelivered with attempt 2.
    h.advance(31_000);
    await h.kernel.tick();
    const w2 = await h.webhook(id, 2);
    expect(w2.dispatch_id).toBe(lease.dispatchId);
    const replay = await h.submit(id, leaseOf(w2), call);
    expect(replay.body).toEqual({ decision: "replay", step_id: a.body.step_id, result: "first" });
  });
});
