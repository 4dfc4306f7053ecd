/** subagent() against the real dev kernel: suspension, siblings, sessions, failing children. */
import {
  Agent,
  type AgentOptions,
  execution,
  previous,
  Result,
  subagent,
  Toolbox,
  ToolError,
  tool,
} from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
});

const lookups: string[] = [];

// #region desk
class Desk extends Toolbox {
  @tool({
    input: {
      type: "object",
      properties: { topic: { type: "string" }, session: { type: "string" }, delayMs: { type: "number" } },
      required: ["topic"],
    },
  })
  async research(args: { topic: string; session?: string; delayMs?: number }) {
    const input = { topic: args.topic, delayMs: args.delayMs ?? 0 };
    return subagent("researcher", input, args.session === undefined ? {} : { session: args.session });
  }

  @tool({ input: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } })
  async lookup(args: { id: string }) {
    lookups.push(args.id);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return `record ${args.id}`;
  }
}

const desk = new Desk();
// #endregion

// #region researcher
const researcher = (options: AgentOptions) =>
  new Agent<{ topic: string; delayMs: number }, unknown>(
    "researcher",
    async (input) => {
      // A slow child makes the parent suspend; a fast one may settle before everyone waits.
      await new Promise((resolve) => setTimeout(resolve, input.delayMs));
      if (input.topic === "explode") throw new Error("no sources");
      const prior = await previous<{ notes: string[] }>();
      const notes = [...(prior?.notes ?? []), input.topic];
      return new Result({ output: { topic: input.topic, notes }, state: { notes } });
    },
    options,
  );
// #endregion

describe("subagent()", () => {
  it("runs children with concurrent sibling calls; one suspend, then replay on the rerun", async () => {
    // The children answer only once the test has seen the parent blocked, so the parent suspends
    // exactly once whatever the scheduling (their 300 ms sleep could end first on a loaded machine).
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gatedResearcher = (options: AgentOptions) =>
      new Agent<{ topic: string }, unknown>(
        "researcher",
        async (input) => {
          await released;
          return { topic: input.topic, notes: [input.topic] };
        },
        options,
      );
    const runs: number[] = [];
    const parent = (options: AgentOptions) =>
      new Agent(
        "parent",
        async () => {
          runs.push(execution().dispatchAttempt);
          // #region siblings
          const [a, b, c] = await Promise.all([
            desk.research({ topic: "alpha", delayMs: 300 }),
            desk.research({ topic: "beta", delayMs: 300 }),
            desk.lookup({ id: "7" }),
          ]);
          return { a, b, c };
          // #endregion
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [parent, gatedResearcher] });
    lookups.length = 0;
    const created = await env.client.create("parent", {});
    try {
      await env.waitForStatus(created.id, "blocked");
    } finally {
      release(); // also on failure, so teardown's drain does not wait on parked children
    }
    const { execution: done, steps, events } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({
      a: { topic: "alpha", notes: ["alpha"] },
      b: { topic: "beta", notes: ["beta"] },
      c: "record 7",
    });
    // The handler ran twice (suspended, then resumed); the sibling body ran once and replayed.
    expect(runs).toHaveLength(2);
    expect(lookups).toEqual(["7"]);
    expect(events.filter((e) => e.type === "execution.blocked")).toHaveLength(1);
    const children = (await env.client.list({ agentId: "researcher" })).executions;
    expect(children).toHaveLength(2);
    const research = steps.filter((s) => s.target === "research");
    for (const child of children) {
      expect(research.map((s) => s.stepId)).toContain(child.spawnedBy?.stepId);
      expect(child.idempotencyKey).toBe(`${done.id}:${child.spawnedBy?.stepId}`);
    }
  });

  it("continues a child session: each child in the session reads the previous one's state", async () => {
    const parent = (options: AgentOptions) =>
      new Agent(
        "parent",
        async () => {
          // #region sessions
          const session = `researcher:${execution().id}`;
          const first = await desk.research({ topic: "one", session });
          const second = await desk.research({ topic: "two", session });
          return { first, second };
          // #endregion
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [parent, researcher] });
    const { execution: done } = await env.run("parent", {});
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({
      first: { topic: "one", notes: ["one"] },
      second: { topic: "two", notes: ["one", "two"] },
    });
  });

  it("raises ToolError in the parent when the child fails", async () => {
    const parent = (options: AgentOptions) =>
      new Agent(
        "parent",
        async () => {
          try {
            return await desk.research({ topic: "explode" });
          } catch (err) {
            if (ToolError.isInstance(err)) {
              const { message, reason, toolId, childExecutionId, childError } = err;
              return { message, reason, toolId, childExecutionId, childError };
            }
            throw err;
          }
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [parent, researcher] });
    const { execution: done, steps } = await env.run("parent", {});
    expect(done.status).toBe("completed");
    const [child] = (await env.client.list({ agentId: "researcher" })).executions;
    expect(child?.status).toBe("failed");
    expect(done.output).toEqual({
      message: `research: subagent ${child?.id} failed: agent_error: Error: no sources`,
      reason: "subagent_failed",
      toolId: "research",
      childExecutionId: child?.id,
      childError: "agent_error: Error: no sources",
    });
    expect(steps.map((s) => [s.target, s.status])).toEqual([["research", "failed"]]);
  });

  it("refuses a child session equal to the parent's before creating anything", async () => {
    const parent = (options: AgentOptions) =>
      new Agent("parent", () => desk.research({ topic: "x", session: execution().session ?? "" }), options);
    env = await TestEnvironment.create({ agents: [parent, researcher] });
    const { execution: done } = await env.run("parent", {}, { session: "shared" });
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(
      /^tool_error: research: subagent\('researcher'\): the child's session must differ/,
    );
    expect((await env.client.list({ agentId: "researcher" })).executions).toHaveLength(0);
  });
});
