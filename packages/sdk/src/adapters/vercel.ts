/**
 * Vercel AI SDK (`ai` v5–v7) tools: a record keyed by the model-visible name of
 * `{ description, inputSchema, execute }` objects, which is exactly what `tool({...})` returns
 * (`tool` is an identity helper), so no import of `ai` is needed.
 *
 * `inputSchema` is a Standard Schema with the Standard JSON Schema extension, which `ai` ≥ 6
 * accepts as a FlexibleSchema. For `ai` 5 pass its `jsonSchema` helper as `options.jsonSchema`.
 * Validation reuses the tool's own validator (or the JSON Schema subset validator), so malformed
 * model arguments come back to the model as a tool-input error without creating a kernel step;
 * the *original* arguments are passed on, because the Rebuno tool validates (and transforms)
 * them once more itself.
 */
import { withoutDialect } from "../schema/schema-walk.js";
import { assignToolNames } from "../schema/tool-names.js";
import { collectTools, type ToolSource } from "../schema/tool-source.js";
import { validateWith } from "../schema/validate.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { type AdapterOptions, invokeTool } from "./control-flow.js";

/** The `ai` package's `jsonSchema(schema, { validate })` helper (only needed for `ai` 5). */
export type AiJsonSchemaHelper<S = unknown> = (
  schema: JsonSchema,
  options: { validate: (value: unknown) => Promise<AiValidationResult> },
) => S;

/** What `ai`'s validate hook returns. */
export type AiValidationResult = { success: true; value: unknown } | { success: false; error: Error };

/** Options for {@link toVercelTools}. */
export interface VercelToolsOptions extends AdapterOptions {
  /** `jsonSchema` from `ai`; when given, inputSchema is built with it instead of Standard Schema. */
  readonly jsonSchema?: AiJsonSchemaHelper<unknown> | undefined;
}

/** The second argument `ai` passes to `execute`. */
export interface VercelToolCallOptions {
  readonly toolCallId: string;
  readonly abortSignal?: AbortSignal | undefined;
}

/**
 * A tool in the shape `ai`'s `tool({...})` produces. `S` is the input schema type: a Standard
 * Schema by default (assignable to `ai`'s FlexibleSchema), or what `options.jsonSchema` returns.
 */
export interface VercelTool<S = StandardSchemaV1> {
  readonly description: string;
  readonly inputSchema: S;
  // biome-ignore lint/suspicious/noExplicitAny: `ai` types tool inputs as the schema's inferred type; `any` lets the record satisfy ToolSet for every schema
  execute(input: any, options: VercelToolCallOptions): Promise<unknown>;
}

/**
 * Export tools for `generateText` / `streamText` / `Agent` from the Vercel AI SDK.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { openai } from "@ai-sdk/openai";
 * import { Toolbox, toVercelTools, tool } from "@rebuno/sdk";
 * import { generateText, stepCountIs } from "ai";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const result = await generateText({
 *   model: openai("gpt-4o-mini"),
 *   tools: toVercelTools(new Billing()),
 *   prompt: "Find my invoice",
 *   stopWhen: stepCountIs(5),
 * });
 * ```
 */
export function toVercelTools<S>(
  tools: ToolSource,
  options: AdapterOptions & { readonly jsonSchema: AiJsonSchemaHelper<S> },
): Record<string, VercelTool<S>>;
export function toVercelTools(tools: ToolSource, options?: AdapterOptions): Record<string, VercelTool>;
export function toVercelTools(
  tools: ToolSource,
  options: VercelToolsOptions = {},
): Record<string, VercelTool<unknown>> {
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  const out: Record<string, VercelTool<unknown>> = {};
  for (const tool of list) {
    out[names.get(tool.name)!] = {
      description: tool.description,
      inputSchema: options.jsonSchema
        ? options.jsonSchema(withoutDialect(tool.inputSchema), { validate: (v) => aiValidate(tool, v) })
        : standardInput(tool),
      execute: (input, call) =>
        invokeTool(tool, input, { toolCallId: call?.toolCallId, abortSignal: call?.abortSignal }, options),
    };
  }
  return out;
}

function standardInput(tool: RebunoTool): StandardSchemaV1 {
  // A fresh copy per call (`ai` adds additionalProperties in place), never with `$schema`:
  // providers' strict modes reject keywords they do not document.
  const forTarget = (): Record<string, unknown> => withoutDialect(tool.inputSchema);
  return {
    "~standard": {
      version: 1,
      vendor: "rebuno",
      validate: async (value) => {
        const result = await validateWith(tool.input ?? tool.inputSchema, value);
        return result.issues === undefined ? { value } : { issues: result.issues };
      },
      jsonSchema: { input: forTarget, output: forTarget },
    },
  };
}

async function aiValidate(tool: RebunoTool, value: unknown): Promise<AiValidationResult> {
  const result = await validateWith(tool.input ?? tool.inputSchema, value);
  if (result.issues === undefined) return { success: true, value };
  const detail = result.issues.map(
    (i) => `${(i.path ?? []).map(String).join(".") || "(root)"}: ${i.message}`,
  );
  return {
    success: false,
    error: new TypeError(`invalid input for tool '${tool.name}': ${detail.join("; ")}`),
  };
}
