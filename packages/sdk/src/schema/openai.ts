/**
 * OpenAI function tools (Chat Completions and Responses). With `strict: true` (the default, and
 * what the Responses API normalises towards anyway) the schema is compiled to OpenAI's structured
 * outputs subset: closed objects, every property required, optional properties made nullable,
 * `oneOf` → `anyOf`, unsupported keywords moved into descriptions, and the documented size
 * budgets checked up front. Use {@link stripStrictNulls} on the arguments the model sends back so
 * a tool declared with `.optional()` sees `undefined`, not `null`.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { allowsNull, isSchemaObject, requiredSet, resolveLocalRef, withoutDialect } from "./schema-walk.js";
import { compileStrictSchema, type StrictDialect } from "./strict-compiler.js";
import { toJsonSchema } from "./to-json-schema.js";
import { assignToolNames } from "./tool-names.js";
import { collectTools, type ToolSource } from "./tool-source.js";

/** OpenAI's structured-outputs dialect (platform docs, "Supported schemas"). */
export const OPENAI_STRICT_DIALECT: StrictDialect = {
  provider: "OpenAI",
  requireAllProperties: true,
  keep: new Set([
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
  ]),
  describe: new Set(["default", "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties"]),
  formats: new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]),
  allowRecursion: true,
};

/** OpenAI's documented limits for strict schemas. */
export const OPENAI_STRICT_LIMITS = {
  totalProperties: 5000,
  nestingDepth: 10,
  totalEnumValues: 1000,
  largeEnumValues: 250,
  largeEnumChars: 15_000,
  totalChars: 120_000,
} as const;

/** Options for {@link toOpenAITools}. */
export interface OpenAIToolsOptions {
  /** Compile to OpenAI's strict subset and set `strict: true` (default `true`). */
  readonly strict?: boolean;
  /** `"chat"` → `{type, function: {...}}` (default); `"responses"` → flat Responses API tools. */
  readonly api?: "chat" | "responses";
}

/** A Chat Completions function tool. */
export interface OpenAIChatTool {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: JsonSchema;
    readonly strict: boolean;
  };
}

