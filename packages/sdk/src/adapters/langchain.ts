/**
 * LangChain.js tools (`@langchain/core` ≥ 0.3): `tool(func, { name, description, schema })` with
 * the tool's JSON Schema. LangChain validates the arguments against it, then calls
 * `func(input, config)`; the call id comes from `config.toolCall.id` and cancellation from
 * `config.signal`. Tool messages are text, so non-string results are sent as JSON.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { withoutDialect } from "../schema/schema-walk.js";
import { assignToolNames } from "../schema/tool-names.js";
import { collectTools, type ToolSource } from "../schema/tool-source.js";
import type { JsonSchema } from "../tool-types.js";
import { type AdapterOptions, invokeTool, resultText } from "./control-flow.js";
import { loadOptionalPeer } from "./load-peer.js";

/** The part of LangChain's `RunnableConfig` the adapter reads. */
export interface LangChainToolConfig {
  readonly toolCall?: { readonly id?: string | undefined } | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** `tool` from `@langchain/core/tools`, typed to what the adapter passes. */
export type LangChainToolFactory = (
  func: (input: unknown, config?: LangChainToolConfig) => Promise<string>,
  fields: { name: string; description: string; schema: JsonSchema },
) => unknown;

/** Options for {@link toLangChainTools}. */
export interface LangChainToolsOptions extends AdapterOptions {
  /** `tool` from `@langchain/core/tools`; imported from the app's install when omitted. */
  readonly tool?: LangChainToolFactory;
}

/**
 * Export tools as LangChain structured tools (an array, in toolbox order). The tools are built by
 * LangChain's own `tool()`; `T` names their type (e.g. `DynamicStructuredTool`) so the result can
 * be passed to `createAgent` / `bindTools` without this package depending on LangChain's types.
 *
 * @example
 * ```ts
 * import type { DynamicStructuredTool } from "@langchain/core/tools";
 * import { Toolbox, toLangChainTools, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const tools = await toLangChainTools<DynamicStructuredTool>(new Billing());
 * // tools[0].name === "search"; pass them to LangChain's createAgent({ model, tools })
 * ```
 */
export async function toLangChainTools<T = unknown>(
  tools: ToolSource,
  options: LangChainToolsOptions = {},
): Promise<T[]> {
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  const factory = options.tool ?? (await loadLangChainTool());
  return list.map((tool) => {
    const schema = withoutDialect(tool.inputSchema);
    return factory(
      async (input, config) =>
        resultText(
          await invokeTool(
            tool,
            input,
            { toolCallId: config?.toolCall?.id, abortSignal: config?.signal },
            options,
          ),
        ),
      { name: names.get(tool.name)!, description: tool.description || tool.name, schema },
    ) as T;
  });
}

async function loadLangChainTool(): Promise<LangChainToolFactory> {
  const mod = await loadOptionalPeer<{ tool?: LangChainToolFactory }>(
    ["@langchain/core/tools"],
    (s) => import(s),
    "toLangChainTools",
  );
  if (typeof mod.tool !== "function") {
    throw new ConfigurationError("'@langchain/core/tools' has no `tool` export; use @langchain/core >= 0.3");
  }
  return mod.tool;
}
