// The official Python bearer Client (rebuno==0.29.2) as a client of our kernel: create (plain, with a
// session, with on_behalf_of) and every read its pydantic models parse.
import assert from "node:assert/strict";
import { plain, waitForStatus } from "../lib/harness.mjs";

export default [
  {
    name: "python client: create + reads parse; create with session",
    agents: [{ id: "py-client-session", kind: "session" }],
    timeoutMs: 40_000,
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
    timeoutMs: 40_000,
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
];
