import { Blocked } from "@rebuno/protocol";
import { generateText, jsonSchema, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import { haltable, toVercelTools } from "../../src/adapters/index.js";
import { makeTool } from "../schema/fixtures.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

type Call = Parameters<MockLanguageModelV3["doGenerate"]>[0];

/** A model that asks for the given tool calls once, then answers with text. */
function scriptedModel(calls: Array<{ id: string; tool: string; input: string }>) {
  const seen: Call[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      if (seen.length === 1) {
        return {
          content: calls.map((c) => ({
            type: "tool-call" as const,
            toolCallId: c.id,
            toolName: c.tool,
            input: c.input,
          })),
          finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text" as const, text: "done" }],
        finishReason: { unified: "stop" as const, raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
  return { model, seen };
}

const weather = makeTool(
  "get_weather",
  z.object({ city: z.string(), days: z.number().int().optional() }),
  ({ city }) => ({
    city,
    tempC: 21,
  }),
);
const legacy = makeTool("echo", z3.object({ text: z3.string() }), ({ text }) => String(text).toUpperCase());
const denied = makeTool(
  "wire_money",
  { type: "object", properties: { cents: { type: "integer" } }, required: ["cents"] },
  () => "wire_money not allowed. reason: amount over limit",
);

describe("toVercelTools with generateText", () => {
  it("runs the tools the model calls, with the model's arguments and call id", async () => {
    const { model, seen } = scriptedModel([
      { id: "call-1", tool: "get_weather", input: '{"city":"Oslo"}' },
      { id: "call-2", tool: "echo", input: '{"text":"hi"}' },
      { id: "call-3", tool: "wire_money", input: '{"cents":500}' },
    ]);
    const result = await generateText({
      model,
      tools: toVercelTools([weather, legacy, denied]),
      prompt: "go",
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("done");
    expect(weather.calls).toHaveLength(1);
    expect(weather.calls[0]!.args).toEqual({ city: "Oslo" });
    expect(weather.calls[0]!.options?.toolCallId).toBe("call-1");
    expect(weather.calls[0]!.options?.abortSignal).toBeUndefined();
    const results = result.steps[0]!.toolResults.map((r) => [r.toolName, r.output]);
    expect(results).toEqual([
      ["get_weather", { city: "Oslo", tempC: 21 }],
      ["echo", "HI"],
      ["wire_money", "wire_money not allowed. reason: amount over limit"],
    ]);
    // The model saw the JSON Schemas of all three tools.
    const sent = seen[0]!.tools!.map((t) => [
      t.name,
      (t as { inputSchema: Record<string, unknown> }).inputSchema,
    ]);
    expect(sent.map(([n]) => n)).toEqual(["get_weather", "echo", "wire_money"]);
    expect(sent[0]![1]).toMatchObject({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    });
    // The tool's own schema was not mutated by the AI SDK's post-processing.
    expect(weather.inputSchema).not.toHaveProperty("additionalProperties");
  });

  it("reports invalid model arguments as a tool error without running the tool", async () => {
    const tool = makeTool("get_weather", z.object({ city: z.string() }), () => "never");
    const { model } = scriptedModel([{ id: "c", tool: "get_weather", input: '{"city":42}' }]);
    const result = await generateText({
      model,
      tools: toVercelTools([tool]),
      prompt: "go",
      stopWhen: stepCountIs(2),
    });
    expect(tool.calls).toHaveLength(0);
    const errors = result.steps[0]!.content.filter((p) => p.type === "tool-error");
    expect(errors).toHaveLength(1);
  });

  it("stops the loop on Blocked and rethrows it through haltable", async () => {
    const blocked = new Blocked("step blocked", { approvalId: "ap-1" });
    const charge = makeTool("charge", { type: "object", properties: {} }, () => {
      throw blocked;
    });
    const { model, seen } = scriptedModel([{ id: "c1", tool: "charge", input: "{}" }]);
    const halt = new AbortController();
    const tools = toVercelTools([charge], { halt });
    await expect(
      haltable(halt, (signal) =>
        generateText({ model, tools, prompt: "go", abortSignal: signal, stopWhen: stepCountIs(3) }),
      ),
    ).rejects.toBe(blocked);
    expect(charge.calls).toHaveLength(1);
    expect(charge.calls[0]!.options?.abortSignal).toBe(halt.signal);
    expect(seen).toHaveLength(1); // no second model call after the block
  });

  it("builds the schema with ai's jsonSchema helper when given (ai 5 route)", async () => {
    const tools = toVercelTools([weather], { jsonSchema });
    const schema = tools.get_weather!.inputSchema; // ai's Schema, typed as such
    expect(schema.jsonSchema).toMatchObject({ type: "object", required: ["city"] });
    expect(await schema.validate!({ city: "x" })).toEqual({ success: true, value: { city: "x" } });
    expect(await schema.validate!({ city: 1 })).toMatchObject({ success: false });
    const { model } = scriptedModel([{ id: "c9", tool: "get_weather", input: '{"city":"Rome","days":2}' }]);
    await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(2) });
    expect(weather.calls.at(-1)!.args).toEqual({ city: "Rome", days: 2 });
  });
});
