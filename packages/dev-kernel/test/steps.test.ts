// Steps (docs/protocol.md §4.7–4.10, docs/protocol.md §5.3, §6): occurrence counting, replay table, orphans in both
// idempotency modes, the indeterminate-retry guard, outcome conflicts, listing.
import { argsHashFromText, computeStepId } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

const INDETERMINATE = {
  message: "outcome unknown: this may already have taken effect. Check the state before continuing.",
  reason: "indeterminate",
};

describe.each(stores)("steps ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("parallel identical submissions get distinct occurrences", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const call = { kind: "tool_call", target: "fetch", args: { url: "u" } };
    const answers = await Promise.all([0, 1, 2].map(() => h.submit(id, lease, call)));
    const ids = answers.map((a) => a.body.step_id);
    const hash = argsHashFromText('{"url":"u"}');
    expect(new Set(ids)).toEqual(
      new Set([0, 1, 2].map((n) => computeStepId(id, "tool_call", "fetch", hash, n))),
    );
    const listed = await h.client("GET", `/v0/executions/${id}/steps`);
    expect(listed.body.map((s: { step_id: string }) => s.step_id)).toEqual([...ids].sort());
    expect(listed.body.map((s: { occurrence: number }) => s.occurrence).sort()).toEqual([0, 1, 2]);
  });

  test("kind and idempotency are validated; args absent hash like null", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const bad = await h.submit(id, lease, { kind: "shell", target: "x" });
    expect(bad.status).toBe(400);
    const bad2 = await h.submit(id, lease, { kind: "local", target: "x", idempotency: "maybe" });
    expect(bad2.status).toBe(400);
    const ok = await h.submit(id, lease, { kind: "local", target: "now" });
    expect(ok.body.step_id).toBe(computeStepId(id, "local", "now", argsHashFromText(undefined), 0));
    const step = await h.client("GET", `/v0/executions/${id}/steps/${ok.body.step_id}`);
    expect(step.body).not.toHaveProperty("args");
  });

  test("fail records the error and replays it", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 10 } });
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "tool_call", target: "t", args: {} });
    const f = await h.agent("POST", `/v0/executions/${id}/steps/${s.body.step_id}/fail`, {
      body: { error: { message: "boom" } },
      lease,
    });
    expect(f.body).toEqual({ decision: "recorded" });
    const again = await h.agent("POST", `/v0/executions/${id}/steps/${s.body.step_id}/complete`, {
      body: { result: "late" },
      lease,
    });
    expect(again.body).toEqual({ decision: "replay", error: { message: "boom" } });
    h.advance(10_001);
    await h.kernel.tick();
    const w2 = await h.webhook(id, 2);
    const replay = await h.submit(id, leaseOf(w2), { kind: "tool_call", target: "t", args: {} });
    expect(replay.body).toEqual({ decision: "replay", step_id: s.body.step_id, error: { message: "boom" } });
    const terminal = await h.client("GET", `/v0/executions/${id}/steps?status=terminal`);
    expect(terminal.body).toHaveLength(1);
    const events = await h.events(id);
    expect(events.find((e) => e.type === "step.failed").payload).toEqual({
      step_id: s.body.step_id,
      step_type: "tool_call",
      target: "t",
      error: { message: "boom" },
    });
  });

  test("orphans: safe_to_retry re-runs; at_most_once fails indeterminate and then refuses retries", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 10 } });
    const { id, lease } = await h.started();
    const safe = { kind: "tool_call", target: "read", args: {}, idempotency: "safe_to_retry" };
    const once = { kind: "tool_call", target: "charge", args: { amount: 5 }, idempotency: "at_most_once" };
    const s1 = await h.submit(id, lease, safe);
    const s2 = await h.submit(id, lease, once);
    expect(s2.body.decision).toBe("proceed");
    h.advance(10_001);
    await h.kernel.tick();
    const l2 = leaseOf(await h.webhook(id, 2));
    expect((await h.submit(id, l2, safe)).body).toEqual({ decision: "proceed", step_id: s1.body.step_id });
    const orphan = await h.submit(id, l2, once);
    expect(orphan.body).toEqual({ decision: "replay", step_id: s2.body.step_id, error: INDETERMINATE });
    const stored = await h.client("GET", `/v0/executions/${id}/steps/${s2.body.step_id}`);
    expect(stored.body).toMatchObject({ status: "failed", error: INDETERMINATE });
    // The same call again in this dispatch is a new occurrence → refused by the guard.
    const retry = await h.submit(id, l2, once);
    expect(retry.body).toEqual({
      decision: "denied",
      step_id: computeStepId(id, "tool_call", "charge", argsHashFromText('{"amount":5}'), 1),
      reason: "prior attempt outcome unknown; retry refused",
      rule_id: "__indeterminate_retry",
    });
    const denied = await h.client("GET", `/v0/executions/${id}/steps/${retry.body.step_id}`);
    expect(denied.body).toMatchObject({
      status: "denied",
      error: { reason: "prior attempt outcome unknown; retry refused", rule_id: "__indeterminate_retry" },
    });
    // A safe_to_retry submission of the same call is not guarded.
    const safeSame = await h.submit(id, l2, { ...once, idempotency: "safe_to_retry" });
    expect(safeSame.body.decision).toBe("proceed");
  });

  test("the request's idempotency decides for an executing step", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 10 } });
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, {
      kind: "tool_call",
      target: "x",
      args: {},
      idempotency: "at_most_once",
    });
    h.advance(10_001);
    await h.kernel.tick();
    const l2 = leaseOf(await h.webhook(id, 2));
    const r = await h.submit(id, l2, {
      kind: "tool_call",
      target: "x",
      args: {},
      idempotency: "safe_to_retry",
    });
    expect(r.body).toEqual({ decision: "proceed", step_id: s.body.step_id });
  });

  test("a step of another execution is 404 on every step route", async () => {
    h = await Harness.start(store);
    const a = await h.started();
    const b = await h.started();
    const s = await h.submit(a.id, a.lease, { kind: "local", target: "x" });
    const get = await h.client("GET", `/v0/executions/${b.id}/steps/${s.body.step_id}`);
    expect(get.status).toBe(404);
    const done = await h.complete(b.id, b.lease, s.body.step_id, 1);
    expect(done.status).toBe(404);
    const stream = await h.agent("POST", `/v0/executions/${b.id}/steps/${s.body.step_id}/stream`, {
      body: { seq: 0, data: "x" },
    });
    expect(stream.status).toBe(404);
  });

  test("submitting from a dispatch attempt that was superseded consumes nothing", async () => {
    h = await Harness.start(store, { dispatch: { leaseTimeoutSeconds: 10 } });
    const { id, lease } = await h.started();
    h.advance(10_001);
    await h.kernel.tick();
    const l2 = leaseOf(await h.webhook(id, 2));
    const stale = await h.submit(id, lease, { kind: "local", target: "x" });
    expect(stale.status).toBe(409);
    const live = await h.submit(id, l2, { kind: "local", target: "x" });
    expect(live.body.step_id).toBe(computeStepId(id, "local", "x", argsHashFromText(undefined), 0));
    expect((await h.client("GET", `/v0/executions/${id}/steps`)).body).toHaveLength(1);
  });

  test("stream deltas: 204 while executing, 409 otherwise, 400 over 7000 bytes", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "gpt", args: {} });
    const path = `/v0/executions/${id}/steps/${s.body.step_id}/stream`;
    expect((await h.agent("POST", path, { body: { seq: 0, data: "Hel" }, lease })).status).toBe(204);
    expect((await h.agent("POST", path, { body: { seq: 1, data: "lo" } })).status).toBe(204);
    const big = await h.agent("POST", path, { body: { seq: 2, data: "é".repeat(3501) }, lease });
    expect(big.status).toBe(400);
    const wrongLease = await h.agent("POST", path, {
      body: { seq: 2, data: "x" },
      lease: { dispatchId: lease.dispatchId, attempt: 7 },
    });
    expect(wrongLease.body.code).toBe("lease_superseded");
    await h.complete(id, lease, s.body.step_id, { status: 200, headers: {}, body: "{}" });
    const after = await h.agent("POST", path, { body: { seq: 3, data: "x" }, lease });
    expect(after.status).toBe(409);
    expect(after.body.code).toBe("conflict");
  });

  test("llm_call usage is recorded on step.succeeded", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "llm_call", target: "gpt", args: { model: "gpt" } });
    const record = {
      status: 200,
      headers: { "content-type": "application/json" },
      body: '{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":812,"completion_tokens":96}}',
    };
    await h.complete(id, lease, s.body.step_id, record);
    const ev = (await h.events(id)).find((e) => e.type === "step.succeeded");
    expect(ev.payload.usage).toEqual({ input_tokens: 812, output_tokens: 96 });
    const s2 = await h.submit(id, lease, { kind: "llm_call", target: "gpt", args: { model: "x" } });
    await h.complete(id, lease, s2.body.step_id, { status: 200, headers: {}, body: "no usage" });
    expect(h.kernel.metrics.get("rebuno_llm_usage_missing_total")).toBe(1);
  });
});
