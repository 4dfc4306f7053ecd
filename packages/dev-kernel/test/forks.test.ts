// Forks (docs/protocol.md §1.9, §4.17): copied outcomes replay, later calls run live, restoration.
import { argsHashFromText, computeStepId } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_AGENTS, Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("forks ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("a fork replays steps settled by at_seq and runs the rest live", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started("alpha", { input: { q: "fork me" } });
    const a = await h.submit(id, lease, { kind: "tool_call", target: "a", args: { n: 1.5 } });
    await h.complete(id, lease, a.body.step_id, { got: "a" });
    const boundary = (await h.events(id)).length;
    const b = await h.submit(id, lease, { kind: "tool_call", target: "b", args: {} });
    await h.complete(id, lease, b.body.step_id, { got: "b" });
    await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: "done" }, lease });

    const f = await h.client("POST", `/v0/executions/${id}/fork`, { at_seq: boundary });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({
      agent_id: "alpha",
      input: { q: "fork me" },
      status: "running",
      forked_from: id,
      fork_seq: boundary,
    });
    const forkId = f.body.id as string;
    const types = await h.eventTypes(forkId);
    expect(types.slice(0, 2)).toEqual(["execution.created", "execution.forked"]);
    expect(types).toContain("step.succeeded");
    expect(types.indexOf("step.succeeded")).toBeLessThan(types.indexOf("execution.started"));
    const forked = (await h.events(forkId))[1];
    expect(forked.payload).toMatchObject({
      source_execution_id: id,
      fork_seq: boundary,
      policy_override: false,
    });

    const w = await h.webhook(forkId);
    const l = leaseOf(w);
    const ra = await h.submit(forkId, l, { kind: "tool_call", target: "a", args: { n: 1.5 } });
    expect(ra.body).toEqual({
      decision: "replay",
      step_id: computeStepId(forkId, "tool_call", "a", argsHashFromText('{"n":1.5}'), 0),
      result: { got: "a" },
    });
    const rb = await h.submit(forkId, l, { kind: "tool_call", target: "b", args: {} });
    expect(rb.body.decision).toBe("proceed");
  });

  test("fork validation: at_seq range, used session, policy override needs policies:write", async () => {
    h = await Harness.start(store, { devMode: false, bootstrapToken: "root", agents: DEFAULT_AGENTS });
    const created = await h.client("POST", "/v0/executions", { agent_id: "alpha", session: "taken" }, "root");
    const id = created.body.id as string;
    expect((await h.client("POST", `/v0/executions/${id}/fork`, { at_seq: 999 }, "root")).status).toBe(400);
    expect(
      (await h.client("POST", `/v0/executions/${id}/fork`, { at_seq: 1, session: "taken" }, "root")).status,
    ).toBe(409);
    const key = await h.client("POST", "/v0/api-keys", { name: "w", scopes: ["executions:write"] }, "root");
    const token = key.body.token as string;
    expect((await h.client("POST", `/v0/executions/${id}/fork`, { at_seq: 1 }, token)).status).toBe(201);
    const override = await h.client(
      "POST",
      `/v0/executions/${id}/fork`,
      { at_seq: 1, policy_bundle: "default_action: deny\n" },
      token,
    );
    expect(override.status).toBe(403);
    const bad = await h.client(
      "POST",
      `/v0/executions/${id}/fork`,
      { at_seq: 1, policy_bundle: "rules: 1" },
      "root",
    );
    expect(bad.status).toBe(400);
    const ok = await h.client(
      "POST",
      `/v0/executions/${id}/fork`,
      { at_seq: 1, policy_bundle: "default_action: deny\n" },
      "root",
    );
    expect(ok.status).toBe(201);
    const missing = await h.client(
      "POST",
      "/v0/executions/01920000-0000-7000-8000-000000000009/fork",
      { at_seq: 0 },
      "root",
    );
    expect(missing.status).toBe(404);
  });

  test("restoration names the checkpoint covering the boundary", async () => {
    h = await Harness.start(store);
    const { id, lease } = await h.started();
    await h.agent("POST", `/v0/executions/${id}/resources`, {
      body: { key: "ws", driver_id: "d", every_steps: 1 },
      lease,
    });
    const s = await h.submit(id, lease, { kind: "tool_call", target: "w", args: {}, resources: ["ws"] });
    await h.agent("POST", `/v0/executions/${id}/steps/${s.body.step_id}/complete`, {
      body: { result: 1, captures: [{ key: "ws", generation: 1, checkpoint_ref: "snap-1" }] },
      lease,
    });
    const at = (await h.events(id)).length;
    const f = await h.client("POST", `/v0/executions/${id}/fork`, { at_seq: at });
    expect(f.body.restoration).toEqual({
      ws: { checkpoint_ref: "snap-1", checkpoint_seq: expect.any(Number), covered: true },
    });
    const init = (await h.events(f.body.id)).find((e) => e.type === "resource.initialized");
    expect(init.payload).toEqual({ key: "ws", generation: 1, checkpoint_ref: "snap-1" });
  });
});
