/**
 * End to end: real `@tool` toolboxes and `defineTool` tools (recording through the SDK runtime,
 * answered by @rebuno/testing's scripted kernel) exported to real frameworks driven by scripted
 * models. These run the exact code shown in docs/frameworks.md (snippets/frameworks.ts).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type Model,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
  Usage,
} from "@openai/agents-core";
import { Blocked } from "@rebuno/protocol";
import { ToolTestContext } from "@rebuno/testing";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import * as snippets from "./snippets/frameworks.js";

beforeAll(() => setTracingDisabled(true));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Vercel mock model: one turn of tool calls, then text echoing the tool results it was sent. */
function vercelModel(calls: Array<{ id: string; tool: string; input: object }>) {
  let turn = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      turn++;
      if (turn === 1) {
        return {
          content: calls.map((c) => ({
            type: "tool-call" as const,
            toolCallId: c.id,
            toolName: c.tool,
            input: JSON.stringify(c.input),
          })),
          finishReason: { unified: "tool-calls" as const, raw: undefined },
          usage,
          warnings: [],
        };
      }
      const results = options.prompt.filter((m) => m.role === "tool").flatMap((m) => m.content);
      return {
        content: [
          {
            type: "text" as const,
            text: JSON.stringify(results.map((r) => (r.type === "tool-result" ? r.output : null))),
          },
        ],
        finishReason: { unified: "stop" as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

describe("Vercel AI SDK → Rebuno tools", () => {
  it("records each call, returns results and denials to the model", async () => {
    const t = new ToolTestContext();
    t.deny("refund", "refunds need a manager");
    const model = vercelModel([
      { id: "c1", tool: "lookup_order", input: { id: "A1", includeItems: true } },
      { id: "c2", tool: "refund", input: { id: "A1", cents: 500 } },
      { id: "c3", tool: "weather", input: { city: "Oslo" } },
    ]);
    const text = await t.run(() => snippets.vercel(model, "help"));
    // The framework runs the three calls side by side (Promise.all), so the order they reach the
    // kernel is an interleaving detail: compare them sorted by target. The results fed back to
    // the model keep the call order, asserted below.
    const submitted = [...t.submitted].sort((a, b) => a.target.localeCompare(b.target));
    expect(submitted.map((s) => [s.target, s.args, s.idempotency, s.decision])).toEqual([
      ["lookup_order", { id: "A1", includeItems: true }, "safe_to_retry", "proceed"],
      ["refund", { id: "A1", cents: 500 }, "at_most_once", "denied"],
      ["weather", { city: "Oslo" }, "safe_to_retry", "proceed"],
    ]);
    expect(JSON.parse(text)).toEqual([
      { type: "json", value: { id: "A1", status: "shipped", items: ["book"] } },
      { type: "text", value: "refund not allowed. reason: refunds need a manager" },
      { type: "json", value: { city: "Oslo", tempC: 18 } },
    ]);
  });

  it("ends the run with Blocked when a call waits for approval", async () => {
    const t = new ToolTestContext();
    t.block("refund", "ap-77");
    const model = vercelModel([{ id: "c1", tool: "refund", input: { id: "A1", cents: 500 } }]);
    const error = await t.run(() => snippets.vercel(model, "refund it")).catch((e: unknown) => e);
    expect(Blocked.isInstance(error)).toBe(true);
    expect((error as Blocked).approvalId).toBe("ap-77");
  });
});

describe("LangChain → Rebuno tools", () => {
  it("records the call and answers with a ToolMessage", async () => {
    const t = new ToolTestContext();
    const message = (await t.run(() => snippets.langchain())) as { tool_call_id: string; content: string };
    expect(message.tool_call_id).toBe("call_1");
    expect(JSON.parse(message.content)).toEqual({ id: "A1", status: "shipped" });
    expect(t.submitted[0]).toMatchObject({ target: "lookup_order", args: { id: "A1" } });
  });
});

class ScriptedAgentsModel implements Model {
  turns = 0;
  constructor(private readonly call: { name: string; arguments: object }) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.turns++;
    if (this.turns === 1) {
      return {
        usage: new Usage(),
        output: [
          {
            type: "function_call",
            callId: "fc_1",
            status: "completed",
            name: this.call.name,
            arguments: JSON.stringify(this.call.arguments),
          },
        ],
      };
    }
    const text = JSON.stringify(request.input);
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

describe("OpenAI Agents SDK → Rebuno tools", () => {
  it("records the call with strict nulls removed", async () => {
    const t = new ToolTestContext();
    const model = new ScriptedAgentsModel({
      name: "lookup_order",
      arguments: { id: "B2", includeItems: null },
    });
    const output = await t.run(() => snippets.openAIAgents(model, "where is B2?"));
    expect(t.submitted[0]).toMatchObject({ target: "lookup_order", args: { id: "B2" } });
    expect(String(output)).toContain("shipped");
  });

  it("ends the run with Blocked", async () => {
    const t = new ToolTestContext();
    t.block("refund");
    const model = new ScriptedAgentsModel({ name: "refund", arguments: { id: "B2", cents: 100 } });
    const error = await t.run(() => snippets.openAIAgents(model, "refund")).catch((e: unknown) => e);
    expect(Blocked.isInstance(error)).toBe(true);
    expect(model.turns).toBe(1);
  });
});

describe("Mastra → Rebuno tools", () => {
  it("executes with Mastra 1.x's (inputData, context) signature", async () => {
    const t = new ToolTestContext();
    const tools = snippets.mastra() as Record<
      string,
      { execute: (input: unknown, ctx: unknown) => Promise<unknown> }
    >;
    expect(Object.keys(tools)).toEqual(["lookup_order", "refund"]);
    const out = await t.run(() => tools.lookup_order!.execute({ id: "C3" }, { agent: { toolCallId: "m1" } }));
    expect(out).toEqual({ id: "C3", status: "shipped" });
    expect(t.submitted[0]).toMatchObject({ target: "lookup_order", args: { id: "C3" } });
  });
});

describe("MCP", () => {
  it("serves a toolbox: client calls are recorded steps in the execution", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = await snippets.mcpServer(serverSide);
    const client = new Client({ name: "claude", version: "1" });
    await client.connect(clientSide);
    closers.push(
      () => client.close(),
      () => server.close(),
    );
    const t = new ToolTestContext();
    t.deny("refund", "not today");
    const [ok, denied] = await t.run(() =>
      Promise.all([
        client.callTool({ name: "lookup_order", arguments: { id: "D4" } }),
        client.callTool({ name: "refund", arguments: { id: "D4", cents: 1 } }),
      ]),
    );
    expect(ok).toMatchObject({ structuredContent: { id: "D4", status: "shipped" } });
    expect(denied).toEqual({ content: [{ type: "text", text: "refund not allowed. reason: not today" }] });
    expect(t.submitted.map((s) => s.target).sort()).toEqual(["lookup_order", "refund"]);
  });

  it("wraps a remote MCP server's tools as recorded Rebuno tools", async () => {
    const remote = new McpServer({ name: "orders", version: "1" });
    remote.registerTool(
      "lookup_order",
      { inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
      async ({ id }) => ({ content: [{ type: "text", text: `order ${id}: shipped` }] }),
    );
    remote.registerTool("cancel_order", { inputSchema: { id: z.string() } }, async () => ({ content: [] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await remote.connect(serverSide);
    const client = new Client({ name: "agent", version: "1" });
    await client.connect(clientSide);
    closers.push(
      () => client.close(),
      () => remote.close(),
    );
    const t = new ToolTestContext();
    expect(await t.run(() => snippets.mcpClient(client))).toBe("order A1: shipped");
    expect(t.submitted).toMatchObject([
      { target: "gh_lookup_order", args: { id: "A1" }, idempotency: "safe_to_retry" },
    ]);
  });
});

describe("provider schemas from a toolbox", () => {
  it("builds every provider's tool list", () => {
    const { openai, responses, anthropic, gemini } = snippets.providerSchemas();
    expect(openai.map((t) => t.function.name)).toEqual(["lookup_order", "refund"]);
    expect(openai[0]!.function.parameters).toMatchObject({
      required: ["id", "includeItems"],
      additionalProperties: false,
    });
    expect(responses[1]).toMatchObject({ type: "function", name: "refund", strict: true });
    expect(anthropic[1]!.input_schema).toMatchObject({ required: ["id", "cents"] });
    expect(gemini[0]!.functionDeclarations.map((d) => d.name)).toEqual(["lookup_order", "refund"]);
  });
});
