// Resources and checkpoints (docs/protocol.md §1.10, §4.17).
import { afterEach, describe, expect, test } from "vitest";
import { Harness, type Lease } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("resources ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  const register = (id: string, lease: Lease, body: Record<string, unknown>) =>
    h.agent("POST", `/v0/executions/${id}/resources`, { body, lease });

  test("register is idempotent; mismatches are 409; binding rules", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    const r = await h.agent("POST", `/v0/executions/${id}/resources`, {
      raw: '{"key":"ws","driver_id":"sandbox","configuration":{"image":"py","cpu":1.0}}',
      lease,
    });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"configuration":{"image":"py","cpu":1.0}');
    expect(r.body).toEqual({
      key: "ws",
      driver_id: "sandbox",
      configuration: { image: "py", cpu: 1.0 },
      coverage_reuse: false,
      every_steps: 0,
      on_completion: false,
      generation: 0,
      count: 0,
      registered_seq: expect.any(Number),
      covered: false,
    });
    const registered = (await h.events(id)).find((e) => e.type === "resource.registered");
    expect(r.body.registered_seq).toBe(registered.event_seq);
    // Same configuration with other key order / spacing: identical registration.
    const same = await h.agent("POST", `/v0/executions/${id}/resources`, {
      raw: '{"configuration": {"cpu":1.0, "image":"py"}, "driver_id":"sandbox", "key":"ws"}',
      lease,
    });
    expect(same.status).toBe(200);
    const diff = await register(id, lease, {
      key: "ws",
      driver_id: "sandbox",
      configuration: { image: "rb" },
    });
    expect(diff.status).toBe(409);
    expect((await register(id, lease, { key: "bad key!", driver_id: "d" })).status).toBe(400);

    const bind = (key: string, binding: unknown) =>
      h.agent("POST", `/v0/executions/${id}/resources/${key}/binding`, { body: { binding }, lease });
    expect((await bind("ws", { vm: "i-1" })).status).toBe(204);
    expect((await bind("ws", { vm: "i-1" })).status).toBe(204);
    expect((await bind("ws", { vm: "i-2" })).status).toBe(409);
    expect((await bind("nope", { vm: "i-1" })).status).toBe(404);
    expect((await bind("ws", null)).status).toBe(400);
    const types = await h.eventTypes(id);
    expect(types.filter((t) => t.startsWith("resource."))).toEqual(["resource.registered", "resource.bound"]);
  });

  test("steps declare resources: unknown key → 400; generations advance; captures checkpoint", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    await register(id, lease, { key: "ws", driver_id: "sandbox", every_steps: 2 });
    const unknown = await h.submit(id, lease, {
      kind: "tool_call",
      target: "write",
      args: {},
      resources: ["db"],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('validation error: unknown resource "db"');
    expect((await h.client("GET", `/v0/executions/${id}/steps`)).body).toEqual([]);

    const s1 = await h.submit(id, lease, {
      kind: "tool_call",
      target: "write",
      args: { n: 1 },
      resources: ["ws"],
    });
    expect(s1.body).toEqual({
      decision: "proceed",
      step_id: expect.any(String),
      resources: [{ key: "ws", generation: 1, due: false }],
    });
    const executing = (await h.events(id)).find((e) => e.type === "step.executing");
    expect(executing.payload).toMatchObject({ resources: ["ws"], generations: { ws: 1 } });
    await h.agent("POST", `/v0/executions/${id}/steps/${s1.body.step_id}/complete`, {
      body: { result: "ok", captures: [{ key: "ws", generation: 1, checkpoint_ref: "snap-1" }] },
      lease,
    });
    const s2 = await h.submit(id, lease, {
      kind: "tool_call",
      target: "write",
      args: { n: 2 },
      resources: ["ws"],
    });
    expect(s2.body.resources).toEqual([{ key: "ws", generation: 2, due: true }]);
    // A capture naming an old generation is refused; an llm_call never declares resources.
    await h.agent("POST", `/v0/executions/${id}/steps/${s2.body.step_id}/complete`, {
      body: {
        result: "ok",
        captures: [
          { key: "ws", generation: 1, checkpoint_ref: "snap-old" },
          { key: "zz", generation: 1, checkpoint_ref: "x" },
        ],
        capture_failures: [{ key: "ws", generation: 2, error: "snapshot timed out" }],
      },
      lease,
    });
    const llm = await h.submit(id, lease, { kind: "llm_call", target: "m", args: {}, resources: ["ws"] });
    expect(llm.body.resources).toEqual([]);
    const failures = (await h.events(id))
      .filter((e) => e.type === "resource.checkpoint_failed")
      .map((e) => e.payload);
    expect(failures).toEqual([
      { key: "ws", generation: 1, error: "duplicate_capture" },
      { key: "zz", generation: 1, error: "unknown_resource" },
      { key: "ws", generation: 2, error: "snapshot timed out" },
    ]);
    const fp = await h.client("GET", `/v0/executions/${id}/fork-points`);
    const registered = (await h.events(id)).find((e) => e.type === "resource.registered");
    expect(fp.body.resources).toEqual({ ws: registered.event_seq });
    expect(fp.body.checkpoints).toEqual([
      {
        key: "ws",
        generation: 1,
        checkpoint_ref: "snap-1",
        covered_seq: expect.any(Number),
        invalidated_seq: expect.any(Number),
      },
    ]);
    expect(fp.body.latest_seq).toBe((await h.events(id)).length);
  });

  test("captures on their own: stale generation and writers_active are refused", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    await register(id, lease, { key: "ws", driver_id: "sandbox", every_steps: 1 });
    const s = await h.submit(id, lease, { kind: "tool_call", target: "w", args: {}, resources: ["ws"] });
    const cp = (captures: unknown[]) =>
      h.agent("POST", `/v0/executions/${id}/resources/checkpoints`, { body: { captures }, lease });
    expect((await cp([{ key: "ws", generation: 1, checkpoint_ref: "a" }])).status).toBe(204);
    expect((await cp([{ key: "ws", generation: 0, checkpoint_ref: "b" }])).status).toBe(204);
    await h.complete(id, lease, s.body.step_id, 1);
    expect((await cp([{ key: "ws", generation: 1, checkpoint_ref: "" }])).status).toBe(204);
    expect((await cp([{ key: "ws", generation: 1, checkpoint_ref: "c" }])).status).toBe(204);
    const outcomes = (await h.events(id))
      .filter((e) => e.type.startsWith("resource.checkpoint"))
      .map((e) => [e.type, e.payload.error ?? e.payload.checkpoint_ref]);
    expect(outcomes).toEqual([
      ["resource.checkpoint_failed", "writers_active"],
      ["resource.checkpoint_failed", "stale_generation"],
      ["resource.checkpoint_failed", "missing_checkpoint_ref"],
      ["resource.checkpointed", "c"],
    ]);
  });

  test("a session turn inherits the parent's binding on registration", async () => {
    h = await Harness.start(store);
    const a = await h.started("alpha", { session: "s" });
    await register(a.id, a.lease, { key: "ws", driver_id: "d", configuration: { x: 1 } });
    await h.agent("POST", `/v0/executions/${a.id}/resources/ws/binding`, {
      body: { binding: "vm-1" },
      lease: a.lease,
    });
    await h.agent("POST", `/v0/executions/${a.id}/complete`, { body: { output: 1 }, lease: a.lease });
    const b = await h.started("alpha", { session: "s" });
    const r = await register(b.id, b.lease, { key: "ws", driver_id: "d", configuration: { x: 1 } });
    expect(r.body.binding).toBe("vm-1");
    expect((await h.eventTypes(b.id)).filter((t) => t.startsWith("resource."))).toEqual([
      "resource.registered",
      "resource.bound",
    ]);
  });
});
