// Mixed languages: a TypeScript parent (our SDK) whose tool calls subagent() on a Python child
// (official SDK), and a Python parent whose tool calls subagent() on a TypeScript child. Both
// directions must give the same outputs, settlement and session continuity.
import assert from "node:assert/strict";
import { allEvents, plain, waitForStatus } from "../lib/harness.mjs";

async function childrenOf(w, parentId, childAgent) {
  const out = [];
  for await (const ex of w.client.listAll({ agentId: childAgent })) {
    if (ex.spawnedBy?.executionId === parentId) out.push(ex);
  }
  return out.sort((x, y) => (x.id < y.id ? -1 : 1));
}

async function check(w, parentAgent, childAgent, failureStr) {
  // Without session, with a failing child.
  const a = await w.client.create(parentAgent, { topics: ["alpha", "beta"] });
  const ea = await waitForStatus(w.client, a.id, "completed", { timeoutMs: 45_000 });
  const outA = plain(ea.output);
  assert.deepEqual(outA.results, [
    { topic: "alpha", summary: "summary of alpha", n: 1, prev: null },
    { topic: "beta", summary: "summary of beta", n: 1, prev: null },
  ]);
  if (failureStr instanceof RegExp) assert.match(outA.failure_error?.str ?? "", failureStr);
  else assert.equal(outA.failure_error?.str, failureStr);
  const steps = await w.client.listSteps(ea.id);
  const kids = await childrenOf(w, ea.id, childAgent);
  assert.equal(kids.length, 3);
  for (const k of kids) {
    const ps = steps.find((s) => s.stepId === k.spawnedBy.stepId);
    assert.ok(ps, "spawned_by names a parent step");
    if (k.status === "completed") assert.deepEqual(plain(ps.result), plain(k.output));
    else {
      assert.equal(k.status, "failed");
      assert.deepEqual(plain(ps.error)?.reason, "subagent_failed");
      assert.equal(plain(ps.error)?.execution_id, k.id);
    }
  }
  const ev = await allEvents(w.client, ea.id);
  assert.ok(ev.some((e) => e.type === "execution.blocked" && e.payload.reason === "awaiting_steps"));
  assert.equal(ev.at(-1).type, "execution.completed");

  // With session: children continue one conversation.
  const b = await w.client.create(parentAgent, {
    topics: ["one", "two"],
    shared_session: true,
    with_failure: false,
  });
  const eb = await waitForStatus(w.client, b.id, "completed", { timeoutMs: 45_000 });
  assert.deepEqual(plain(eb.output).results, [
    { topic: "one", summary: "summary of one", n: 1, prev: null },
    { topic: "two", summary: "summary of two", n: 2, prev: { n: 1, last: "one" } },
  ]);
  const kb = await childrenOf(w, eb.id, childAgent);
  assert.equal(kb.length, 2);
  for (const k of kb) assert.equal(k.session, `${childAgent}:${eb.id}`);
  assert.equal(kb[1].parentExecutionId, kb[0].id);
  return { ea, kids };
}

export default [
  {
    name: "mixed: TypeScript parent (our SDK) → Python child (official SDK)",
    agents: [
      { id: "ts-parent", kind: "parent", lang: "ts", env: { CHILD_AGENT_ID: "py-kid" } },
      { id: "py-kid", kind: "child" },
    ],
    timeoutMs: 180_000,
    async run(w) {
      await Promise.all([w.startAgent("ts-parent"), w.startAgent("py-kid")]);
      // Our SDK's ToolError (reason "subagent_failed") names the child and carries its failure.
      const { kids } = await check(
        w,
        "ts-parent",
        "py-kid",
        /^delegate_fail: subagent [0-9a-f-]{36} failed: agent_error: RuntimeError: child failed on purpose \(doomed\)$/,
      );
      const failed = kids.find((k) => k.status === "failed");
      assert.equal(failed.failureReason, "agent_error: RuntimeError: child failed on purpose (doomed)");
    },
  },
  {
    name: "mixed: Python parent (official SDK) → TypeScript child (our SDK)",
    agents: [
      { id: "py-boss", kind: "parent", env: { CHILD_AGENT_ID: "ts-kid" } },
      { id: "ts-kid", kind: "child", lang: "ts" },
    ],
    timeoutMs: 180_000,
    async run(w) {
      await Promise.all([w.startAgent("py-boss"), w.startAgent("ts-kid")]);
      const { kids } = await check(w, "py-boss", "ts-kid", "delegate_fail: subagent_failed");
      const failed = kids.find((k) => k.status === "failed");
      assert.equal(failed.failureReason, "agent_error: Error: child failed on purpose (doomed)");
    },
  },
];
