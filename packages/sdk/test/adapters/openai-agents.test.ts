import {
  Agent,
  tool as agentsTool,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  Usage,
} from "@openai/agents-core";
import { Blocked } from "@rebuno/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod3";
import { haltable, type OpenAIAgentsToolFactory, toOpenAIAgentsTools } from "../../src/adapters/index.js";
import { makeTool } from "../schema/fixtures.js";

beforeAll(() => setTracingDisabled(true));

/** A Model that requests the given function calls once, then answers "done". */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly calls: Array<{ callId: string; name: string; arguments: string }>) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    if (this.requests.length === 1) {
      return {
        usage: new Usage(),
        output: this.calls.map((c) => ({
          type: "function_call" as const,
          status: "completed" as const,
          ...c,
        })),
      };
    }
    return {
      usage: new Usage(),
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "done" }],
        },
      ],
    };
  }

  // biome-ignore lint/correctness/useYield: the scripted model never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("streaming is not scripted");
  }
}

const search = makeTool(
  "search_docs",
  z.object({ query: z.string(), limit: z.number().int().optional(), lang: z.enum(["en", "de"]).nullable() }),
  ({ query, limit, lang }) => ({ hits: [`${String(query)}:${String(limit)}:${String(lang)}`] }),
);
const shout = makeTool("shout", z3.object({ text: z3.string() }), ({ text }) => String(text).toUpperCase());

describe("toOpenAIAgentsTools with the Agents SDK runner", () => {
  it("runs the tools the model calls, with strict nulls stripped and the call id passed", async () => {
    const tools = await toOpenAIAgentsTools([search, shout], {
      tool: agentsTool as unknown as OpenAIAgentsToolFactory,
    });
    const model = new ScriptedModel([
      { callId: "fc_1", name: "search_docs", arguments: '{"query":"rebuno","limit":null,"lang":null}' },
      { callId: "fc_2", name: "shout", arguments: '{"text":"hey"}' },
    ]);
    const agent = new Agent({ name: "a", instructions: "x", model, tools: tools as never });
    const result = await new Runner().run(agent, "find it");
    expect(result.finalOutput).toBe("done");
    // `limit` was optional: the strict null is removed. `lang` is nullable: null is kept.
    expect(search.calls.at(-1)!.args).toEqual({ query: "rebuno", lang: null });
    expect(search.calls.at(-1)!.options?.toolCallId).toBe("fc_1");
    expect(search.calls.at(-1)!.options?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(shout.calls.at(-1)!.args).toEqual({ text: "hey" });
    // The model was offered strict schemas: every property required, objects closed.
    const offered = model.requests[0]!.tools.find((t) => t.name === "search_docs") as {
      parameters: Record<string, unknown>;
      strict: boolean;
    };
    expect(offered.strict).toBe(true);
    expect(offered.parameters).toMatchObject({
      required: ["query", "limit", "lang"],
      additionalProperties: false,
    });
    // Tool outputs went back to the model on the second turn.
    const outputs = JSON.stringify(model.requests[1]!.input);
    expect(outputs).toContain("HEY");
    expect(outputs).toContain("rebuno:undefined:null");
  });

  it("lets Blocked end the run instead of becoming a model message", async () => {
    const blocked = new Blocked("step blocked", { approvalId: "ap-9" });
    const refund = makeTool("refund", z.object({ cents: z.number() }), () => {
      throw blocked;
    });
    const halt = new AbortController();
    const tools = await toOpenAIAgentsTools([refund], { halt });
    const model = new ScriptedModel([{ callId: "fc_9", name: "refund", arguments: '{"cents":100}' }]);
    const agent = new Agent({ name: "a", instructions: "x", model, tools: tools as never });
    await expect(haltable(halt, (signal) => new Runner().run(agent, "refund", { signal }))).rejects.toBe(
      blocked,
    );
    expect(model.requests).toHaveLength(1);
    expect(refund.calls[0]!.args).toEqual({ cents: 100 });
  });

  it("supports non-strict JSON Schema parameters", async () => {
    const tools = await toOpenAIAgentsTools(
      [
        makeTool("tag", z.object({ labels: z.record(z.string(), z.string()) }), ({ labels }) =>
          Object.keys(labels as object),
        ),
      ],
      { strict: false },
    );
    const model = new ScriptedModel([
      { callId: "fc_3", name: "tag", arguments: '{"labels":{"a":"1","b":"2"}}' },
    ]);
    const agent = new Agent({ name: "a", instructions: "x", model, tools: tools as never });
    const result = await new Runner().run(agent, "tag");
    expect(result.finalOutput).toBe("done");
    expect(JSON.stringify(model.requests[1]!.input)).toContain('[\\"a\\",\\"b\\"]');
  });

  it("refuses a record schema in strict mode, naming the tool", async () => {
    const tool = makeTool("tag", z.object({ labels: z.record(z.string(), z.string()) }), () => 1);
    await expect(toOpenAIAgentsTools([tool])).rejects.toThrow(
      /tool 'tag': OpenAI strict schema: at #\/properties\/labels/,
    );
  });
});
