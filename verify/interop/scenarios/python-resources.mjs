// Resources with the official Python SDK: resource() registers and binds a sandbox, every affecting
// @tool(resources=["sandbox"]) call is captured (checkpoint ref sent with the step outcome), and a
// fork at a checkpoint restores the sandbox from it (driver.create(checkpoint_ref)) while the copied
// step replays and the later one runs live.
import assert from "node:assert/strict";
import { allEvents, plain, waitForStatus } from "../lib/harness.mjs";

export default [
  {
    name: "python resources: resource() + @tool(resources=) checkpoints; fork restores from a checkpoint",
    agents: [{ id: "py-resources", kind: "resources" }],
    timeoutMs: 120_000,
    async run(w) {
      await w.startAgent("py-resources");
      const created = await w.client.create("py-resources", { files: ["a", "b"] });
      const ex = await waitForStatus(w.client, created.id, "completed");
      const out = plain(ex.output);
      assert.deepEqual(out.wrote, ["wrote a", "wrote b"]);
      assert.deepEqual(out.files, ["a", "b"]);
      assert.equal(out.restored_from, null);
      assert.deepEqual(out.calls, { write_file: 2 });

      const events = await allEvents(w.client, ex.id);
      const registered = events.filter((e) => e.type === "resource.registered");
      assert.equal(registered.length, 1);
      assert.equal(registered[0].payload.key, "sandbox");
      assert.equal(registered[0].payload.driver_id, "interop.sandbox");
      assert.equal(events.filter((e) => e.type === "resource.bound").length, 1);
      assert.deepEqual(
        events.filter((e) => e.type === "resource.checkpoint_failed").map((e) => e.payload),
        [],
      );
      const refs = events
        .filter((e) => e.type === "resource.checkpointed")
        .map((e) => e.payload.checkpoint_ref);
      assert.deepEqual(refs, ["ckpt:", "ckpt:a", "ckpt:a,b"], "baseline + one capture per affecting step");
      assert.doesNotMatch(
        w.agentLog("py-resources"),
        /checkpoint of resource|checkpoint on completion failed/,
      );

      const points = await w.client.forkPoints(ex.id);
      assert.ok(points.resources && "sandbox" in points.resources, JSON.stringify(points));
      assert.deepEqual(
        points.checkpoints.map((c) => c.checkpointRef ?? c.checkpoint_ref),
        ["ckpt:", "ckpt:a", "ckpt:a,b"],
      );

      // Fork right after the capture that followed write_file("a").
      const atSeq = events.find(
        (e) => e.type === "resource.checkpointed" && e.payload.checkpoint_ref === "ckpt:a",
      ).eventSeq;
      const fork = await w.client.fork(ex.id, { atSeq });
      assert.equal(fork.forkedFrom, ex.id);
      assert.equal(fork.forkSeq, atSeq);
      const done = await waitForStatus(w.client, fork.id, "completed");
      const fout = plain(done.output);
      assert.equal(fout.restored_from, "ckpt:a", "the SDK created the sandbox from the covering checkpoint");
      assert.deepEqual(fout.files, ["a", "b"]);
      assert.deepEqual(fout.wrote, ["wrote a", "wrote b"]);
      assert.deepEqual(
        fout.calls,
        { write_file: 1 },
        "write_file(a) replayed from the copy, write_file(b) ran live",
      );
      const restoration = plain(done.restoration);
      assert.equal(restoration?.sandbox?.checkpoint_ref ?? restoration?.sandbox?.checkpointRef, "ckpt:a");
    },
  },
];
