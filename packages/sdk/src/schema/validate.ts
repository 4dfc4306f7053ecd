/**
 * Input validation for all three schema forms. Standard Schemas validate themselves; raw JSON
 * Schemas go through a small validator that covers what tool inputs use in practice (type,
 * required, properties, additionalProperties, items, enum/const, anyOf/oneOf, numeric and length
 * bounds, pattern, local $ref). It is deliberately not a full JSON Schema implementation: unknown
 * keywords are ignored, which errs on the side of letting the tool's own checks decide.
 */
import type { StandardSchemaV1 } from "../standard-schema.js";
import type { JsonSchema } from "../tool-types.js";
import { isSchemaObject, resolveLocalRef } from "./schema-walk.js";
import { type SchemaSource, schemaKind } from "./to-json-schema.js";

/** One problem found by {@link validateJsonSchema}; same shape as a Standard Schema issue. */
export interface JsonSchemaIssue {
  readonly message: string;
  readonly path: readonly PropertyKey[];
}

/**
 * Validate `value` against any supported schema. Standard Schemas (zod 3.24+, zod 4, valibot…)
 * run their own `validate` and may transform the value; raw JSON Schemas are checked with
 * {@link validateJsonSchema} and return the value unchanged.
 */
export async function validateWith<T = unknown>(
  schema: SchemaSource,
  value: unknown,
): Promise<StandardSchemaV1.Result<T>> {
  const standard = (schema as Partial<StandardSchemaV1<unknown, T>>)["~standard"];
  if (standard !== undefined && typeof standard.validate === "function") {
    return await standard.validate(value);
  }
  if (schemaKind(schema) !== "json-schema") {
    // A zod schema old enough to lack `~standard` (< 3.24): it still has safeParse.
    const parsed = (schema as { safeParse?: (v: unknown) => ZodLikeResult<T> }).safeParse?.(value);
    if (parsed === undefined) return { issues: [{ message: "schema cannot validate values" }] };
    if (parsed.success) return { value: parsed.data as T };
    return { issues: (parsed.error?.issues ?? []).map((i) => ({ message: i.message, path: i.path })) };
  }
  const issues = validateJsonSchema(schema as JsonSchema, value);
  return issues.length === 0 ? { value: value as T } : { issues };
}

interface ZodLikeResult<T> {
  readonly success: boolean;
  readonly data?: T;
  readonly error?: { readonly issues?: ReadonlyArray<{ message: string; path: PropertyKey[] }> };
}

/** Check `value` against a JSON Schema (the subset described in the module comment). */
export function validateJsonSchema(schema: JsonSchema, value: unknown): JsonSchemaIssue[] {
  const issues: JsonSchemaIssue[] = [];
  check(schema, value, [], schema, issues, 0);
  return issues;
}

/**
 * Wrap a JSON Schema as a Standard Schema with the Standard JSON Schema extension, so libraries
 * that take "any Standard Schema" (Vercel AI SDK, Mastra, MCP v2) can use a raw JSON Schema tool.
 */
export function fromJsonSchema<T = unknown>(schema: JsonSchema): StandardSchemaV1<T, T> {
  // A fresh copy per call: consumers post-process what they get (the AI SDK adds
  // `additionalProperties: false` in place), and the tool's own schema must not change under it.
  const forTarget = (options: { readonly target: string }): Record<string, unknown> => {
    const copy = structuredClone(schema);
    // Older dialects read the same keywords we emit; only the dialect marker would be wrong.
    if (options.target !== "draft-2020-12") delete copy.$schema;
    return copy;
  };
  return {
    "~standard": {
      version: 1,
      vendor: "rebuno",
      validate: (value: unknown): StandardSchemaV1.Result<T> => {
        const issues = validateJsonSchema(schema, value);
        return issues.length === 0 ? { value: value as T } : { issues };
      },
      jsonSchema: { input: forTarget, output: forTarget },
    },
  };
}

const MAX_DEPTH = 64;

