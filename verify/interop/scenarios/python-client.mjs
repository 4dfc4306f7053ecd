// The official Python bearer Client (rebuno==0.29.2) as a client of our kernel: create (plain, with a
// session, with on_behalf_of) and every read its pydantic models parse.
import assert from "node:assert/strict";
import { allEvents, plain, waitFor, waitForStatus } from "../lib/harness.mjs";

export default [
  {
    name: "python client: create + reads parse; create with session",
    agents: [{ id: "py-client-session", kind: "session" }],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-client-session");
      const session = `pyclient-${w.runId}`;
      const created = await w.pyClient([
        "create",
        "py-client-session",
        JSON.stringify({ text: "hello" }),
        "--session",
        session,
      ]);
      assert.equal(created.agent_id, "py-client-session");
      assert.equal(created.session, session);
      assert.deepEqual(created.input, { text: "hello" });
      assert.ok(["running", "pending"].includes(created.status));
      const done = await waitForStatus(w.client, created.id, "completed");
      assert.deepEqual(plain(done.output), { turn: 1, prev: null, history: ["hello"] });
      const py = await w.pyClient(["inspect", created.id]);
      assert.equal(py[created.id].execution.status, "completed");
      assert.equal(py[created.id].execution.session, session);
      assert.equal(py[created.id].steps.length, 1);
      assert.equal(py[created.id].event_types.at(-1), "execution.completed");
    },
  },
  {
    name: "python client: create with on_behalf_of (Client.create(..., on_behalf_of=)) is accepted",
    agents: [{ id: "py-client-obo", kind: "session" }],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-client-obo");
      const created = await w.pyClient([
        "create",
        "py-client-obo",
        JSON.stringify({ text: "for alice" }),
        "--on-behalf-of",
        "user:alice",
      ]);
      assert.equal(created.agent_id, "py-client-obo");
      await waitForStatus(w.client, created.id, "completed");
    },
  },
  {
    name: "python client: cancel mid-tool; the official agent stops quietly on execution_terminal",
    agents: [{ id: "py-cancel", kind: "slow" }],
    timeoutMs: 90_000,
    async run(w) {
      await w.startAgent("py-cancel");
      const created = await w.client.create("py-cancel", { seconds: 12 });
      await waitFor(
        async () => (await w.client.listSteps(created.id)).some((s) => s.status === "executing"),
        { timeoutMs: 30_000, what: "slow_job to be executing" },
      );
      assert.deepEqual(await w.pyClient(["cancel", created.id]), { cancelled: created.id });
      const ex = await w.client.get(created.id);
      assert.equal(ex.status, "cancelled");
      assert.equal(ex.failureReason, "client_cancelled");
      const [job] = await w.client.listSteps(created.id);
      assert.equal(job.status, "cancelled");
      assert.deepEqual(plain(job.error), { reason: "execution_cancelled" });
      // Cancelling again: the official Client maps 409 conflict to ConflictError.
      await assert.rejects(w.pyClient(["cancel", created.id]), /ConflictError: \[conflict\]/);

      // The tool body finishes after the cancel; the SDK's late writes must end the handler quietly:
      // complete step → 200 {"decision":"execution_terminal"}, complete execution → 409
      // execution_terminal → Terminated (swallowed). A `conflict` code there would make the SDK log
      // "process error"/"unhandled error" and try to fail the execution.
      const log = await waitFor(
        () => {
          const text = w.agentLog("py-cancel");
          return (
            /HTTP Request: POST \S+\/v0\/executions\/[0-9a-f-]+\/complete "HTTP\/1\.1 \d+/.test(text) && text
          );
        },
        { timeoutMs: 45_000, what: "the agent's complete-execution call" },
      );
      assert.match(
        log,
        /\/steps\/[0-9a-f]{64}\/complete "HTTP\/1\.1 200/,
        "late step completion answered 200",
      );
      assert.match(
        log,
        /\/v0\/executions\/[0-9a-f-]+\/complete "HTTP\/1\.1 409/,
        "complete on a terminal execution → 409",
      );
      assert.doesNotMatch(log, /process error|unhandled error|\/fail "HTTP/);
      const after = await w.client.get(created.id);
      assert.equal(after.status, "cancelled");
      const events = await allEvents(w.client, created.id);
      assert.equal(events.filter((e) => e.type === "execution.cancelled").length, 1);
      assert.equal(events.find((e) => e.type === "execution.cancelled").payload.reason, "client_cancelled");
      assert.ok(events.some((e) => e.type === "step.cancelled"));
    },
  },
];
