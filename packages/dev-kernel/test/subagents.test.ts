// Subagents (docs/protocol.md §8): spawn checks, suspend, settlement of the parent step, resume,
// cascade cancel and the repair sweep.
import { afterEach, describe, expect, test } from "vitest";
import { Harness, type Lease } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("subagents ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  async function parentWithStep(): Promise<{ id: string; lease: Lease; stepId: string }> {
    const p = await h.started("alpha", { session: "parent-session" });
    const s = await h.submit(p.id, p.lease, { kind: "tool_call", target: "delegate", args: { topic: "x" } });
    expect(s.body.decision).toBe("proceed");
    return { ...p, stepId: s.body.step_id };
  }

  test("spawn checks, in order", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const spawned = (extra: Record<string, unknown>) =>
      h.client("POST", "/v0/executions", { agent_id: "beta", input: {}, ...extra });
    const unknown = await spawned({
      spawned_by: { execution_id: "01920000-0000-7000-8000-000000000009", step_id: "x" },
    });
    expect(unknown.status).toBe(404);
    const sameSession = await spawned({
      spawned_by: { execution_id: p.id, step_id: p.stepId },
      session: "parent-session",
    });
    expect(sameSession.status).toBe(400);
    expect(sameSession.body.message).toBe("validation error: a subagent cannot join its parent's session");
    const noStep = await spawned({ spawned_by: { execution_id: p.id, step_id: "f".repeat(64) } });
    expect(noStep.status).toBe(400);
    expect(noStep.body.message).toBe("validation error: spawned_by names no step of the parent execution");
    await h.complete(p.id, p.lease, p.stepId, "done");
    const settled = await spawned({ spawned_by: { execution_id: p.id, step_id: p.stepId } });
    expect(settled.status).toBe(409);
    expect(settled.body.message).toBe("conflict: the parent step is in status succeeded");
    await h.agent("POST", `/v0/executions/${p.id}/complete`, { body: { output: 1 }, lease: p.lease });
    const terminal = await spawned({ spawned_by: { execution_id: p.id, step_id: p.stepId } });
    expect(terminal.status).toBe(409);
    expect(terminal.body.message).toBe("conflict: the parent execution is terminal");
  });

  test("suspend, child completes, the parent step settles and the parent is redelivered", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const idle = await h.agent("POST", `/v0/executions/${p.id}/suspend`, { lease: p.lease });
    expect(idle.body).toEqual({ suspended: false });
    const child = await h.create("beta", {
      spawned_by: { execution_id: p.id, step_id: p.stepId },
      session: `beta:${p.id}`,
    });
    expect(child).toMatchObject({
      spawned_by: { execution_id: p.id, step_id: p.stepId },
      idempotency_key: p.stepId,
    });
    const created = (await h.events(child.id))[0];
    expect(created.payload.spawned_by).toEqual({ execution_id: p.id, step_id: p.stepId });
    // Idempotent: the same step gets the same child back.
    const twin = await h.create("beta", { spawned_by: { execution_id: p.id, step_id: p.stepId } });
    expect(twin.id).toBe(child.id);

    const s = await h.agent("POST", `/v0/executions/${p.id}/suspend`, { lease: p.lease });
    expect(s.body).toEqual({ suspended: true });
    expect(await h.execution(p.id)).toMatchObject({ status: "blocked" });
    const blocked = (await h.events(p.id)).at(-1);
    expect(blocked).toMatchObject({
      type: "execution.blocked",
      payload: { status: "blocked", reason: "awaiting_steps" },
    });

    const cw = await h.webhook(child.id);
    const done = await h.agent("POST", `/v0/executions/${child.id}/complete`, {
      body: { output: { found: 3 } },
      lease: { dispatchId: cw.dispatch_id, attempt: cw.dispatch_attempt },
      agentId: "beta",
    });
    expect(done.status).toBe(204);
    const step = await h.client("GET", `/v0/executions/${p.id}/steps/${p.stepId}`);
    expect(step.body).toMatchObject({ status: "succeeded", result: { found: 3 } });
    // The redelivery may already have been acknowledged by now (delivery races this read).
    expect((await h.eventTypes(p.id)).filter((t) => t !== "dispatch.acked").slice(-3)).toEqual([
      "step.succeeded",
      "execution.resumed",
      "dispatch.queued",
    ]);
    const w2 = await h.nextWebhook(p.id, 1);
    const replay = await h.submit(
      p.id,
      { dispatchId: w2.dispatch_id, attempt: w2.dispatch_attempt },
      {
        kind: "tool_call",
        target: "delegate",
        args: { topic: "x" },
      },
    );
    expect(replay.body).toEqual({ decision: "replay", step_id: p.stepId, result: { found: 3 } });
    // The SDK still completes the step: the stored outcome is replayed.
    const late = await h.complete(
      p.id,
      { dispatchId: w2.dispatch_id, attempt: w2.dispatch_attempt },
      p.stepId,
      "x",
    );
    expect(late.body).toEqual({ decision: "replay", result: { found: 3 } });
  });

  test("a failed child fails the parent step; a still-running parent is not redelivered", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const child = await h.create("beta", { spawned_by: { execution_id: p.id, step_id: p.stepId } });
    const cw = await h.webhook(child.id);
    await h.agent("POST", `/v0/executions/${child.id}/fail`, {
      body: { error: "tool_error: search: boom" },
      lease: { dispatchId: cw.dispatch_id, attempt: cw.dispatch_attempt },
      agentId: "beta",
    });
    const step = await h.client("GET", `/v0/executions/${p.id}/steps/${p.stepId}`);
    expect(step.body).toMatchObject({
      status: "failed",
      error: {
        execution_id: child.id,
        failure_reason: "tool_error: search: boom",
        reason: "subagent_failed",
      },
    });
    expect((await h.execution(p.id)).status).toBe("running");
    expect(await h.eventTypes(p.id)).not.toContain("execution.resumed");
    const s = await h.agent("POST", `/v0/executions/${p.id}/suspend`, { lease: p.lease });
    expect(s.body).toEqual({ suspended: false });
  });

  test("a cancelled child settles as subagent_cancelled", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const child = await h.create("beta", { spawned_by: { execution_id: p.id, step_id: p.stepId } });
    await h.client("POST", `/v0/executions/${child.id}/cancel`);
    const step = await h.client("GET", `/v0/executions/${p.id}/steps/${p.stepId}`);
    expect(step.body.error).toEqual({
      execution_id: child.id,
      failure_reason: "client_cancelled",
      reason: "subagent_cancelled",
    });
  });

  test("a terminal parent cancels its children (and grandchildren) with parent_agent_terminal", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const child = await h.create("beta", { spawned_by: { execution_id: p.id, step_id: p.stepId } });
    const cw = await h.webhook(child.id);
    const cl = { dispatchId: cw.dispatch_id, attempt: cw.dispatch_attempt };
    const cs = await h.submit(child.id, cl, { kind: "tool_call", target: "deeper", args: {} }, "beta");
    const grand = await h.create("alpha", {
      spawned_by: { execution_id: child.id, step_id: cs.body.step_id },
    });
    await h.client("POST", `/v0/executions/${p.id}/cancel`);
    expect(await h.execution(child.id)).toMatchObject({
      status: "cancelled",
      failure_reason: "parent_agent_terminal",
    });
    expect(await h.execution(grand.id)).toMatchObject({
      status: "cancelled",
      failure_reason: "parent_agent_terminal",
    });
    const childCancelled = (await h.events(child.id)).find((e) => e.type === "execution.cancelled");
    expect(childCancelled.payload.reason).toBe("parent_agent_terminal");
  });

  test("the repair sweep settles a child whose settlement was interrupted", async () => {
    h = await Harness.start(store);
    const p = await parentWithStep();
    const child = await h.create("beta", { spawned_by: { execution_id: p.id, step_id: p.stepId } });
    await h.agent("POST", `/v0/executions/${p.id}/suspend`, { lease: p.lease });
    // Simulate a crash between the child's terminal transition and the parent's settlement: the
    // child row is terminal but the parent step still executes (the kernel never commits this
    // state itself — both happen in one transaction).
    const row = h.kernel.store.getExecution(child.id)!;
    h.kernel.store.updateExecution({ ...row, status: "completed", outputJson: '{"late":true}' });
    await h.kernel.tick();
    const step = await h.client("GET", `/v0/executions/${p.id}/steps/${p.stepId}`);
    expect(step.body).toMatchObject({ status: "succeeded", result: { late: true } });
    expect((await h.execution(p.id)).status).toBe("running");
  });
});
