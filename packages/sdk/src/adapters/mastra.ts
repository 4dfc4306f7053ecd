/**
 * Mastra tools: a record of `createTool({ id, description, inputSchema, execute })` definitions
 * keyed by name, ready for `new Agent({ tools })`.
 *
 * Mastra changed `execute`'s signature at 1.0: `execute(inputData, context)` (≥ 1.0, the
 * default here) versus `execute({ context: inputData, runtimeContext, abortSignal })` (0.x).
 * Passing a Rebuno tool straight in as `execute` on 0.x would record the whole options object,
 * so the signature is an explicit option rather than guessed from the arguments.
 *
 * `inputSchema` is the tool's own Standard Schema when it has one (Mastra reads zod natively)
 * and otherwise a Standard JSON Schema wrapper around its JSON Schema.
 */
import { assignToolNames } from "../schema/tool-names.js";
import { collectTools, type ToolSource } from "../schema/tool-source.js";
import { fromJsonSchema } from "../schema/validate.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import { type AdapterOptions, invokeTool } from "./control-flow.js";

/** The context Mastra ≥ 1.0 passes as `execute`'s second argument (the part read here). */
export interface MastraToolContext {
  readonly abortSignal?: AbortSignal | undefined;
  readonly agent?: { readonly toolCallId?: string | undefined } | undefined;
  readonly toolCallId?: string | undefined;
}

/** The single options object Mastra 0.x passes to `execute`. */
export interface MastraLegacyExecuteOptions extends MastraToolContext {
  readonly context: unknown;
}

/** A tool definition in Mastra's `createTool` shape. */
export interface MastraToolDefinition {
  readonly id: string;
  readonly description: string;
  readonly inputSchema: StandardSchemaV1;
  readonly execute: (...args: never[]) => Promise<unknown>;
}

/** Options for {@link toMastraTools}. */
export interface MastraToolsOptions extends AdapterOptions {
  /** `"v1"` (default): `execute(inputData, context)`; `"v0"`: `execute({ context, … })`. */
  readonly signature?: "v1" | "v0";
  /** Mastra's `createTool`; when given, each definition is passed through it. */
  readonly createTool?: (definition: MastraToolDefinition) => unknown;
}

/**
 * Export tools for a Mastra `Agent`.
 *
 * @example
 * ```ts
 * import { Toolbox, toMastraTools, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const tools = toMastraTools(new Billing()); // or toMastraTools(box, { createTool }) from @mastra/core/tools
 * // new Agent({ id: "ops", name: "ops", instructions, model, tools }) from @mastra/core/agent
 * ```
 */
export function toMastraTools(tools: ToolSource, options: MastraToolsOptions = {}): Record<string, unknown> {
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  const out: Record<string, unknown> = {};
  for (const tool of list) {
    const id = names.get(tool.name)!;
    const run = (input: unknown, ctx: MastraToolContext | undefined) =>
      invokeTool(
        tool,
        input,
        { toolCallId: ctx?.agent?.toolCallId ?? ctx?.toolCallId, abortSignal: ctx?.abortSignal },
        options,
      );
    const execute =
      options.signature === "v0"
        ? (opts: MastraLegacyExecuteOptions) => run(opts.context, opts)
        : (input: unknown, ctx?: MastraToolContext) => run(input, ctx);
    const definition: MastraToolDefinition = {
      id,
      description: tool.description,
      inputSchema: tool.input ?? fromJsonSchema(tool.inputSchema),
      execute: execute as MastraToolDefinition["execute"],
    };
    out[id] = options.createTool ? options.createTool(definition) : definition;
  }
  return out;
}
