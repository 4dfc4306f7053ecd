/**
 * Real frameworks, real tools, real kernel: agents whose handlers run the Vercel AI SDK and the
 * OpenAI Agents SDK over exported toolboxes, served by the dev kernel through @rebuno/testing's
 * TestEnvironment (webhooks and kernel calls in process). Covers the promise of the exporters:
 * recording, replay after a redelivery, approvals that stop the framework loop, and denials
 * reaching the model as tool results.
 */
import {
  type FunctionTool,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Agent as OpenAIAgent,
  Runner,
  setTracingDisabled,
  Usage,
} from "@openai/agents-core";
import { Agent, type AgentOptions, Toolbox, tool } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { haltable, toOpenAIAgentsTools, toVercelTools } from "../../src/adapters/index.js";

beforeAll(() => setTracingDisabled(true));

const calls: string[] = [];

class Orders extends Toolbox {
  @tool("lookup_order", { input: z.object({ id: z.string() }) })
  async lookup({ id }: { id: string }) {
    calls.push(`lookup:${id}`);
    return { id, status: "shipped" };
  }

  @tool("refund", {
    idempotency: "at_most_once",
    input: z.object({ id: z.string(), cents: z.number().int() }),
  })
  async refund({ id, cents }: { id: string; cents: number }) {
    calls.push(`refund:${id}:${cents}`);
    return `refunded ${cents}`;
  }
}

const POLICY = `
default_action: allow
rules:
  - id: big-refunds
    when:
      target: refund
      arguments:
        cents: { one_of: [2500, 5000] }
    then:
      decision: require_approval
      approval_config: { message: review this refund }
  - id: no-cheap-refunds
    when:
      target: refund
      arguments:
        cents: { equals: 5 }
    then: { decision: deny, reason: too small to refund }
`;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Asks for lookup_order + refund, then answers with the tool results it was given. */
function scriptedVercelModel(cents: number) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const results = options.prompt.filter((m) => m.role === "tool").flatMap((m) => m.content);
      if (results.length === 0) {
        return {
          content: [
            { type: "tool-call" as const, toolCallId: "c1", toolName: "lookup_order", input: '{"id":"A1"}' },
            {
              type: "tool-call" as const,
              toolCallId: "c2",
              toolName: "refund",
              input: `{"id":"A1","cents":${cents}}`,
            },
          ],
          finishReason: { unified: "tool-calls" as const, raw: undefined },
          usage,
          warnings: [],
        };
      }
      const text = results
        .map((r) => (r.type === "tool-result" && "value" in r.output ? JSON.stringify(r.output.value) : ""))
        .join(" | ");
      return {
        content: [{ type: "text" as const, text }],
        finishReason: { unified: "stop" as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

const vercelAgent = (options: AgentOptions) =>
  new Agent(
    "vercel-support",
    async (input: unknown) => {
      const { cents } = input as { cents: number };
      const halt = new AbortController();
      const tools = toVercelTools(new Orders(), { halt });
      const result = await haltable(halt, (signal) =>
        generateText({
          model: scriptedVercelModel(cents),
          tools,
          prompt: "refund A1",
          abortSignal: signal,
          stopWhen: stepCountIs(3),
        }),
      );
      return result.text;
    },
    options,
  );

/** Steps ordered by tool name, for calls a framework runs concurrently. */
const byTarget = <T extends { readonly target: string }>(steps: readonly T[]): T[] =>
  [...steps].sort((a, b) => a.target.localeCompare(b.target));

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
  calls.length = 0;
});

