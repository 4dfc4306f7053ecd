/**
 * Anthropic Messages API tools: `{ name, description, input_schema }`. Without `strict` the schema
 * only guides the model, so it is passed through (minus `$schema`). With `strict: true` it is
 * compiled for grammar-constrained sampling: closed objects, no recursion, numeric/length
 * constraints and `maxItems` moved into the description (the official SDKs do the same), and the
 * per-request budgets (20 strict tools, 24 optional parameters, 16 union parameters) enforced.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { isSchemaObject, requiredSet, withoutDialect } from "./schema-walk.js";
import { compileStrictSchema, type StrictDialect } from "./strict-compiler.js";
import { toJsonSchema } from "./to-json-schema.js";
import { assignToolNames } from "./tool-names.js";
import { collectTools, type ToolSource } from "./tool-source.js";

/** Anthropic's strict tool-use dialect. */
export const ANTHROPIC_STRICT_DIALECT: StrictDialect = {
  provider: "Anthropic",
  requireAllProperties: false,
  keep: new Set(["title", "pattern", "minItems", "default"]),
  describe: new Set([
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
  ]),
  formats: new Set([
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
  ]),
  allowRecursion: false,
  maxMinItems: 1,
};

/** Anthropic's per-request limits for strict tools. */
export const ANTHROPIC_STRICT_LIMITS = { tools: 20, optionalParameters: 24, unionParameters: 16 } as const;

/** Options for {@link toAnthropicTools}. */
export interface AnthropicToolsOptions {
  /** Compile schemas for strict tool use and set `strict: true` (default `false`). */
  readonly strict?: boolean;
}

/** An Anthropic tool's input schema: the Messages API takes object schemas only. */
export type AnthropicInputSchema = JsonSchema & { readonly type: "object" };

/** One Anthropic tool definition. */
export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: AnthropicInputSchema;
  readonly strict?: boolean;
}

/**
 * The schema as the object schema it is: a tool's input schema has an object root, checked when
 * the schema is converted (`finishRoot` in to-json-schema.ts), so no tool reaches here without one.
 */
function objectSchema(schema: JsonSchema): AnthropicInputSchema {
  return schema as AnthropicInputSchema;
}

/**
 * Build Anthropic tool definitions for every tool.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import Anthropic from "@anthropic-ai/sdk";
 * import { Toolbox, toAnthropicTools, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const anthropic = new Anthropic();
 * await anthropic.messages.create({
 *   model: "claude-sonnet-4-5",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Find my invoice" }],
 *   tools: toAnthropicTools(new Billing()),
 * });
 * ```
 */
export function toAnthropicTools(tools: ToolSource, options: AnthropicToolsOptions = {}): AnthropicTool[] {
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  if (!options.strict) {
    return list.map((tool) => ({
      name: names.get(tool.name)!,
      description: tool.description,
      input_schema: objectSchema(withoutDialect(convert(tool, toJsonSchema))),
    }));
  }
  if (list.length > ANTHROPIC_STRICT_LIMITS.tools) {
    throw new ConfigurationError(
      `Anthropic allows at most ${ANTHROPIC_STRICT_LIMITS.tools} strict tools per request, got ${list.length}`,
    );
  }
  const out = list.map((tool) => ({
    name: names.get(tool.name)!,
    description: tool.description,
    input_schema: objectSchema(convert(tool, toAnthropicStrictSchema)),
    strict: true,
  }));
  checkAnthropicBudgets(out.map((t) => t.input_schema));
  return out;
}

/** Compile one input schema for Anthropic strict tool use (budgets are per request: see above). */
export function toAnthropicStrictSchema(schema: Parameters<typeof toJsonSchema>[0]): JsonSchema {
  return compileStrictSchema(toJsonSchema(schema), ANTHROPIC_STRICT_DIALECT);
}

/**
 * Count optional parameters and union-typed parameters across a request's strict schemas and
 * throw {@link ConfigurationError} when Anthropic's limits are exceeded.
 */
export function checkAnthropicBudgets(schemas: readonly JsonSchema[]): void {
  let optional = 0;
  let unions = 0;
  const visit = (node: unknown): void => {
    if (!isSchemaObject(node)) return;
    if (isSchemaObject(node.properties)) {
      const required = requiredSet(node);
      for (const [name, sub] of Object.entries(node.properties)) {
        if (!required.has(name)) optional++;
        if (isSchemaObject(sub) && (Array.isArray(sub.anyOf) || Array.isArray(sub.type))) unions++;
        visit(sub);
      }
    }
    visit(node.items);
    if (Array.isArray(node.anyOf)) node.anyOf.forEach(visit);
    if (isSchemaObject(node.$defs)) Object.values(node.$defs).forEach(visit);
  };
  schemas.forEach(visit);
  const limits = ANTHROPIC_STRICT_LIMITS;
  if (optional > limits.optionalParameters) {
    throw new ConfigurationError(
      `Anthropic strict tools allow ${limits.optionalParameters} optional parameters per request, found ${optional}; ` +
        "make some required or turn strict off",
    );
  }
  if (unions > limits.unionParameters) {
    throw new ConfigurationError(
      `Anthropic strict tools allow ${limits.unionParameters} parameters with anyOf or type arrays per request, found ${unions}`,
    );
  }
}

function convert(tool: RebunoTool, fn: (schema: JsonSchema) => JsonSchema): JsonSchema {
  try {
    return fn(tool.inputSchema);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      throw new ConfigurationError(`tool '${tool.name}': ${error.message}`, { cause: error });
    }
    throw error;
  }
}
