// `maxRetainedExecutions`: beyond the cap, the sweep deletes the oldest terminal executions; live
// ones are never deleted; a session goes only once all its turns are terminal.
import { afterEach, describe, expect, test } from "vitest";
import { Harness } from "./harness.js";
import { stores } from "./stores.js";

describe.each(stores)("retention cap ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  const finish = async (extra: Record<string, unknown> = {}) => {
    const { id, lease } = await h.started("alpha", extra);
    await h.agent("POST", `/v0/executions/${id}/complete`, { body: { output: id }, lease });
    h.advance(1000); // distinct update times: "oldest" is well defined
    return id;
  };
  const exists = async (id: string) => (await h.client("GET", `/v0/executions/${id}`)).status === 200;

  test("the oldest terminal executions beyond the cap go; running ones stay", async () => {
    // No background sweep (its real 1 s timer could delete some before the count below): only
    // tick() sweeps.
    h = await Harness.start(store, { maxRetainedExecutions: 3, retentionMs: 0, sweepIntervalMs: 3_600_000 });
    const done = [];
    for (let i = 0; i < 4; i++) done.push(await finish());
    const running = (await h.started("alpha")).id;
    expect(h.kernel.store.countExecutions()).toBe(5);
    await h.kernel.tick();
    expect(h.kernel.store.countExecutions()).toBe(3);
    expect(await Promise.all(done.map(exists))).toEqual([false, false, true, true]);
    expect(await exists(running)).toBe(true);
  });

  test("live executions are never deleted, even beyond the cap", async () => {
    h = await Harness.start(store, { maxRetainedExecutions: 1, retentionMs: 0 });
    const live = [(await h.started("alpha")).id, (await h.started("alpha")).id];
    await h.kernel.tick();
    expect(await Promise.all(live.map(exists))).toEqual([true, true]);
  });

  test("a session's turn goes only once every turn of the session is terminal", async () => {
    h = await Harness.start(store, { maxRetainedExecutions: 1, retentionMs: 0 });
    const first = await finish({ session: "chat-1" });
    const second = await h.started("alpha", { session: "chat-1" });
    await h.kernel.tick();
    expect(await exists(first)).toBe(true); // its session still has a live turn
    await h.agent("POST", `/v0/executions/${second.id}/complete`, {
      body: { output: 2 },
      lease: second.lease,
    });
    await h.kernel.tick();
    expect(await exists(first)).toBe(false);
    expect(await exists(second.id)).toBe(true);
  });

  test("rejects a cap that is not a positive number", async () => {
    await expect(Harness.start(store, { maxRetainedExecutions: 0 })).rejects.toThrow(
      "maxRetainedExecutions must be a positive number",
    );
    h = await Harness.start(store);
  });
});
