// Executions (docs/protocol.md §4.1–4.6, docs/protocol.md §1.7): create rules, idempotency, listing, sessions, previous,
// events paging, cancel.
import { afterEach, describe, expect, test } from "vitest";
import { Harness } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("executions ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("unknown agent → 404; input defaults to null; agent_version is echoed", async () => {
    h = await Harness.start(store);
    const r = await h.client("POST", "/v0/executions", { agent_id: "nobody" });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
    const e = await h.client("POST", "/v0/executions", { agent_id: "alpha", agent_version: "v3" });
    expect(e.body.input).toBeNull();
    expect(e.body.agent_version).toBe("v3");
  });

  test("idempotent create returns the same execution for the same agent only", async () => {
    h = await Harness.start(store);
    const a = await h.create("alpha", { idempotency_key: "req-1" });
    const again = await h.client("POST", "/v0/executions", {
      agent_id: "alpha",
      idempotency_key: "req-1",
      input: 2,
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(a);
    const other = await h.create("beta", { idempotency_key: "req-1" });
    expect(other.id).not.toBe(a.id);
    expect(a.idempotency_key).toBe("req-1");
  });

  test("list pages newest first with keyset cursors and filters", async () => {
    h = await Harness.start(store);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.create(i % 2 === 0 ? "alpha" : "beta")).id);
    const p1 = await h.client("GET", "/v0/executions?limit=2");
    expect(p1.body.executions.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    expect(p1.body.next_cursor).toBe(ids[3]);
    const p2 = await h.client("GET", `/v0/executions?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.executions.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const p3 = await h.client("GET", `/v0/executions?limit=2&cursor=${p2.body.next_cursor}`);
    expect(p3.body.executions.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(p3.body).not.toHaveProperty("next_cursor");
    const alpha = await h.client("GET", "/v0/executions?agent_id=alpha&status=running");
    expect(alpha.body.executions).toHaveLength(3);
    const zero = await h.client("GET", "/v0/executions?limit=0");
    expect(zero.body.executions).toHaveLength(5);
    expect((await h.client("GET", "/v0/executions?limit=x")).status).toBe(400);
    expect((await h.client("GET", "/v0/executions?cursor=nope")).status).toBe(400);
  });

  test("a session runs one execution at a time; the next pending one starts in creation order", async () => {
    h = await Harness.start(store);
    const first = await h.started("alpha", { session: "chat-1" });
    const second = await h.create("alpha", { session: "chat-1", input: "two" });
    const third = await h.create("alpha", { session: "chat-1", input: "three" });
    const free = await h.create("alpha", { session: "chat-2" });
    expect(second.status).toBe("pending");
    expect(third.status).toBe("pending");
    expect(free.status).toBe("running");
    expect(await h.eventTypes(second.id)).toEqual(["execution.created"]);
    const done = await h.agent("POST", `/v0/executions/${first.id}/complete`, {
      body: { output: { reply: 1 }, state: { messages: ["hi"] } },
      lease: first.lease,
    });
    expect(done.status).toBe(204);
    const s2 = await h.execution(second.id);
    expect(s2).toMatchObject({ status: "running", parent_execution_id: first.id, session: "chat-1" });
    expect((await h.execution(third.id)).status).toBe("pending");
    const started = (await h.events(second.id)).find((e) => e.type === "execution.started");
    expect(started.payload).toMatchObject({
      status: "running",
      parent_execution_id: first.id,
      session: "chat-1",
    });
    const prev = await h.client("GET", `/v0/executions/${second.id}/previous`);
    expect(prev.body).toEqual({ state: { messages: ["hi"] } });
    const none = await h.client("GET", `/v0/executions/${first.id}/previous`);
    expect(none.body).toEqual({ state: null });
  });

  test("previous falls back to the output; failed turns never become parents", async () => {
    h = await Harness.start(store);
    const a = await h.started("alpha", { session: "s" });
    await h.agent("POST", `/v0/executions/${a.id}/complete`, { body: { output: "out-a" }, lease: a.lease });
    const b = await h.started("alpha", { session: "s" });
    await h.agent("POST", `/v0/executions/${b.id}/fail`, {
      body: { error: "agent_error: boom" },
      lease: b.lease,
    });
    expect(await h.execution(b.id)).toMatchObject({ status: "failed", failure_reason: "agent_error: boom" });
    const c = await h.create("alpha", { session: "s" });
    expect(c.parent_execution_id).toBe(a.id);
    expect((await h.client("GET", `/v0/executions/${c.id}/previous`)).body).toEqual({ state: "out-a" });
  });

  test("parent_execution_id rules", async () => {
    h = await Harness.start(store);
    const a = await h.started();
    const running = await h.client("POST", "/v0/executions", {
      agent_id: "alpha",
      parent_execution_id: a.id,
    });
    expect(running.status).toBe(409);
    await h.agent("POST", `/v0/executions/${a.id}/complete`, { body: { output: 1 }, lease: a.lease });
    const otherAgent = await h.client("POST", "/v0/executions", {
      agent_id: "beta",
      parent_execution_id: a.id,
    });
    expect(otherAgent.status).toBe(400);
    const missing = await h.client("POST", "/v0/executions", {
      agent_id: "alpha",
      parent_execution_id: "01920000-0000-7000-8000-000000000009",
    });
    expect(missing.status).toBe(404);
    const ok = await h.create("alpha", { parent_execution_id: a.id, session: "branch" });
    expect(ok.parent_execution_id).toBe(a.id);
    const used = await h.client("POST", "/v0/executions", {
      agent_id: "alpha",
      parent_execution_id: a.id,
      session: "branch",
    });
    expect(used.status).toBe(409);
  });

  test("events page by after_seq and limit", async () => {
    h = await Harness.start(store);
    const { id } = await h.started();
    await h.kernel.tick();
    const page = await h.client("GET", `/v0/executions/${id}/events?after_seq=1&limit=2`);
    expect(page.body.map((e: { event_seq: number }) => e.event_seq)).toEqual([2, 3]);
    expect(page.body[0]).toEqual({
      execution_id: id,
      event_seq: 2,
      type: "execution.started",
      payload: { execution_id: id, status: "running" },
      occurred_at: "2026-07-07T12:00:00Z",
    });
    const junk = await h.client("GET", `/v0/executions/${id}/events?after_seq=zz`);
    expect(junk.body[0].event_seq).toBe(1);
    const empty = await h.client("GET", `/v0/executions/${id}/events?after_seq=99`);
    expect(empty.body).toEqual([]);
    const unknown = await h.client("GET", "/v0/executions/01920000-0000-7000-8000-000000000009/events");
    expect(unknown.status).toBe(404);
  });

  test("cancel: 204, pending approvals expire, executing steps cancel; a second cancel is 409 conflict", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const s = await h.submit(id, lease, { kind: "tool_call", target: "t", args: {} });
    const c = await h.client("POST", `/v0/executions/${id}/cancel`);
    expect(c.status).toBe(204);
    expect(await h.execution(id)).toMatchObject({ status: "cancelled", failure_reason: "client_cancelled" });
    const step = await h.client("GET", `/v0/executions/${id}/steps/${s.body.step_id}`);
    expect(step.body).toMatchObject({ status: "cancelled", error: { reason: "execution_cancelled" } });
    const types = await h.eventTypes(id);
    expect(types.slice(-2)).toEqual(["execution.cancelled", "step.cancelled"]);
    const again = await h.client("POST", `/v0/executions/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");
    // The cancelled agent's late writes see a terminal execution.
    const late = await h.submit(id, lease, { kind: "tool_call", target: "t2", args: {} });
    expect(late.body).toEqual({ decision: "execution_terminal" });
    const lateOutcome = await h.complete(id, lease, s.body.step_id, 1);
    expect(lateOutcome.body).toEqual({ decision: "execution_terminal" });
  });

  test("cancelling a pending session turn leaves the running one alone", async () => {
    h = await Harness.start(store);
    const a = await h.started("alpha", { session: "q" });
    const b = await h.create("alpha", { session: "q" });
    expect((await h.client("POST", `/v0/executions/${b.id}/cancel`)).status).toBe(204);
    expect((await h.execution(a.id)).status).toBe("running");
    expect(await h.eventTypes(b.id)).toEqual(["execution.created", "execution.cancelled"]);
  });

  test("deadlines cancel with deadline_exceeded", async () => {
    h = await Harness.start(store, { deadlineTimeoutMs: 60_000 });
    const e = await h.create();
    expect(e.deadline_at).toBe("2026-07-07T12:01:00Z");
    h.advance(60_000);
    await h.kernel.tick();
    expect(await h.execution(e.id)).toMatchObject({
      status: "cancelled",
      failure_reason: "deadline_exceeded",
    });
  });

  test("retention deletes old terminal executions", async () => {
    h = await Harness.start(store, { retentionMs: 3_600_000 });
    const { id, lease } = await h.started("alpha", { idempotency_key: "k" });
    await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: 1 }, lease });
    h.advance(3_600_001);
    await h.kernel.tick();
    expect((await h.client("GET", `/v0/executions/${id}`)).status).toBe(404);
    // The idempotency key is released.
    const fresh = await h.create("alpha", { idempotency_key: "k" });
    expect(fresh.id).not.toBe(id);
  });
});
