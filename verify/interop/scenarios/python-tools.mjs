// The official Python SDK's tool surface against our kernel: every @tool form, sync bodies,
// wrap_tool (transform_args/to_result), step(), a policy-denied tool, a failing tool, and step
// identity computed by the kernel from Python-formatted JSON bodies.
import assert from "node:assert/strict";
import { allEvents, eventTypes, inOrder, plain, waitForStatus } from "../lib/harness.mjs";

const POLICY = `default_action: allow
rules:
  - id: no-transfers
    priority: 10
    when: { target: transfer }
    then: { decision: deny, reason: no transfers today }
`;

export default [
  {
    name: "python tools: @tool forms, wrap_tool, step(), denied string, failing tool, step identity",
    agents: [{ id: "py-tools", kind: "tools", policy: POLICY }],
    timeoutMs: 120_000,
    async run(w, { protocol }) {
      await w.startAgent("py-tools");
      const created = await w.client.create("py-tools", { text: "hello", n: 5 });
      assert.equal(created.agentId, "py-tools");
      assert.ok(["running", "pending"].includes(created.status), `fresh status ${created.status}`);
      const ex = await waitForStatus(w.client, created.id, "completed");
      const out = plain(ex.output);

      assert.deepEqual(
        {
          add: out.add,
          add_default: out.add_default,
          add_again: out.add_again,
          shout: out.shout,
          user: out.user,
          note: out.note,
          archive: out.archive,
          kv: out.kv,
          pick: out.pick,
          scale: out.scale,
          gathered: out.gathered,
        },
        {
          add: 8,
          add_default: 7,
          add_again: 8,
          shout: "HELLO",
          user: { id: "u-1", name: "Ada", verbose: false },
          note: { sent: true, to: "ops@example.com", chars: 13 },
          archive: null,
          kv: { value: 42, seen: ["key"] },
          pick: 7,
          scale: 3.0,
          gathered: [2, 2, 2],
        },
      );
      // The SDK formats the refusal with str(PolicyError) = "[policy_denied] <reason> (HTTP 403)".
      assert.equal(out.denied, "transfer not allowed. reason: [policy_denied] no transfers today (HTTP 403)");
      assert.equal(out.explode.str, "explode: kaput");
      assert.equal(out.explode.tool_id, "explode");
      assert.match(out.explode.step_id, /^[0-9a-f]{64}$/);
      assert.deepEqual(out.calls, {
        add: 6,
        shout: 1,
        lookup_user: 1,
        send_note: 1,
        archive: 1,
        kv_get: 1,
        explode: 1,
      });
      assert.equal(out.lease.attempt, 1);

      const steps = await w.client.listSteps(ex.id);
      const byTarget = (t) => steps.filter((s) => s.target === t);
      assert.equal(steps.length, 15, `steps: ${steps.map((s) => s.target).join(",")}`);
      // args exactly as the SDK sends them (json.dumps: ", " separators, \u escapes, 100.0 floats).
      // The kernel hashes the literal numbers (Go UseNumber): 100.0 and 100 are different args.
      const expect = [
        ["add", "tool_call", "safe_to_retry", '{"a": 5, "b": 3}', 0, "succeeded", 8],
        ["add", "tool_call", "safe_to_retry", '{"a": 5, "b": 3}', 1, "succeeded", 8],
        ["add", "tool_call", "safe_to_retry", '{"a": 5, "b": 2}', 0, "succeeded", 7],
        ["add", "tool_call", "safe_to_retry", '{"a": 1, "b": 1}', 0, "succeeded", 2],
        ["add", "tool_call", "safe_to_retry", '{"a": 1, "b": 1}', 1, "succeeded", 2],
        ["add", "tool_call", "safe_to_retry", '{"a": 1, "b": 1}', 2, "succeeded", 2],
        ["shout", "tool_call", "safe_to_retry", '{"text": "hello"}', 0, "succeeded", "HELLO"],
        [
          "lookup_user",
          "tool_call",
          "safe_to_retry",
          '{"user_id": "u-1", "verbose": false}',
          0,
          "succeeded",
          { id: "u-1", name: "Ada", verbose: false },
        ],
        [
          "send_note",
          "tool_call",
          "at_most_once",
          '{"to": "ops@example.com", "body": "h\\u00e9llo w\\u00f6rld \\u2713"}',
          0,
          "succeeded",
          { sent: true, to: "ops@example.com", chars: 13 },
        ],
        ["archive", "tool_call", "at_most_once", '{"item": "box-7"}', 0, "succeeded", null],
        [
          "kv_get",
          "tool_call",
          "safe_to_retry",
          '{"key": "k1"}',
          0,
          "succeeded",
          { value: 42, seen: ["key"] },
        ],
        ["pick", "local", "safe_to_retry", "{}", 0, "succeeded", 7],
        ["scale", "local", "safe_to_retry", '{"x": 1.5, "factor": 2}', 0, "succeeded", 3],
        ["transfer", "tool_call", "safe_to_retry", '{"amount": 100.0}', 0, "denied", undefined],
        ["explode", "tool_call", "safe_to_retry", '{"msg": "kaput"}', 0, "failed", undefined],
      ];
      assert.notEqual(protocol.argsHashFromText('{"amount": 100.0}'), protocol.argsHash({ amount: 100 }));
      for (const [target, kind, idem, text, occ, status, result] of expect) {
        const hash = protocol.argsHashFromText(text);
        const args = JSON.parse(text);
        const s = steps.find((x) => x.target === target && x.occurrence === occ && x.argsHash === hash);
        assert.ok(
          s,
          `no ${target} step with args ${text} occurrence ${occ} (hash ${hash}); have ${JSON.stringify(byTarget(target).map((x) => [x.argsHash, x.occurrence]))}`,
        );
        assert.equal(s.kind, kind, `${target} kind`);
        assert.equal(s.status, status, `${target} status`);
        assert.equal(s.idempotency ?? "safe_to_retry", idem, `${target} idempotency`);
        assert.deepEqual(plain(s.args), args, `${target} args`);
        assert.equal(s.stepId, protocol.computeStepId(ex.id, kind, target, hash, occ), `${target} step id`);
        if (status === "succeeded") assert.deepEqual(plain(s.result), result, `${target} result`);
      }
      assert.deepEqual(plain(byTarget("transfer")[0].error), {
        reason: "no transfers today",
        rule_id: "no-transfers",
      });
      assert.deepEqual(plain(byTarget("explode")[0].error), { message: "kaput" });
      assert.equal(out.explode.step_id, byTarget("explode")[0].stepId);

      const events = await allEvents(w.client, ex.id);
      assert.deepEqual(
        events.map((e) => e.eventSeq),
        events.map((_, i) => i + 1),
        "event_seq gap-free from 1",
      );
      const types = eventTypes(events);
      assert.ok(
        inOrder(types, ["execution.created", "execution.started", "dispatch.queued", "dispatch.acked"]),
        types.join(","),
      );
      assert.equal(types.at(-1), "execution.completed");
      assert.equal(types.filter((t) => t === "step.succeeded").length, 13);
      assert.equal(types.filter((t) => t === "step.denied").length, 1);
      assert.equal(types.filter((t) => t === "step.failed").length, 1);
      const denied = events.find((e) => e.type === "step.denied");
      assert.equal(denied.payload.rule_id, "no-transfers");
      assert.equal(denied.payload.target, "transfer");
      assert.equal(denied.payload.step_type, "tool_call");
      const transferSteps = events
        .filter((e) => e.payload?.step_id === byTarget("transfer")[0].stepId)
        .map((e) => e.type);
      assert.deepEqual(transferSteps, ["step.proposed", "step.denied"]);

      // The official Python Client must parse everything our kernel returns for this execution.
      const py = await w.pyClient(["inspect", ex.id]);
      assert.equal(py[ex.id].execution.status, "completed");
      assert.equal(py[ex.id].steps.length, 15);
      assert.equal(py[ex.id].terminal_steps, 15);
      assert.deepEqual(py[ex.id].event_types, types);
    },
  },
  {
    name: "python agent metadata: PUT /v0/agents/{id}/metadata is accepted (2xx)",
    agents: [
      { id: "py-meta", kind: "tools", policy: POLICY, args: ["--description", "interop tools agent"] },
    ],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-meta");
      const created = await w.client.create("py-meta", { text: "x", n: 1 });
      await waitForStatus(w.client, created.id, "completed");
      const log = w.agentLog("py-meta");
      const puts = [
        ...log.matchAll(/HTTP Request: PUT \S+\/v0\/agents\/py-meta\/metadata "HTTP\/1\.1 (\d+)/g),
      ];
      assert.ok(puts.length >= 1, "the SDK sent PUT /v0/agents/py-meta/metadata");
      for (const p of puts) assert.match(p[1], /^2\d\d$/, `metadata PUT answered ${p[1]}`);
      // agent.py _publish_metadata logs this (with the kernel's error) when the PUT is refused.
      assert.doesNotMatch(log, /publishing agent metadata failed/);
    },
  },
];
