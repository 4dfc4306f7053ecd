/**
 * OpenAI Agents SDK (`@openai/agents` / `@openai/agents-core`) function tools.
 *
 * - `parameters` is the tool's JSON Schema, compiled by {@link toOpenAIStrictSchema} when
 *   `strict` (the default) so the same refusals and budgets apply as for {@link toOpenAITools};
 *   nulls the model sends for optional fields are stripped again before the tool runs.
 * - `errorFunction: null`: the Agents SDK otherwise turns *every* thrown error into a model
 *   message ("An error occurred while running the tool…"), which would hide `Blocked` and keep
 *   the loop calling a kernel that refuses everything. Tool failures that the model should see
 *   are already strings (policy denials) or become ToolErrors that end the run visibly.
 * - The call id is `details.toolCall.callId`; cancellation is `details.signal`.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { stripStrictNulls, toOpenAIStrictSchema } from "../schema/openai.js";
import { withoutDialect } from "../schema/schema-walk.js";
import { assignToolNames } from "../schema/tool-names.js";
import { collectTools, type ToolSource } from "../schema/tool-source.js";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { type AdapterOptions, invokeTool } from "./control-flow.js";
import { loadOptionalPeer } from "./load-peer.js";

/** The third argument the Agents SDK passes to `execute`. */
export interface OpenAIAgentsCallDetails {
  readonly toolCall?: { readonly callId?: string | undefined } | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What the adapter passes to the Agents SDK's `tool()`. */
export interface OpenAIAgentsToolConfig {
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
  errorFunction: null;
  execute: (input: unknown, runContext?: unknown, details?: OpenAIAgentsCallDetails) => Promise<unknown>;
}

/** `tool` from `@openai/agents`, typed to what the adapter passes. */
export type OpenAIAgentsToolFactory = (config: OpenAIAgentsToolConfig) => unknown;

/** Options for {@link toOpenAIAgentsTools}. */
export interface OpenAIAgentsToolsOptions extends AdapterOptions {
  /** Strict schemas (default `true`, the Agents SDK default too). */
  readonly strict?: boolean;
  /** `tool` from `@openai/agents`; imported from the app's install when omitted. */
  readonly tool?: OpenAIAgentsToolFactory;
}

/**
 * Export tools for an OpenAI Agents SDK `Agent` (an array, in toolbox order). The tools are
 * built by the SDK's own `tool()`; `T` names their type (e.g. `FunctionTool`) so the result
 * can be passed to `new Agent({ tools })` without this package depending on the SDK's types.
 *
 * @example
 * ```ts
 * import { Agent, type FunctionTool } from "@openai/agents";
 * import { Toolbox, toOpenAIAgentsTools, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const agent = new Agent({
 *   name: "support",
 *   instructions: "Answer billing questions.",
 *   tools: await toOpenAIAgentsTools<FunctionTool>(new Billing()),
 * });
 * ```
 */
export async function toOpenAIAgentsTools<T = unknown>(
  tools: ToolSource,
  options: OpenAIAgentsToolsOptions = {},
): Promise<T[]> {
  const strict = options.strict ?? true;
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  const prepared = list.map((tool) => ({ tool, parameters: parametersFor(tool, strict) }));
  const factory = options.tool ?? (await loadAgentsTool());
  return prepared.map(
    ({ tool, parameters }) =>
      factory({
        name: names.get(tool.name)!,
        description: tool.description,
        parameters,
        strict,
        errorFunction: null,
        execute: (input, _runContext, details) =>
          invokeTool(
            tool,
            strict ? stripStrictNulls(tool.inputSchema, input) : input,
            { toolCallId: details?.toolCall?.callId, abortSignal: details?.signal },
            options,
          ),
      }) as T,
  );
}

function parametersFor(tool: RebunoTool, strict: boolean): JsonSchema {
  try {
    if (strict) return toOpenAIStrictSchema(tool.inputSchema);
    return withoutDialect(tool.inputSchema);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      throw new ConfigurationError(`tool '${tool.name}': ${error.message}`, { cause: error });
    }
    throw error;
  }
}

async function loadAgentsTool(): Promise<OpenAIAgentsToolFactory> {
  const mod = await loadOptionalPeer<{ tool?: OpenAIAgentsToolFactory }>(
    ["@openai/agents", "@openai/agents-core"],
    (s) => import(s),
    "toOpenAIAgentsTools",
  );
  if (typeof mod.tool !== "function")
    throw new ConfigurationError("the OpenAI Agents SDK has no `tool` export");
  return mod.tool;
}
