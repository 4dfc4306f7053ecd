// Rate limits seen from the official Python SDK: a refused call raises RateLimited out of the @tool
// (only PolicyError becomes a string), failing the execution with the bare token; a rule with
// max_wait parks the execution once (decision `blocked`, no approval) and it is re-dispatched later.
import assert from "node:assert/strict";
import { allEvents, plain, waitForStatus } from "../lib/harness.mjs";

export default [
  {
    name: "python rate limits: refused → RateLimited → failure_reason rate_limit_exceeded",
    agents: [
      {
        id: "py-rl-refuse",
        kind: "ratelimit",
        policy: `default_action: allow
rules:
  - id: ping-limit
    priority: 10
    when: { target: ping }
    then:
      decision: allow
      rate_limit: { max_calls: 2, window: 1h }
`,
      },
    ],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-rl-refuse");
      const created = await w.client.create("py-rl-refuse", { count: 3 });
      const ex = await waitForStatus(w.client, created.id, "failed");
      assert.equal(ex.failureReason, "rate_limit_exceeded");
      const steps = await w.client.listSteps(ex.id);
      assert.deepEqual(
        steps.map((s) => [s.target, s.status, plain(s.result)]).sort(),
        [
          ["ping", "succeeded", "pong 0"],
          ["ping", "succeeded", "pong 1"],
        ],
        "the refused call records no step",
      );
      const events = await allEvents(w.client, ex.id);
      assert.equal(events.filter((e) => e.type === "step.rate_limited").length, 1);
      const failed = events.find((e) => e.type === "execution.failed");
      assert.equal(failed.payload.reason, "rate_limit_exceeded");
    },
  },
  {
    name: "python rate limits: max_wait parks once (blocked decision), re-dispatch completes",
    agents: [
      {
        id: "py-rl-park",
        kind: "ratelimit",
        policy: `default_action: allow
rules:
  - id: ping-park
    priority: 20
    when: { target: ping }
    then:
      decision: allow
      rate_limit: { max_calls: 1, window: 3s, max_wait: 10s }
`,
      },
    ],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-rl-park");
      const started = Date.now();
      const created = await w.client.create("py-rl-park", { count: 2 });
      const ex = await waitForStatus(w.client, created.id, "completed", { timeoutMs: 60_000 });
      const elapsed = Date.now() - started;
      const out = plain(ex.output);
      assert.deepEqual(out.pongs, ["pong 0", "pong 1"]);
      assert.deepEqual(out.calls, { ping: 2 }, "ping 0 replayed on the second dispatch, ping 1 ran once");
      assert.ok(elapsed >= 2_000, `parked for the bucket to refill (${elapsed} ms)`);
      const events = await allEvents(w.client, ex.id);
      assert.equal(events.filter((e) => e.type === "step.rate_limited").length, 1);
      assert.equal(events.filter((e) => e.type === "execution.blocked").length, 0, "a park does not block");
      const queued = events.filter((e) => e.type === "dispatch.queued");
      assert.equal(queued.length, 2, "the park replaces the dispatch with a deferred one");
      assert.notEqual(queued[0].payload.dispatch_id, queued[1].payload.dispatch_id);
      assert.equal(out.lease.dispatch_id, queued[1].payload.dispatch_id);
      // The handler of the first dispatch ended quietly on `blocked` (no fail was sent).
      assert.doesNotMatch(w.agentLog("py-rl-park"), /\/fail "HTTP|process error|unhandled error/);
    },
  },
];