function check(
  schema: unknown,
  value: unknown,
  path: PropertyKey[],
  root: JsonSchema,
  issues: JsonSchemaIssue[],
  depth: number,
): void {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    issues.push({ message: "no value is allowed here", path });
    return;
  }
  if (!isSchemaObject(schema)) return;
  if (depth > MAX_DEPTH) {
    issues.push({ message: "schema nesting too deep (recursive $ref?)", path });
    return;
  }
  if (typeof schema.$ref === "string") {
    check(resolveLocalRef(root, schema.$ref), value, path, root, issues, depth + 1);
  }
  const before = issues.length;
  checkType(schema, value, path, issues);
  if (issues.length > before) return; // a type mismatch makes every other message noise
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => jsonEqual(e, value))) {
    issues.push({ message: `must be one of ${JSON.stringify(schema.enum)}`, path });
  }
  if ("const" in schema && !jsonEqual(schema.const, value)) {
    issues.push({ message: `must equal ${JSON.stringify(schema.const)}`, path });
  }
  checkUnions(schema, value, path, root, issues, depth);
  if (typeof value === "number") checkNumber(schema, value, path, issues);
  if (typeof value === "string") checkString(schema, value, path, issues);
  if (Array.isArray(value)) {
    checkArrayBounds(schema, value, path, issues);
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : schema.items;
      check(itemSchema, item, [...path, i], root, issues, depth + 1);
    });
  } else if (isSchemaObject(value)) {
    checkObject(schema, value, path, root, issues, depth);
  }
}

function checkType(schema: JsonSchema, value: unknown, path: PropertyKey[], issues: JsonSchemaIssue[]): void {
  const { type } = schema;
  if (type === undefined) return;
  const types = Array.isArray(type) ? type : [type];
  if (!types.some((t) => matchesType(t, value))) {
    issues.push({ message: `expected ${types.join(" | ")}, got ${jsonTypeOf(value)}`, path });
  }
}

function checkUnions(
  schema: JsonSchema,
  value: unknown,
  path: PropertyKey[],
  root: JsonSchema,
  issues: JsonSchemaIssue[],
  depth: number,
): void {
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    const passing = branches.filter((b) => {
      const branchIssues: JsonSchemaIssue[] = [];
      check(b, value, path, root, branchIssues, depth + 1);
      return branchIssues.length === 0;
    }).length;
    if (passing === 0) issues.push({ message: `does not match any allowed shape (${key})`, path });
    else if (key === "oneOf" && passing > 1)
      issues.push({ message: "matches more than one oneOf branch", path });
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) check(part, value, path, root, issues, depth + 1);
  }
}

function checkObject(
  schema: JsonSchema,
  value: Record<string, unknown>,
  path: PropertyKey[],
  root: JsonSchema,
  issues: JsonSchemaIssue[],
  depth: number,
): void {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (typeof key === "string" && !Object.hasOwn(value, key)) {
        issues.push({ message: "required", path: [...path, key] });
      }
    }
  }
  for (const [key, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) {
      check(properties[key], item, [...path, key], root, issues, depth + 1);
    } else if (schema.additionalProperties === false) {
      issues.push({ message: `unexpected property '${key}'`, path: [...path, key] });
    } else if (schema.additionalProperties !== undefined) {
      check(schema.additionalProperties, item, [...path, key], root, issues, depth + 1);
    }
  }
}

function checkNumber(
  schema: JsonSchema,
  value: number,
  path: PropertyKey[],
  issues: JsonSchemaIssue[],
): void {
  const bound = (key: string, ok: (limit: number) => boolean, text: string) => {
    const limit = schema[key];
    if (typeof limit === "number" && !ok(limit)) issues.push({ message: `must be ${text} ${limit}`, path });
  };
  bound("minimum", (l) => value >= l, ">=");
  bound("maximum", (l) => value <= l, "<=");
  bound("exclusiveMinimum", (l) => value > l, ">");
  bound("exclusiveMaximum", (l) => value < l, "<");
  bound("multipleOf", (l) => Number.isInteger(value / l), "a multiple of");
}

function checkString(
  schema: JsonSchema,
  value: string,
  path: PropertyKey[],
  issues: JsonSchemaIssue[],
): void {
  const length = [...value].length; // JSON Schema counts code points, not UTF-16 units
  if (typeof schema.minLength === "number" && length < schema.minLength) {
    issues.push({ message: `must have at least ${schema.minLength} characters`, path });
  }
  if (typeof schema.maxLength === "number" && length > schema.maxLength) {
    issues.push({ message: `must have at most ${schema.maxLength} characters`, path });
  }
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    issues.push({ message: `must match /${schema.pattern}/`, path });
  }
}

function checkArrayBounds(
  schema: JsonSchema,
  value: unknown[],
  path: PropertyKey[],
  issues: JsonSchemaIssue[],
): void {
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    issues.push({ message: `must have at least ${schema.minItems} items`, path });
  }
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    issues.push({ message: `must have at most ${schema.maxItems} items`, path });
  }
}

function matchesType(type: unknown, value: unknown): boolean {
  switch (type) {
    case "object":
      return isSchemaObject(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return true; // unknown type names are not ours to reject
  }
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isInteger(value)) return "integer";
  return typeof value;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
