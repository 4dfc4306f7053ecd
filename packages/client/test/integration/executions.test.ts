// The client's execution surface against the real dev kernel, in process and over loopback:
// create (sessions, idempotency keys, explicit parents), reads, paging, event following, live
// stream deltas, cancel and steps. Agent-side work goes through the real signed agent transport.
import type { AgentTransport, DispatchLease } from "@rebuno/kernel-transport";
import { ConflictError, type Event, NotFoundError, ValidationError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { Client, StreamDelta } from "../../src/index.js";
import { type Env, MODES, startEnv } from "./setup.js";

const UNKNOWN_ID = "01890000-0000-7000-8000-000000000000";

describe.each(MODES)("client ↔ dev kernel: executions (%s)", (mode) => {
  let env: Env;
  let client: Client;
  let agent: AgentTransport;

  beforeEach(async () => {
    env = await startEnv(mode);
    client = env.client();
    agent = env.agent();
  });
  afterEach(async () => {
    await env.close();
  });

  /** Run one allowed step to completion under `lease` and return its step id. */
  async function recordStep(
    id: string,
    lease: DispatchLease,
    target: string,
    args: unknown,
    result: unknown,
  ) {
    const d = await agent.submitStep(id, lease, { kind: "tool_call", target, args });
    expect(d.decision).toBe("proceed");
    await agent.completeStep(id, lease, d.stepId!, { result });
    return d.stepId!;
  }

  test("create, get and the input round trip; unknown ids are NotFoundError", async () => {
    const input = { q: "hello", n: 1.5, nested: [1, { a: null }] };
    const e = await client.create("alpha", input);
    expect(e).toMatchObject({ agentId: "alpha", status: "running", input });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await client.get(e.id)).toEqual(e);
    // Input omitted → stored and served as JSON null.
    expect((await client.create("alpha")).input).toBeNull();
    await expect(client.get(UNKNOWN_ID)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.create("nobody", 1)).rejects.toBeInstanceOf(NotFoundError);
  });

  test("an idempotency key returns the first execution, per agent", async () => {
    const first = await client.create("alpha", { n: 1 }, { idempotencyKey: "order-42" });
    const again = await client.create("alpha", { n: 2 }, { idempotencyKey: "order-42" });
    expect(again.id).toBe(first.id);
    expect(again.input).toEqual({ n: 1 }); // other fields of the repeat are ignored
    expect(again.idempotencyKey).toBe("order-42");
    const otherAgent = await client.create("gated", { n: 1 }, { idempotencyKey: "order-42" });
    expect(otherAgent.id).not.toBe(first.id);
    // Exactly one execution of alpha carries the key.
    const all = await client.list({ agentId: "alpha" });
    expect(all.executions.filter((x) => x.idempotencyKey === "order-42")).toHaveLength(1);
  });

  test("a busy session queues the next turn; it starts on completion with the previous state", async () => {
    const t1 = await client.create("alpha", { turn: 1 }, { session: "chat-1" });
    const t2 = await client.create("alpha", { turn: 2 }, { session: "chat-1" });
    expect(t1.status).toBe("running");
    expect(t2).toMatchObject({ status: "pending", session: "chat-1" });
    expect(env.webhooks(t2.id)).toEqual([]); // pending executions get no dispatch
    // A different session runs concurrently.
    expect((await client.create("alpha", null, { session: "chat-2" })).status).toBe("running");

    const lease = await env.lease(t1.id);
    await agent.completeExecution(t1.id, lease, { output: { answer: 1 }, state: { memory: ["t1"] } });
    const done = await client.waitForTerminal(t1.id, { pollMs: 10, timeoutMs: 5000 });
    expect(done).toMatchObject({ status: "completed", output: { answer: 1 } });

    const started = await client.get(t2.id);
    expect(started).toMatchObject({ status: "running", parentExecutionId: t1.id });
    expect(await client.previous(t2.id)).toEqual({ memory: ["t1"] });
    expect(await client.previous(t1.id)).toBeNull();
    await env.lease(t2.id); // the started turn is dispatched
  });

  test("waitForTerminal answers on the kernel's terminal notice, not on the next poll", async () => {
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    // A 10-minute poll: only the stream's notice can end the wait within the test's time limit.
    const waiting = client.waitForTerminal(e.id, { pollMs: 600_000 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // let it subscribe and read "running"
    await agent.completeExecution(e.id, lease, { output: "done" });
    expect(await waiting).toMatchObject({ status: "completed", output: "done" });
  });

  test("an explicit parent continues a completed execution; other parents are refused", async () => {
    const root = await client.create("alpha", 1);
    const lease = await env.lease(root.id);
    await agent.completeExecution(root.id, lease, { output: "root-output" });
    await client.waitForTerminal(root.id, { pollMs: 10, timeoutMs: 5000 });

    const branch = await client.create("alpha", 2, { parentExecutionId: root.id });
    expect(branch).toMatchObject({ status: "running", parentExecutionId: root.id });
    // No state recorded → the parent's output is handed on.
    expect(await client.previous(branch.id)).toBe("root-output");

    const running = await client.create("alpha", 3);
    await expect(client.create("alpha", 4, { parentExecutionId: running.id })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(client.create("alpha", 4, { parentExecutionId: UNKNOWN_ID })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  test("list pages newest first with a cursor; listAll walks every page; filters apply", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.create("alpha", { i })).id);
    const gated = await client.create("gated", null);
    const newestFirst = [...ids].reverse();

    const page1 = await client.list({ agentId: "alpha", limit: 2 });
    expect(page1.executions.map((e) => e.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.nextCursor).toBe(newestFirst[1]);
    const page2 = await client.list({ agentId: "alpha", limit: 2, cursor: page1.nextCursor });
    expect(page2.executions.map((e) => e.id)).toEqual(newestFirst.slice(2, 4));
    const page3 = await client.list({ agentId: "alpha", limit: 2, cursor: page2.nextCursor });
    expect(page3.executions.map((e) => e.id)).toEqual(newestFirst.slice(4));
    expect(page3.nextCursor).toBeUndefined();

    const walked: string[] = [];
    for await (const e of client.listAll({ agentId: "alpha", limit: 2 })) walked.push(e.id);
    expect(walked).toEqual(newestFirst);

    const everything: string[] = [];
    for await (const e of client.listAll({ limit: 4 })) everything.push(e.id);
    expect(everything).toEqual([gated.id, ...newestFirst]);

    await client.cancel(ids[0]!);
    expect((await client.list({ status: "cancelled" })).executions.map((e) => e.id)).toEqual([ids[0]]);
    await expect(client.list({ cursor: "not-a-uuid" })).rejects.toBeInstanceOf(ValidationError);
  });

  test("events page by after_seq and followEvents yields the whole gap-free log until terminal", async () => {
    const e = await client.create("alpha", { go: true });
    const followed: Event[] = [];
    const following = (async () => {
      for await (const ev of client.followEvents(e.id, { pollMs: 10, limit: 3 })) followed.push(ev);
    })();

    const lease = await env.lease(e.id);
    const s1 = await recordStep(e.id, lease, "lookup", { k: 1 }, { v: 1 });
    const s2 = await recordStep(e.id, lease, "lookup", { k: 2 }, { v: 2 });
    await agent.completeExecution(e.id, lease, { output: "done" });
    await following;

    expect(followed.map((x) => x.eventSeq)).toEqual(followed.map((_, i) => i + 1));
    expect(followed.at(-1)).toMatchObject({ type: "execution.completed", payload: { output: "done" } });
    // The webhook ack is appended when the delivery returns, which may be after the agent's first
    // request: its position is not fixed, its presence (once) is.
    expect(followed.filter((x) => x.type === "dispatch.acked")).toHaveLength(1);
    expect(followed.map((x) => x.type).filter((t) => t !== "dispatch.acked")).toEqual([
      "execution.created",
      "execution.started",
      "dispatch.queued",
      "step.proposed",
      "step.allowed",
      "step.executing",
      "step.succeeded",
      "step.proposed",
      "step.allowed",
      "step.executing",
      "step.succeeded",
      "execution.completed",
    ]);
    const stepIds = followed.filter((x) => x.type === "step.succeeded").map((x) => x.payload.step_id);
    expect(stepIds).toEqual([s1, s2]);

    const all = await client.events(e.id);
    expect(all).toEqual(followed);
    const tail = await client.events(e.id, { afterSeq: 10, limit: 2 });
    expect(tail.map((x) => x.eventSeq)).toEqual([11, 12]);
    expect(await client.events(e.id, { afterSeq: 13 })).toEqual([]);
    await expect(client.events(UNKNOWN_ID)).rejects.toBeInstanceOf(NotFoundError);
  });

  /** Open the execution's stream and return its iterator once a warm-up delta came through. */
  async function attachedStream(id: string, lease: DispatchLease, stepId: string, signal?: AbortSignal) {
    const it = client.stream(id, { signal })[Symbol.asyncIterator]();
    // The stream has no replay buffer: publish warm-up deltas until the subscription sees one, so
    // the deltas under test are published after the subscriber is attached.
    const first = it.next();
    let settled = false;
    first.then(
      () => (settled = true),
      () => (settled = true),
    );
    let seq = -1;
    while (!settled) {
      await agent.publishStreamDelta(id, lease, stepId, { seq: ++seq, data: "warm-up" });
      await new Promise((r) => setTimeout(r, 10));
    }
    const warm = await first;
    expect(warm.done).toBe(false);
    expect(warm.value).toMatchObject({ stepId, data: "warm-up" });
    return { it, nextSeq: seq + 1 };
  }

  test("stream yields the deltas an agent step publishes, in order, while connected", async () => {
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    const d = await agent.submitStep(e.id, lease, { kind: "llm_call", target: "model-x", args: { p: "hi" } });
    expect(d.decision).toBe("proceed");
    const stepId = d.stepId!;
    const { it, nextSeq } = await attachedStream(e.id, lease, stepId);

    const parts = ["Hel", "lo, ", "wörld ✓"];
    for (const [i, data] of parts.entries()) {
      await agent.publishStreamDelta(e.id, lease, stepId, { seq: nextSeq + i, data });
    }
    const received: StreamDelta[] = [];
    // Warm-up deltas still in flight when the first one arrived come first; skip them.
    while (received.length < parts.length) {
      const n = await it.next();
      expect(n.done).toBe(false);
      if (n.value!.data !== "warm-up") received.push(n.value!);
    }
    expect(received.map((x) => [x.stepId, x.seq, x.data])).toEqual(
      parts.map((p, i) => [stepId, nextSeq + i, p]),
    );
    expect(received.every((x) => x.gap === undefined)).toBe(true);
    // Leaving the loop early closes the subscription.
    expect(await it.return()).toEqual({ done: true, value: undefined });

    // A step that is no longer executing refuses deltas (409 conflict, docs/protocol.md §4.10).
    await agent.completeStep(e.id, lease, stepId, { result: { body: "Hello, wörld ✓" } });
    await expect(
      agent.publishStreamDelta(e.id, lease, stepId, { seq: 99, data: "late" }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  test("aborting the stream's signal ends the iteration quietly", async () => {
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    const d = await agent.submitStep(e.id, lease, { kind: "local", target: "think" });
    const controller = new AbortController();
    const { it } = await attachedStream(e.id, lease, d.stepId!, controller.signal);
    controller.abort();
    // Bounded so a stream that ignores the abort fails here instead of hanging the suite.
    const next = await Promise.race([it.next(), new Promise((r) => setTimeout(() => r("still open"), 2000))]);
    expect(next).toEqual({ done: true, value: undefined });
  });

  test("cancel: 204, running steps cancelled, then 409 ConflictError for the terminal execution", async () => {
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    const done = await recordStep(e.id, lease, "first", { a: 1 }, "ok");
    const running = await agent.submitStep(e.id, lease, { kind: "tool_call", target: "slow", args: {} });
    expect(running.decision).toBe("proceed");

    await expect(client.cancel(e.id)).resolves.toBeUndefined();
    const cancelled = await client.get(e.id);
    expect(cancelled).toMatchObject({ status: "cancelled", failureReason: "client_cancelled" });
    const steps = await client.listSteps(e.id);
    expect(steps.find((s) => s.stepId === done)?.status).toBe("succeeded");
    expect(steps.find((s) => s.stepId === running.stepId)).toMatchObject({
      status: "cancelled",
      error: { reason: "execution_cancelled" },
    });
    // docs/protocol.md §4.6 order: the execution's transition, then the cancelled step, in one transaction.
    const tail = (await client.events(e.id)).slice(-2);
    expect(tail.map((x) => x.type)).toEqual(["execution.cancelled", "step.cancelled"]);
    expect(tail[0]!.payload).toMatchObject({ status: "cancelled", reason: "client_cancelled" });
    expect(tail[1]!.payload).toMatchObject({
      step_id: running.stepId,
      error: { reason: "execution_cancelled" },
    });

    const again = client.cancel(e.id);
    await expect(again).rejects.toBeInstanceOf(ConflictError);
    await expect(again).rejects.toMatchObject({ status: 409, code: "conflict" });
    await expect(client.cancel(UNKNOWN_ID)).rejects.toBeInstanceOf(NotFoundError);
  });

  test("steps: list (all and terminal only) and get one, with the recorded values", async () => {
    const e = await client.create("alpha", null);
    const lease = await env.lease(e.id);
    const args = { big: 12345678901234, f: 1.25, s: "é" };
    const ok = await recordStep(e.id, lease, "lookup", args, { rows: [1, 2, 3] });
    const failed = await agent.submitStep(e.id, lease, { kind: "tool_call", target: "flaky", args: null });
    await agent.failStep(e.id, lease, failed.stepId!, { error: { message: "boom" } });
    const open = await agent.submitStep(e.id, lease, { kind: "local", target: "think" });

    const steps = await client.listSteps(e.id);
    expect(steps.map((s) => s.stepId)).toEqual([ok, failed.stepId, open.stepId].sort());
    const terminal = await client.listSteps(e.id, { status: "terminal" });
    expect(terminal.map((s) => s.stepId).sort()).toEqual([ok, failed.stepId].sort());

    const one = await client.getStep(e.id, ok);
    expect(one).toMatchObject({
      stepId: ok,
      executionId: e.id,
      kind: "tool_call",
      target: "lookup",
      occurrence: 0,
      status: "succeeded",
      idempotency: "safe_to_retry",
      args,
      result: { rows: [1, 2, 3] },
    });
    expect(one.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await client.getStep(e.id, failed.stepId!)).toMatchObject({
      status: "failed",
      error: { message: "boom" },
    });
    await expect(client.getStep(e.id, "0".repeat(64))).rejects.toBeInstanceOf(NotFoundError);
  });
});
