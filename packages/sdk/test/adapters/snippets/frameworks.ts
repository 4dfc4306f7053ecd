/**
 * Runnable versions of the docs/frameworks.md snippets. Each function takes the model (or
 * transport) from the caller so tests can script it; in an app it is a real provider model
 * whose fetch goes through rebunoFetch.
 */

import type { DynamicStructuredTool } from "@langchain/core/tools";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, type FunctionTool, type Model, Runner } from "@openai/agents-core";
import {
  haltable,
  registerMcpTools,
  toAnthropicTools,
  toGeminiTools,
  toLangChainTools,
  toMastraTools,
  toOpenAIAgentsTools,
  toOpenAITools,
  toVercelTools,
  wrapMcpTools,
} from "@rebuno/sdk";
import { generateText, type LanguageModel, stepCountIs } from "ai";
import { Support, weather } from "./support-toolbox.js";

export async function vercel(model: LanguageModel, prompt: string): Promise<string> {
  // #region vercel
  const support = new Support();
  const halt = new AbortController();
  const tools = toVercelTools([...support, weather], { halt });
  const result = await haltable(halt, (signal) =>
    generateText({ model, tools, prompt, abortSignal: signal, stopWhen: stepCountIs(5) }),
  );
  // #endregion
  return result.text;
}

export async function langchain(): Promise<unknown> {
  // #region langchain
  const tools = await toLangChainTools<DynamicStructuredTool>(new Support());
  // Hand `tools` to createAgent({ model, tools }) or model.bindTools(tools). Each one is a
  // LangChain tool and can also be invoked directly with a tool call:
  const call = { type: "tool_call" as const, id: "call_1", name: "lookup_order", args: { id: "A1" } };
  const message = await tools[0]!.invoke(call);
  // #endregion
  return message;
}

export async function openAIAgents(model: Model, input: string): Promise<unknown> {
  // #region openai-agents
  const halt = new AbortController();
  const agent = new Agent({
    name: "support",
    instructions: "Help with orders.",
    model,
    tools: await toOpenAIAgentsTools<FunctionTool>(new Support(), { halt }),
  });
  const result = await haltable(halt, (signal) => new Runner().run(agent, input, { signal }));
  // #endregion
  return result.finalOutput;
}

export function mastra(): Record<string, unknown> {
  // #region mastra
  // Mastra >= 1.0: execute(inputData, context). Pass { signature: "v0" } for Mastra 0.x, and
  // { createTool } (from @mastra/core/tools) to get Mastra Tool instances.
  const tools = toMastraTools(new Support());
  // new MastraAgent({ id: "support", name: "support", instructions, model, tools })
  // #endregion
  return tools;
}

export async function mcpServer(transport: Transport): Promise<McpServer> {
  // #region mcp-server
  const server = new McpServer({ name: "support", version: "1.0.0" });
  await registerMcpTools(server, new Support());
  await server.connect(transport);
  // #endregion
  return server;
}

export async function mcpClient(client: Client): Promise<unknown> {
  // #region mcp-client
  // `client` is a connected @modelcontextprotocol/sdk Client.
  const github = await wrapMcpTools(client, {
    prefix: "gh",
    include: ["lookup_order"],
    idempotency: (t) => (t.annotations?.readOnlyHint ? "safe_to_retry" : "at_most_once"),
  });
  const order = await github[0]!({ id: "A1" }); // a recorded tool_call step named gh_lookup_order
  // #endregion
  return order;
}

export function providerSchemas() {
  // #region provider-schemas
  const support = new Support();
  const openai = toOpenAITools(support); // Chat Completions, strict: true
  const responses = toOpenAITools(support, { api: "responses" });
  const anthropic = toAnthropicTools(support); // add { strict: true } for strict tool use
  const gemini = toGeminiTools(support); // [{ functionDeclarations }]
  // #endregion
  return { openai, responses, anthropic, gemini };
}
