/**
 * Tool failures against the real dev kernel: a recorded failure replays byte-identical to the
 * first run (body errors, nested tools, hand-thrown and MCP `isError` failures), ToolError
 * carries a structured reason for each way a call fails, denials of direct calls are typed, and
 * a suspension (approval, subagent) cannot be swallowed by a user `catch`.
 */
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  Agent,
  type AgentOptions,
  execution,
  subagent,
  Toolbox,
  ToolError,
  tool,
  wrapMcpTools,
} from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

let env: TestEnvironment | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await env?.teardown();
  env = undefined;
});

const POLICY = `
default_action: allow
rules:
  - id: gate
    when: { target: gate }
    then:
      decision: require_approval
      approval_config: { message: let it through }
  - id: frozen
    when: { target: wire }
    then: { decision: deny, reason: wires are frozen }
`;

class Ops extends Toolbox {
  @tool async disk(): Promise<never> {
    throw new Error("disk full");
  }

  @tool async inner(): Promise<never> {
    throw new Error("disk full");
  }

  @tool async outer() {
    return this.inner();
  }

  /** Raises a ToolError about itself, the way the MCP `isError` path does. */
  @tool("self_tagged") async selfTagged(): Promise<never> {
    throw new ToolError("disk full", { toolId: "self_tagged" });
  }

  @tool async gate() {
    return "opened";
  }

  @tool({ input: z.object({ cents: z.number() }) })
  async wire(args: { cents: number }) {
    return { sent: args.cents };
  }
}
const ops = new Ops();

/** Everything a caller can observe of an error, as plain data. */
function observe(error: unknown) {
  if (!ToolError.isInstance(error)) return { notToolError: String(error) };
  const { name, message, code, reason, toolId, stepId, failure, ruleId, policyReason } = error;
  const { childExecutionId, childError } = error;
  return {
    name,
    message,
    code,
    reason,
    toolId,
    stepId,
    failure,
    ruleId,
    policyReason,
    childExecutionId,
    childError,
    text: String(error),
    own: JSON.stringify(error),
  };
}

async function approveAll(created: { id: string }): Promise<void> {
  await env!.waitForStatus(created.id, "blocked");
  for (const approval of await env!.client.listApprovals({ status: "pending" })) {
    await env!.client.grantApproval(approval.id, { decidedBy: "ops@example.com", rationale: "ok" });
  }
}

