/**
 * Google Gemini `functionDeclarations`. Gemini has two mutually exclusive fields:
 *
 * - `parameters`: a subset of the OpenAPI 3.0 Schema object (uppercase types, `nullable`, string
 *   enums, no `$ref`, no `additionalProperties`, `anyOf` only as the sole field). This is the
 *   default because every Gemini model and SDK version accepts it; the compiler inlines `$ref`s,
 *   turns null unions into `nullable: true`, `const` into one-value enums, and moves keywords the
 *   subset lacks (`default`, exclusive bounds, unsupported formats) into the description.
 * - `parametersJsonSchema` (`schema: "json-schema"`): real JSON Schema, sent as-is minus `$schema`.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { JsonSchema, RebunoTool } from "../tool-types.js";
import { isSchemaObject, joinPath, requiredSet, resolveLocalRef, withoutDialect } from "./schema-walk.js";
import { toJsonSchema } from "./to-json-schema.js";
import { assignToolNames } from "./tool-names.js";
import { collectTools, type ToolSource } from "./tool-source.js";

/** Options for {@link toGeminiTools}. */
export interface GeminiToolsOptions {
  /** `"openapi"` (default) → `parameters`; `"json-schema"` → `parametersJsonSchema`. */
  readonly schema?: "openapi" | "json-schema";
}

/** One Gemini function declaration. */
export interface GeminiFunctionDeclaration {
  readonly name: string;
  readonly description: string;
  readonly parameters?: JsonSchema;
  readonly parametersJsonSchema?: JsonSchema;
}

/** A Gemini `Tool` holding function declarations. */
export interface GeminiTool {
  readonly functionDeclarations: GeminiFunctionDeclaration[];
}

const GEMINI_TYPES: Record<string, string> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
};