describe("Vercel AI SDK agent on the dev kernel", () => {
  it("records both calls and returns the results to the model", async () => {
    env = await TestEnvironment.create({ agents: [vercelAgent], policy: POLICY });
    const { execution, steps } = await env.run("vercel-support", { cents: 500 });
    expect(execution.status).toBe("completed");
    expect(execution.output).toBe('{"id":"A1","status":"shipped"} | "refunded 500"');
    // Both calls come in one model turn and run concurrently: their recording order is not fixed.
    expect(byTarget(steps).map((s) => [s.target, s.status, s.idempotency, s.args])).toEqual([
      ["lookup_order", "succeeded", "safe_to_retry", { id: "A1" }],
      ["refund", "succeeded", "at_most_once", { id: "A1", cents: 500 }],
    ]);
    expect([...calls].sort()).toEqual(["lookup:A1", "refund:A1:500"]);
  });

  it("gives the model the denial string as the tool result", async () => {
    env = await TestEnvironment.create({ agents: [vercelAgent], policy: POLICY });
    const { execution } = await env.run("vercel-support", { cents: 5 });
    expect(execution.status).toBe("completed");
    expect(execution.output).toBe(
      '{"id":"A1","status":"shipped"} | "refund not allowed. reason: too small to refund"',
    );
    expect(calls).toEqual(["lookup:A1"]);
  });

  it("stops the loop on an approval, then replays the lookup and runs the refund once after the grant", async () => {
    env = await TestEnvironment.create({ agents: [vercelAgent], policy: POLICY });
    const created = await env.client.create("vercel-support", { cents: 2500 });
    await env.waitForStatus(created.id, "blocked");
    // The model asked for both calls in one turn, so they run concurrently: the refund's approval
    // halts the loop, and the lookup body may or may not have run before the halt reached it.
    expect(calls.filter((c) => c.startsWith("refund"))).toEqual([]);
    expect(calls.length).toBeLessThanOrEqual(1);
    const [approval] = await env.client.listApprovals({ status: "pending" });
    await env.client.grantApproval(approval!.id, { decidedBy: "ops@example.com", rationale: "ok" });
    const { execution, steps } = await env.wait(created.id);
    expect(execution.status).toBe("completed");
    expect(execution.output).toBe('{"id":"A1","status":"shipped"} | "refunded 2500"');
    // The second dispatch replayed lookup_order from the journal: its body ran once in total.
    expect([...calls].sort()).toEqual(["lookup:A1", "refund:A1:2500"]);
    expect(byTarget(steps).map((s) => [s.target, s.status])).toEqual([
      ["lookup_order", "succeeded"],
      ["refund", "succeeded"],
    ]);
  });
});

class RefundModel implements Model {
  turns = 0;
  constructor(private readonly cents: number) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.turns++;
    if (this.turns === 1) {
      const args = JSON.stringify({ id: "B2", cents: this.cents });
      return {
        usage: new Usage(),
        output: [
          { type: "function_call", callId: "fc_1", status: "completed", name: "refund", arguments: args },
        ],
      };
    }
    const outputs = (request.input as Array<{ type?: string; output?: unknown }>).filter(
      (i) => i.type === "function_call_result",
    );
    const text = JSON.stringify(outputs.map((o) => o.output));
    return {
      usage: new Usage(),
      output: [
        { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] },
      ],
    };
  }
  // biome-ignore lint/correctness/useYield: the scripted model never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not scripted");
  }
}

const agentsSdkAgent = (options: AgentOptions) =>
  new Agent(
    "agents-support",
    async (input: unknown) => {
      const { cents } = input as { cents: number };
      const halt = new AbortController();
      const agent = new OpenAIAgent({
        name: "support",
        instructions: "Refund orders.",
        model: new RefundModel(cents),
        tools: await toOpenAIAgentsTools<FunctionTool>(new Orders(), { halt }),
      });
      const result = await haltable(halt, (signal) => new Runner().run(agent, "refund B2", { signal }));
      return result.finalOutput;
    },
    options,
  );

describe("OpenAI Agents SDK agent on the dev kernel", () => {
  it("records the call, and blocks then completes across an approval", async () => {
    env = await TestEnvironment.create({ agents: [agentsSdkAgent], policy: POLICY });
    const small = await env.run("agents-support", { cents: 300 });
    expect(small.execution.status).toBe("completed");
    expect(String(small.output)).toContain("refunded 300");
    expect(small.steps.map((s) => [s.target, s.args])).toEqual([["refund", { id: "B2", cents: 300 }]]);

    const created = await env.client.create("agents-support", { cents: 5000 });
    await env.waitForStatus(created.id, "blocked");
    expect(calls).toEqual(["refund:B2:300"]);
    const [approval] = await env.client.listApprovals({ status: "pending" });
    await env.client.grantApproval(approval!.id, { decidedBy: "ops@example.com" });
    const { execution } = await env.wait(created.id);
    expect(execution.status).toBe("completed");
    expect(calls).toEqual(["refund:B2:300", "refund:B2:5000"]);
  });
});