async function mcpTools() {
  const server = new McpServer({ name: "disks", version: "1.0.0" });
  server.registerTool("fill", { inputSchema: { gb: z.number() } }, async ({ gb }) => ({
    content: [{ type: "text", text: `disk full after ${gb} GB` }],
    isError: true,
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new McpClient({ name: "agent", version: "1.0.0" });
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return wrapMcpTools(client, { prefix: "mcp" });
}

describe("a recorded failure replays exactly as it first ran (#4)", () => {
  it("throws the same error on the first run and on the rerun that replays it", async () => {
    const [fill] = await mcpTools();
    const seen: Array<Record<string, ReturnType<typeof observe>>> = [];
    const probe = (options: AgentOptions) =>
      new Agent(
        "probe",
        async () => {
          const run: Record<string, ReturnType<typeof observe>> = {};
          for (const [label, call] of [
            ["body", () => ops.disk()],
            ["nested", () => ops.outer()],
            ["selfTagged", () => ops.selfTagged()],
            ["mcp", () => fill!({ gb: 3 })],
          ] as const) {
            run[label] = await call().then(
              () => ({ notToolError: "resolved" }),
              (error: unknown) => observe(error),
            );
          }
          seen.push(run);
          // The approval ends this dispatch; the grant reruns the handler, which replays the four.
          await ops.gate();
          return Object.fromEntries(Object.entries(run).map(([k, v]) => [k, v.message]));
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [probe], policy: POLICY });
    const created = await env.client.create("probe", {});
    await approveAll(created);
    const { execution: done, steps } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(seen).toHaveLength(2);
    const [first, replay] = seen as [Record<string, unknown>, Record<string, unknown>];
    expect(replay).toEqual(first);
    expect(done.output).toEqual({
      body: "disk: disk full",
      nested: "outer: inner: disk full",
      selfTagged: "self_tagged: disk full",
      mcp: "mcp_fill: disk full after 3 GB",
    });
    expect(first.body).toMatchObject({ reason: "tool_failed", toolId: "disk", failure: "disk full" });
    // What the kernel recorded is the failure without the tool prefix.
    const errors = Object.fromEntries(steps.map((s) => [s.target, s.error]));
    expect(errors).toMatchObject({
      disk: { message: "disk full" },
      inner: { message: "disk full" },
      outer: { message: "inner: disk full" },
      self_tagged: { message: "disk full" },
      mcp_fill: { message: "disk full after 3 GB" },
    });
  });
});

describe("ToolError reasons through the public API (#5)", () => {
  it("denied: a direct call throws ToolError with the rule and reason; execute returns the string (#6)", async () => {
    const results: unknown[] = [];
    const payer = (options: AgentOptions) =>
      new Agent(
        "payer",
        async () => {
          results.push(await ops.wire({ cents: 5 }).catch(observe));
          // Frameworks call execute: the model reads the denial as the tool's result.
          results.push(await ops.tool("wire")?.execute({ cents: 5 }));
          return "done";
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [payer], policy: POLICY });
    const { execution: done, steps } = await env.run("payer", {});
    expect(done.status).toBe("completed");
    expect(results[0]).toMatchObject({
      name: "ToolError",
      code: "tool_error",
      reason: "denied",
      toolId: "wire",
      ruleId: "frozen",
      policyReason: "wires are frozen",
      message: "wire: not allowed. reason: wires are frozen",
    });
    expect((results[0] as { stepId?: string }).stepId).toBe(steps[0]?.stepId);
    expect(results[1]).toBe("wire not allowed. reason: wires are frozen");
    expect(steps.map((s) => s.status)).toEqual(["denied", "denied"]);
  });

  it("an uncaught denial fails the execution with the tool_error reason (never undefined fields)", async () => {
    const payer = (options: AgentOptions) =>
      new Agent(
        "payer",
        async () => {
          const receipt = await ops.wire({ cents: 5 });
          return `sent ${receipt.sent}`;
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [payer], policy: POLICY });
    const { execution: done } = await env.run("payer", {});
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("tool_error: wire: not allowed. reason: wires are frozen");
  });

  it("subagent_cancelled: a cancelled child fails the parent's tool with the child's id", async () => {
    const childIds: string[] = [];
    // Cancelled only once its body runs: cancelling a child not yet delivered would leave no id to compare.
    let childStarted!: () => void;
    const started = new Promise<void>((resolve) => (childStarted = resolve));
    class Desk extends Toolbox {
      @tool async ask() {
        return subagent("slow", {});
      }
    }
    const desk = new Desk();
    const parent = (options: AgentOptions) =>
      new Agent(
        "parent",
        async () => {
          try {
            return await desk.ask();
          } catch (error) {
            return observe(error);
          }
        },
        options,
      );
    const slow = (options: AgentOptions) =>
      new Agent(
        "slow",
        async () => {
          const { id, signal } = execution();
          childIds.push(id);
          childStarted();
          // Runs until the cancellation aborts its signal.
          await new Promise<never>((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason)),
          );
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [parent, slow] });
    const created = await env.client.create("parent", {});
    await env.waitForStatus(created.id, "blocked");
    await started;
    const child = (await env.client.list({ agentId: "slow" })).executions[0];
    expect(child).toBeDefined();
    await env.client.cancel(child!.id);
    const { execution: done } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({
      name: "ToolError",
      reason: "subagent_cancelled",
      toolId: "ask",
      childExecutionId: child!.id,
      childError: "client_cancelled",
      message: `ask: subagent ${child!.id} was cancelled: client_cancelled`,
    });
    expect(childIds).toEqual([child!.id]);
  });
});

describe("suspension survives a user catch (#9)", () => {
  it("a tool held for approval parks the handler: the catch block and the code after it never run", async () => {
    const trace: string[] = [];
    const careless = (options: AgentOptions) =>
      new Agent(
        "careless",
        async () => {
          trace.push(`start#${execution().dispatchAttempt}`);
          let opened = "swallowed";
          try {
            opened = await ops.gate();
          } catch (error) {
            trace.push(`caught ${String(error)}`);
          }
          trace.push(`after:${opened}`);
          return opened;
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [careless], policy: POLICY });
    const created = await env.client.create("careless", {});
    await approveAll(created);
    const { execution: done } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("opened");
    // Two runs (blocked, then resumed after the grant); only the resumed one got past the call.
    expect(trace.filter((t) => t.startsWith("start"))).toHaveLength(2);
    expect(trace.filter((t) => t.startsWith("caught"))).toEqual([]);
    expect(trace.filter((t) => t.startsWith("after"))).toEqual(["after:opened"]);
  });

  it("subagent(): a tool body that catches the wait cannot record its own result over the child's", async () => {
    class Desk extends Toolbox {
      readonly caught: string[] = [];
      @tool async ask() {
        try {
          return await subagent<string>("helper", {});
        } catch (error) {
          this.caught.push(String(error));
          return "swallowed";
        }
      }
    }
    const desk = new Desk();
    const parent = (options: AgentOptions) => new Agent("parent", () => desk.ask(), options);
    // The child answers only once the test has seen the parent blocked, so the parent suspends
    // exactly once whatever the scheduling (a timed sleep could end first on a loaded machine).
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const helper = (options: AgentOptions) =>
      new Agent(
        "helper",
        async () => {
          await released;
          return "from the child";
        },
        options,
      );
    env = await TestEnvironment.create({ agents: [parent, helper] });
    const created = await env.client.create("parent", {});
    try {
      await env.waitForStatus(created.id, "blocked");
    } finally {
      release(); // also on failure, so teardown's drain does not wait on a parked child
    }
    const { execution: done, steps, events } = await env.wait(created.id);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("from the child");
    expect(desk.caught).toEqual([]);
    expect(steps.map((s) => [s.target, s.status, s.result])).toEqual([
      ["ask", "succeeded", "from the child"],
    ]);
    expect(events.filter((e) => e.type === "execution.blocked")).toHaveLength(1);
  });
});
