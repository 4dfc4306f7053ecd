// subagent() from the official Python SDK, without and with session=: the parent tool creates a
// child over the bearer API (spawned_by, no idempotency_key sent), suspends, the child's outcome
// settles the parent step, and the re-dispatched parent replays it. A failing child becomes a
// ToolError. Session turns carry Result(state) and previous().
import assert from "node:assert/strict";
import { allEvents, plain, waitForStatus } from "../lib/harness.mjs";

async function childrenOf(w, parentId, childAgent) {
  const out = [];
  for await (const ex of w.client.listAll({ agentId: childAgent })) {
    if (ex.spawnedBy?.executionId === parentId) out.push(ex);
  }
  return out.sort((x, y) => (x.id < y.id ? -1 : 1));
}

export default [
  {
    name: "python subagents: subagent() without session, failing child → ToolError",
    agents: [
      { id: "py-parent", kind: "parent", env: { CHILD_AGENT_ID: "py-child" } },
      { id: "py-child", kind: "child" },
    ],
    timeoutMs: 120_000,
    async run(w) {
      await Promise.all([w.startAgent("py-parent"), w.startAgent("py-child")]);
      const created = await w.client.create("py-parent", { topics: ["alpha", "beta"] });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 45_000 });
      const out = plain(ex.output);
      assert.deepEqual(out.results, [
        { topic: "alpha", summary: "summary of alpha", n: 1, prev: null },
        { topic: "beta", summary: "summary of beta", n: 1, prev: null },
      ]);
      assert.equal(out.failure_error?.str, "delegate_fail: subagent_failed");

      const steps = await w.client.listSteps(ex.id);
      const children = await childrenOf(w, ex.id, "py-child");
      assert.equal(children.length, 3);
      for (const child of children) {
        const parentStep = steps.find((s) => s.stepId === child.spawnedBy.stepId);
        assert.ok(parentStep, `child ${child.id} names a step of the parent`);
        assert.equal(
          child.idempotencyKey,
          child.spawnedBy.stepId,
          "kernel defaults idempotency_key to spawned_by.step_id",
        );
        assert.equal(child.session ?? "", "", "no session given");
        if (child.status === "completed") {
          assert.equal(parentStep.status, "succeeded");
          assert.deepEqual(plain(parentStep.result), plain(child.output));
        } else {
          assert.equal(child.status, "failed");
          assert.equal(child.failureReason, "agent_error: RuntimeError: child failed on purpose (doomed)");
          assert.equal(parentStep.target, "delegate_fail");
          assert.equal(parentStep.status, "failed");
          assert.deepEqual(plain(parentStep.error), {
            execution_id: child.id,
            failure_reason: child.failureReason,
            reason: "subagent_failed",
          });
        }
      }
      const events = await allEvents(w.client, ex.id);
      // Normally the parent suspends once per child (the child cannot finish before POST /suspend);
      // if a child did settle first, suspend answers {suspended:false} and the SDK reads the step.
      const blocked = events.filter((e) => e.type === "execution.blocked");
      assert.ok(blocked.length >= 1 && blocked.length <= 3, `blocked ${blocked.length} times`);
      for (const e of blocked) assert.equal(e.payload.reason, "awaiting_steps");
      assert.equal(events.filter((e) => e.type === "execution.resumed").length, blocked.length);
      // One delivery per run: the first run + one per resume.
      assert.equal(events.filter((e) => e.type === "dispatch.acked").length, 1 + blocked.length);
      assert.equal(events.at(-1).type, "execution.completed");
      const childEvents = await allEvents(w.client, children[0].id);
      assert.deepEqual(childEvents[0].payload.spawned_by, {
        execution_id: ex.id,
        step_id: children[0].spawnedBy.stepId,
      });

      const py = await w.pyClient(["inspect", ex.id, ...children.map((c) => c.id)]);
      for (const c of children) assert.equal(py[c.id].execution.spawned_by.execution_id, ex.id);
    },
  },
  {
    name: "python subagents: subagent(session=) children continue one conversation",
    agents: [
      { id: "py-parent-s", kind: "parent", env: { CHILD_AGENT_ID: "py-child-s" } },
      { id: "py-child-s", kind: "child" },
    ],
    timeoutMs: 120_000,
    async run(w) {
      await Promise.all([w.startAgent("py-parent-s"), w.startAgent("py-child-s")]);
      const created = await w.client.create("py-parent-s", {
        topics: ["one", "two", "three"],
        shared_session: true,
        with_failure: false,
      });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 45_000 });
      const out = plain(ex.output);
      assert.deepEqual(out.results, [
        { topic: "one", summary: "summary of one", n: 1, prev: null },
        { topic: "two", summary: "summary of two", n: 2, prev: { n: 1, last: "one" } },
        { topic: "three", summary: "summary of three", n: 3, prev: { n: 2, last: "two" } },
      ]);
      const children = await childrenOf(w, ex.id, "py-child-s");
      assert.equal(children.length, 3);
      const session = `py-child-s:${ex.id}`;
      for (const c of children) assert.equal(c.session, session);
      assert.equal(children[0].parentExecutionId ?? null, null);
      assert.equal(children[1].parentExecutionId, children[0].id);
      assert.equal(children[2].parentExecutionId, children[1].id);
      const listed = [];
      for await (const e of w.client.listAll({ session })) listed.push(e.id);
      assert.deepEqual(listed.sort(), children.map((c) => c.id).sort());
    },
  },
  {
    name: "python subagents: parallel subagent() calls suspend together and both settle",
    agents: [
      { id: "py-parent-p", kind: "parent", env: { CHILD_AGENT_ID: "py-child-p" } },
      { id: "py-child-p", kind: "child" },
    ],
    timeoutMs: 120_000,
    async run(w) {
      await Promise.all([w.startAgent("py-parent-p"), w.startAgent("py-child-p")]);
      const created = await w.client.create("py-parent-p", {
        topics: ["x", "y", "z"],
        parallel: true,
        with_failure: false,
      });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 60_000 });
      const out = plain(ex.output);
      assert.deepEqual(
        out.results.map((r) => r.topic),
        ["x", "y", "z"],
      );
      const children = await childrenOf(w, ex.id, "py-child-p");
      assert.equal(children.length, 3, "one child per delegate step, none duplicated by re-dispatch");
      const steps = await w.client.listSteps(ex.id);
      assert.equal(steps.length, 3);
      for (const s of steps) {
        assert.equal(s.status, "succeeded");
        const child = children.find((c) => c.spawnedBy.stepId === s.stepId);
        assert.deepEqual(plain(s.result), plain(child.output));
      }
      const events = await allEvents(w.client, ex.id);
      const blocked = events.filter((e) => e.type === "execution.blocked").length;
      const resumed = events.filter((e) => e.type === "execution.resumed").length;
      assert.ok(blocked >= 1 && blocked <= 3, `blocked ${blocked} times`);
      assert.equal(resumed, blocked);
      assert.equal(events.filter((e) => e.type === "dispatch.acked").length, 1 + resumed);
      // Resume only when nothing waits: at each execution.resumed every earlier-settled step is done
      // and no step is still executing with a live child.
      for (const r of events.filter((e) => e.type === "execution.resumed")) {
        const settledBefore = events.filter(
          (e) => e.eventSeq < r.eventSeq && e.type === "step.succeeded",
        ).length;
        const startedBefore = events.filter(
          (e) => e.eventSeq < r.eventSeq && e.type === "step.executing",
        ).length;
        assert.equal(settledBefore, startedBefore, `resumed at seq ${r.eventSeq} while a step still waited`);
      }
    },
  },
  {
    name: "python sessions: Result(state) + previous(), pending queueing, parent_execution_id branch, output fallback",
    agents: [{ id: "py-session", kind: "session" }],
    timeoutMs: 120_000,
    async run(w) {
      await w.startAgent("py-session");
      const session = `chat-${w.runId}`;
      const t1 = await w.client.create("py-session", { text: "hi" }, { session });
      const t2 = await w.client.create("py-session", { text: "how are you" }, { session });
      const t3 = await w.client.create("py-session", { text: "bye" }, { session });
      assert.equal(t1.status, "running");
      assert.equal(t2.status, "pending", "the session is occupied by t1");
      assert.equal(t3.status, "pending");
      const d3 = await waitForStatus(w.client, t3.id, "completed", { timeoutMs: 30_000 });
      const d1 = await w.client.get(t1.id);
      const d2 = await w.client.get(t2.id);
      assert.deepEqual(plain(d1.output), { turn: 1, prev: null, history: ["hi"] });
      assert.deepEqual(plain(d2.output), {
        turn: 2,
        prev: { history: ["hi"] },
        history: ["hi", "how are you"],
      });
      assert.deepEqual(plain(d3.output), {
        turn: 3,
        prev: { history: ["hi", "how are you"] },
        history: ["hi", "how are you", "bye"],
      });
      assert.equal(d2.parentExecutionId, t1.id);
      assert.equal(d3.parentExecutionId, t2.id);
      const started2 = (await allEvents(w.client, t2.id)).find((e) => e.type === "execution.started");
      assert.equal(started2.payload.parent_execution_id, t1.id);
      assert.ok(new Date(d1.updatedAt) <= new Date(d2.updatedAt), "turns ran one after another");

      // Branch from turn 1 without a session.
      const br = await w.client.create("py-session", { text: "branch" }, { parentExecutionId: t1.id });
      const dbr = await waitForStatus(w.client, br.id, "completed");
      assert.deepEqual(plain(dbr.output), { turn: 2, prev: { history: ["hi"] }, history: ["hi", "branch"] });

      // A turn that completes without state: the next turn's previous() is its output.
      const s2 = `plain-${w.runId}`;
      const p1 = await w.client.create("py-session", { text: "p1", plain: true }, { session: s2 });
      const p2 = await w.client.create("py-session", { text: "p2" }, { session: s2 });
      await waitForStatus(w.client, p2.id, "completed");
      const dp1 = await w.client.get(p1.id);
      const dp2 = await w.client.get(p2.id);
      assert.deepEqual(plain(dp2.output).prev, plain(dp1.output));
      assert.deepEqual(plain(dp2.output).history, ["p1", "p2"]);
    },
  },
];