/** Keywords the OpenAPI subset keeps verbatim. */
const KEEP = ["minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern"] as const;
/** Keywords worth telling the model about although the subset cannot carry them. */
const DESCRIBE = ["default", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"] as const;

/**
 * Build the Gemini `tools` entry for every tool: `[{ functionDeclarations: [...] }]`.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { GoogleGenAI } from "@google/genai";
 * import { Toolbox, toGeminiTools, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const ai = new GoogleGenAI({});
 * await ai.models.generateContent({
 *   model: "gemini-2.5-flash",
 *   contents: "Find my invoice",
 *   config: { tools: toGeminiTools(new Billing()) },
 * });
 * ```
 */
export function toGeminiTools(tools: ToolSource, options: GeminiToolsOptions = {}): GeminiTool[] {
  const list = collectTools(tools);
  const names = assignToolNames(
    list.map((t) => t.name),
    { leadingLetter: true },
  );
  const functionDeclarations = list.map((tool): GeminiFunctionDeclaration => {
    const name = names.get(tool.name)!;
    if (options.schema === "json-schema") {
      const parametersJsonSchema = wrap(tool, () => withoutDialect(toJsonSchema(tool.inputSchema)));
      return { name, description: tool.description, parametersJsonSchema };
    }
    return {
      name,
      description: tool.description,
      parameters: wrap(tool, () => toGeminiSchema(tool.inputSchema)),
    };
  });
  return [{ functionDeclarations }];
}

/** Convert one input schema to Gemini's OpenAPI-subset `parameters` schema. */
export function toGeminiSchema(schema: Parameters<typeof toJsonSchema>[0]): JsonSchema {
  const root = toJsonSchema(schema);
  return convert(root, "#", { root, refStack: [] });
}

interface Context {
  readonly root: JsonSchema;
  readonly refStack: string[];
}

function convert(node: unknown, path: string, ctx: Context): JsonSchema {
  if (!isSchemaObject(node)) throw refuse(path, "boolean schemas cannot be expressed");
  for (const keyword of ["not", "if", "then", "else", "patternProperties", "prefixItems"]) {
    if (keyword in node) throw refuse(path, `'${keyword}' is not supported by Gemini parameters`);
  }
  if (typeof node.$ref === "string") return convertRef(node, path, ctx);
  if (Array.isArray(node.allOf)) {
    if (node.allOf.length !== 1) throw refuse(path, "allOf with several parts is not supported; merge them");
    const { allOf, ...rest } = node;
    return convert({ ...(allOf[0] as JsonSchema), ...rest }, path, ctx);
  }
  const hints: string[] = [];
  const union = convertUnion(node, path, ctx);
  if (union !== undefined) return union;

  const { types, nullable } = splitTypes(node);
  if (types.length > 1) {
    // `type: ["string", "number"]` has no OpenAPI spelling except an anyOf of its members.
    return convert(
      { anyOf: types.map((t) => ({ ...node, type: t })), ...(nullable ? { nullable: true } : {}) },
      path,
      ctx,
    );
  }
  const out: JsonSchema = {};
  const type = types[0] ?? inferType(node);
  if (type === undefined) {
    throw refuse(path, "accepts any JSON value; give it a concrete type (zod: avoid z.any/z.unknown)");
  }
  const mapped = GEMINI_TYPES[type];
  if (mapped === undefined) throw refuse(path, `type '${type}' has no Gemini equivalent`);
  out.type = mapped;
  if (nullable || node.nullable === true) out.nullable = true;
  convertEnum(node, out, hints);
  if (typeof node.format === "string") {
    const ok =
      (out.type === "STRING" && node.format === "date-time") ||
      ["int32", "int64", "float", "double"].includes(node.format);
    if (ok) out.format = node.format;
    else hints.push(`format: ${node.format}`);
  }
  for (const key of KEEP) if (node[key] !== undefined) out[key] = node[key];
  for (const key of DESCRIBE) if (node[key] !== undefined) hints.push(`${key}: ${JSON.stringify(node[key])}`);
  if (out.type === "OBJECT") convertObject(node, out, path, ctx);
  if (out.type === "ARRAY") {
    if (!isSchemaObject(node.items)) throw refuse(path, "arrays need an item schema");
    out.items = convert(node.items, joinPath(path, "items"), ctx);
  }
  const description = describe(node.description, hints);
  if (description !== undefined) out.description = description;
  return out;
}

function convertRef(node: JsonSchema, path: string, ctx: Context): JsonSchema {
  const ref = node.$ref as string;
  if (ctx.refStack.includes(ref)) {
    throw refuse(
      path,
      `recursive $ref '${ref}' cannot be inlined; use toGeminiTools(tools, { schema: "json-schema" })`,
    );
  }
  ctx.refStack.push(ref);
  try {
    const { $ref: _ref, ...siblings } = node;
    return convert({ ...(resolveLocalRef(ctx.root, ref) as JsonSchema), ...siblings }, path, ctx);
  } finally {
    ctx.refStack.pop();
  }
}

/** anyOf/oneOf: null branches become `nullable`; one branch left is merged; several stay anyOf. */
function convertUnion(node: JsonSchema, path: string, ctx: Context): JsonSchema | undefined {
  const key = Array.isArray(node.anyOf) ? "anyOf" : Array.isArray(node.oneOf) ? "oneOf" : undefined;
  if (key === undefined) return undefined;
  const branches = node[key] as unknown[];
  const isNull = (b: unknown) => isSchemaObject(b) && b.type === "null" && Object.keys(b).length === 1;
  const rest = branches.filter((b) => !isNull(b));
  const nullable = rest.length < branches.length;
  const { [key]: _union, ...siblings } = node;
  if (rest.length === 1) {
    const merged = convert({ ...(rest[0] as JsonSchema), ...siblings }, path, ctx);
    return nullable ? { ...merged, nullable: true } : merged;
  }
  // Gemini: "When using any_of, it must be the only field set" (nullable excepted).
  const out: JsonSchema = { anyOf: rest.map((b, i) => convert(b, joinPath(path, key, String(i)), ctx)) };
  if (nullable) out.nullable = true;
  return out;
}

function convertObject(node: JsonSchema, out: JsonSchema, path: string, ctx: Context): void {
  const properties = isSchemaObject(node.properties) ? node.properties : {};
  const names = Object.keys(properties);
  if (names.length === 0 && path !== "#") {
    throw refuse(
      path,
      "objects without declared properties (records) are rejected by Gemini parameters; " +
        'use toGeminiTools(tools, { schema: "json-schema" })',
    );
  }
  if (names.length === 0) return; // a tool without arguments: `{ type: "OBJECT" }`
  out.properties = Object.fromEntries(
    names.map((name) => [name, convert(properties[name], joinPath(path, "properties", name), ctx)]),
  );
  // Gemini rejects `required` entries that are not declared properties ("property is not defined").
  const required = [...requiredSet(node)].filter((n) => names.includes(n));
  if (required.length > 0) out.required = required;
  out.propertyOrdering = names;
}

function convertEnum(node: JsonSchema, out: JsonSchema, hints: string[]): void {
  const values = Array.isArray(node.enum) ? node.enum : "const" in node ? [node.const] : undefined;
  if (values === undefined) return;
  const nonNull = values.filter((v) => v !== null);
  if (nonNull.length < values.length) out.nullable = true;
  // Gemini enums are string-only; other literal sets are described instead of mistyped.
  if (nonNull.every((v) => typeof v === "string")) {
    out.type = "STRING";
    out.enum = nonNull;
  } else {
    hints.push(`one of: ${nonNull.map((v) => JSON.stringify(v)).join(", ")}`);
  }
}

function splitTypes(node: JsonSchema): { types: string[]; nullable: boolean } {
  const raw = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  const types = raw.filter((t): t is string => typeof t === "string");
  return { types: types.filter((t) => t !== "null"), nullable: types.includes("null") };
}

function inferType(node: JsonSchema): string | undefined {
  if (isSchemaObject(node.properties)) return "object";
  if (node.items !== undefined) return "array";
  if (Array.isArray(node.enum) || "const" in node) return "string";
  return undefined;
}

function describe(description: unknown, hints: string[]): string | undefined {
  const base = typeof description === "string" && description !== "" ? description : undefined;
  if (hints.length === 0) return base;
  return base === undefined ? `(${hints.join(", ")})` : `${base} (${hints.join(", ")})`;
}

function wrap<T>(tool: RebunoTool, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ConfigurationError) {
      throw new ConfigurationError(`tool '${tool.name}': ${error.message}`, { cause: error });
    }
    throw error;
  }
}

function refuse(path: string, message: string): ConfigurationError {
  return new ConfigurationError(`Gemini schema: at ${path}: ${message}`);
}
