/** resource() and the resource lock, through the kernel-free ToolTestContext. */
import { Blocked, type ResourceDriver, resource, subagent, Toolbox, tool } from "@rebuno/sdk";
import { ToolTestContext } from "@rebuno/testing";
import { describe, expect, it } from "vitest";

interface Box {
  id: string;
  files: string[];
}

function driver(): ResourceDriver<Box, { id: string }> & { created: number; opened: number } {
  const d = {
    driverId: "box/v1",
    created: 0,
    opened: 0,
    create() {
      d.created++;
      const box = { id: `box-${d.created}`, files: [] };
      return { handle: box, binding: { id: box.id } };
    },
    open(binding: { id: string }) {
      d.opened++;
      return { id: binding.id, files: [] };
    },
    checkpoint(box: Box) {
      return `snap:${box.id}:${box.files.length}`;
    },
  };
  return d;
}

describe("resource()", () => {
  it("creates, binds, takes a baseline, and caches the handle within the dispatch", async () => {
    const t = new ToolTestContext();
    const d = driver();
    const [a, b] = await t.run(async () => [
      await resource("box", { driver: d }),
      await resource("box", { driver: d }),
    ]);
    expect(a).toBe(b);
    expect(d.created).toBe(1);
    expect(t.port.checkpoints).toEqual([
      { captures: [{ key: "box", generation: 0, checkpointRef: "snap:box-1:0" }] },
    ]);
  });

  it("reopens a bound resource in a later dispatch", async () => {
    const d = driver();
    const second = new ToolTestContext({ executionId: "exec-test" });
    // The binding an earlier dispatch stored.
    await second.port.bindResource("exec-test", second.context.lease, "box", { id: "box-1" });
    const handle = await second.run(() => resource("box", { driver: d }));
    expect(handle.id).toBe("box-1");
    expect(d.opened).toBe(1);
  });

  it("validates the policy (G18 default needs checkpoint())", async () => {
    const t = new ToolTestContext();
    const { checkpoint: _omit, ...noCheckpoint } = driver();
    await expect(t.run(() => resource("box", { driver: noCheckpoint }))).rejects.toThrow(
      /checkpoint policy requires driver.checkpoint\(\)/,
    );
    await expect(
      t.run(() => resource("box", { driver: noCheckpoint, checkpoints: false })),
    ).resolves.toBeDefined();
    await expect(
      t.run(() => resource("x", { driver: driver(), checkpoints: { everySteps: 0 } })),
    ).rejects.toThrow("everySteps must be a positive integer");
  });

  it("serializes calls while a resource exists but hands the lock back during a subagent wait", async () => {
    const order: string[] = [];
    class Work extends Toolbox {
      @tool async delegate() {
        order.push("delegate:start");
        return subagent("helper", {}, { client: clientRef.current });
      }
      @tool({ input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } })
      async local(args: { n: number }) {
        order.push(`local:${args.n}:start`);
        await new Promise((r) => setTimeout(r, 10));
        order.push(`local:${args.n}:end`);
        return args.n;
      }
    }
    const clientRef: { current: ToolTestContext["client"] | undefined } = { current: undefined };
    const t = new ToolTestContext();
    clientRef.current = t.client;
    const work = new Work();
    const results = await t.run(async () => {
      await resource("box", { driver: driver() });
      return Promise.allSettled([work.delegate(), work.local({ n: 1 }), work.local({ n: 2 })]);
    });
    // No interleaving of the two local bodies (the lock), and no deadlock (suspend happened).
    expect(order).toEqual(["delegate:start", "local:1:start", "local:1:end", "local:2:start", "local:2:end"]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    expect(Blocked.isInstance((results[0] as PromiseRejectedResult).reason)).toBe(true);
    expect(t.suspendCalls).toBe(1);
  });
});
