/**
 * The docs/frameworks.md provider snippets, run for real: each provider SDK (OpenAI, Anthropic,
 * Vercel AI SDK, LangChain ChatOpenAI, Google Gen AI) is handed `rebunoFetch` and called inside an
 * execution on the dev kernel; a loopback server answers in each provider's wire format. Every call
 * must become one recorded `llm_call` step whose target is the model.
 */
import { createServer, type Server } from "node:http";
import { setDefaultBaseUrls } from "@google/genai";
import { Agent, type AgentOptions } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const hits: string[] = [];
let server: Server;
let env: TestEnvironment | undefined;

function answer(path: string): unknown {
  if (path.endsWith("/chat/completions")) {
    return {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "hi from openai" },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  }
  if (path.endsWith("/messages")) {
    return {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "hi from anthropic" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
  }
  if (path.includes(":generateContent")) {
    return {
      candidates: [
        { content: { role: "model", parts: [{ text: "hi from gemini" }] }, finishReason: "STOP", index: 0 },
      ],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    };
  }
  return undefined;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      hits.push(path);
      const body = answer(path);
      res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? { error: { message: `no route ${path}` } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  process.env.OPENAI_BASE_URL = `${origin}/v1`;
  process.env.OPENAI_API_KEY = "test-key";
  process.env.ANTHROPIC_BASE_URL = origin;
  process.env.ANTHROPIC_API_KEY = "test-key";
  process.env.GEMINI_API_KEY = "test-key";
  setDefaultBaseUrls({ geminiUrl: origin });
});

afterAll(async () => {
  await env?.teardown();
  await new Promise<void>((r) => server.close(() => r()));
});

const cases = [
  { name: "openai", module: "./snippets/openai.js", model: "gpt-4o-mini", text: "hi from openai" },
  {
    name: "anthropic",
    module: "./snippets/anthropic.js",
    model: "claude-sonnet-4-5",
    text: "hi from anthropic",
  },
  { name: "vercel-ai", module: "./snippets/vercel-ai.js", model: "gpt-4o-mini", text: "hi from openai" },
  {
    name: "langchain-openai",
    module: "./snippets/langchain-openai.js",
    model: "gpt-4o-mini",
    text: "hi from openai",
  },
  { name: "gemini", module: "./snippets/gemini.js", model: "gemini-2.5-flash", text: "hi from gemini" },
] as const;

describe("rebunoFetch with each provider SDK", () => {
  it.each(cases)(
    "$name: the model call is a recorded llm_call step",
    async ({ name, module, model, text }) => {
      // Imported after the base URLs are set: the snippets build their clients at module load.
      const { ask } = (await import(module)) as { ask: (q: string) => Promise<string> };
      await env?.teardown();
      const factory = (options: AgentOptions) => new Agent(`llm-${name}`, async () => ask("hello"), options);
      env = await TestEnvironment.create({ agents: [factory] });
      const before = hits.length;
      const run = await env.run(factory, {});
      expect(run.execution.failureReason).toBeUndefined();
      expect(run.execution.output).toBe(text);
      expect(run.steps.map((s) => [s.kind, s.target, s.status])).toEqual([["llm_call", model, "succeeded"]]);
      expect(hits.length - before).toBe(1);
    },
  );
});