/** A Responses API function tool. */
export interface OpenAIResponsesTool {
  readonly type: "function";
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

/**
 * Compile a tool input schema (any form {@link toJsonSchema} accepts) to OpenAI's strict subset
 * and check the size budgets. Throws {@link ConfigurationError} naming the location of anything
 * that cannot be made strict.
 */
export function toOpenAIStrictSchema(schema: Parameters<typeof toJsonSchema>[0]): JsonSchema {
  const compiled = compileStrictSchema(toJsonSchema(schema), OPENAI_STRICT_DIALECT);
  checkOpenAIBudgets(compiled);
  return compiled;
}

/**
 * Build OpenAI function tool definitions for every tool.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { Toolbox, toOpenAITools, tool } from "@rebuno/sdk";
 * import OpenAI from "openai";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const openai = new OpenAI();
 * const response = await openai.chat.completions.create({
 *   model: "gpt-4o-mini",
 *   messages: [{ role: "user", content: "Find my invoice" }],
 *   tools: toOpenAITools(new Billing()),
 * });
 * ```
 */
export function toOpenAITools(
  tools: ToolSource,
  options?: { readonly api?: "chat" } & OpenAIToolsOptions,
): OpenAIChatTool[];
export function toOpenAITools(
  tools: ToolSource,
  options: { readonly api: "responses" } & OpenAIToolsOptions,
): OpenAIResponsesTool[];
export function toOpenAITools(
  tools: ToolSource,
  options: OpenAIToolsOptions = {},
): OpenAIChatTool[] | OpenAIResponsesTool[] {
  const strict = options.strict ?? true;
  const list = collectTools(tools);
  const names = assignToolNames(list.map((t) => t.name));
  const defs = list.map((tool) => ({
    name: names.get(tool.name)!,
    description: tool.description,
    parameters: openAIParameters(tool, strict),
    strict,
  }));
  if (options.api === "responses") return defs.map((d) => ({ type: "function" as const, ...d }));
  return defs.map((d) => ({ type: "function" as const, function: d }));
}

function openAIParameters(tool: RebunoTool, strict: boolean): JsonSchema {
  try {
    if (strict) return toOpenAIStrictSchema(tool.inputSchema);
    return withoutDialect(toJsonSchema(tool.inputSchema));
  } catch (error) {
    if (error instanceof ConfigurationError) {
      throw new ConfigurationError(`tool '${tool.name}': ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Undo the optional → nullable rewrite on arguments a strict model produced: drop `null` values
 * of properties that were optional and did not accept `null` in the original schema, at any
 * depth. Other values pass through unchanged (a new object is returned; the input is untouched).
 */
export function stripStrictNulls(schema: JsonSchema, args: unknown): unknown {
  return strip(schema, args, schema, 0);
}

function strip(node: unknown, value: unknown, root: JsonSchema, depth: number): unknown {
  if (depth > 64 || !isSchemaObject(node)) return value;
  const target = typeof node.$ref === "string" ? safeResolve(root, node.$ref) : node;
  if (!isSchemaObject(target)) return value;
  if (Array.isArray(value)) {
    return target.items === undefined ? value : value.map((v) => strip(target.items, v, root, depth + 1));
  }
  if (!isSchemaObject(value) || !isSchemaObject(target.properties)) return value;
  const properties = target.properties;
  const required = requiredSet(target);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const sub = properties[key];
    if (sub === undefined) {
      out[key] = item;
      continue;
    }
    const resolved = isSchemaObject(sub) && typeof sub.$ref === "string" ? safeResolve(root, sub.$ref) : sub;
    if (item === null && !required.has(key) && !allowsNull(resolved)) continue;
    out[key] = strip(sub, item, root, depth + 1);
  }
  return out;
}

function safeResolve(root: JsonSchema, ref: string): unknown {
  try {
    return resolveLocalRef(root, ref);
  } catch {
    return undefined;
  }
}

/** Check OpenAI's documented strict-mode budgets; throws {@link ConfigurationError} on overrun. */
export function checkOpenAIBudgets(schema: JsonSchema): void {
  const tally = { properties: 0, enumValues: 0, chars: 0, depth: 0 };
  const visit = (node: unknown, depth: number): void => {
    if (!isSchemaObject(node)) return;
    const isObject = isSchemaObject(node.properties);
    const level = isObject ? depth + 1 : depth;
    tally.depth = Math.max(tally.depth, level);
    if (isObject) {
      const names = Object.keys(node.properties as JsonSchema);
      tally.properties += names.length;
      tally.chars += names.reduce((n, k) => n + k.length, 0);
      for (const sub of Object.values(node.properties as JsonSchema)) visit(sub, level);
    }
    if (Array.isArray(node.enum)) {
      tally.enumValues += node.enum.length;
      const chars = node.enum.reduce((n: number, v) => n + String(v).length, 0);
      tally.chars += chars;
      if (
        node.enum.length > OPENAI_STRICT_LIMITS.largeEnumValues &&
        chars > OPENAI_STRICT_LIMITS.largeEnumChars
      ) {
        throw budget(`an enum with ${node.enum.length} values totals ${chars} characters (limit 15,000)`);
      }
    }
    visit(node.items, level);
    if (Array.isArray(node.anyOf)) for (const b of node.anyOf) visit(b, level);
    if (isSchemaObject(node.$defs)) {
      for (const [name, def] of Object.entries(node.$defs)) {
        tally.chars += name.length;
        visit(def, 0);
      }
    }
  };
  visit(schema, 0);
  const limits = OPENAI_STRICT_LIMITS;
  if (tally.properties > limits.totalProperties) throw budget(`${tally.properties} properties (limit 5,000)`);
  if (tally.depth > limits.nestingDepth) throw budget(`${tally.depth} levels of object nesting (limit 10)`);
  if (tally.enumValues > limits.totalEnumValues)
    throw budget(`${tally.enumValues} enum values (limit 1,000)`);
  if (tally.chars > limits.totalChars) throw budget(`${tally.chars} characters of names and enum values`);
}

function budget(message: string): ConfigurationError {
  return new ConfigurationError(`OpenAI strict schema exceeds a size limit: ${message}`);
}
