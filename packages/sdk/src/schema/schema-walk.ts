/**
 * Small helpers shared by the JSON Schema converters: keyword tables, local `$ref` resolution and
 * draft-07 → 2020-12 normalisation. Kept separate so each provider compiler reads as a list of
 * rules rather than traversal plumbing.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { JsonSchema } from "../tool-types.js";

/** The `$schema` URI of the dialect every canonical tool schema uses. */
export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Keywords whose value is one subschema. */
export const SINGLE_SUBSCHEMA_KEYWORDS = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
] as const;

/** Keywords whose value is an array of subschemas. */
export const ARRAY_SUBSCHEMA_KEYWORDS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;

/** Keywords whose value is a map from names to subschemas. */
export const MAP_SUBSCHEMA_KEYWORDS = [
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
] as const;

/** A plain (non-array) object: the only shape a non-boolean JSON Schema can have. */
export function isSchemaObject(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep copy of JSON data, so converters never mutate a caller's schema. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/** Human-readable JSON-pointer-ish location for error messages (`#/properties/items/items`). */
export function joinPath(path: string, ...segments: string[]): string {
  return [path, ...segments.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1"))].join("/");
}

/**
 * Resolve a local reference (`#`, `#/$defs/x`, `#/definitions/x` or any JSON pointer into `root`).
 * Remote references cannot be followed offline and are refused.
 */
export function resolveLocalRef(root: JsonSchema, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) {
    throw new ConfigurationError(`cannot resolve non-local $ref '${ref}'; inline the schema first`);
  }
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isSchemaObject(node) && !Array.isArray(node)) node = undefined;
    node = (node as Record<string, unknown> | undefined)?.[key];
    if (node === undefined) throw new ConfigurationError(`$ref '${ref}' does not resolve inside the schema`);
  }
  return node;
}

/** True when the schema accepts `null` (type list, `type: "null"`, a null enum member or branch). */
export function allowsNull(schema: unknown): boolean {
  if (!isSchemaObject(schema)) return schema === true;
  const { type } = schema;
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  if ("const" in schema && schema.const === null) return true;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.some(allowsNull)) return true;
  }
  return false;
}

/** The `required` list of an object schema as a set (missing or malformed → empty). */
export function requiredSet(schema: JsonSchema): Set<string> {
  const { required } = schema;
  return new Set(Array.isArray(required) ? required.filter((k): k is string => typeof k === "string") : []);
}

/**
 * Return a shallow copy of `schema` whose subschemas (in every keyword of the tables above) were
 * replaced by `fn(subschema, location)`. Only schema positions are visited, so a property that
 * happens to be called `items` or `definitions` is never mistaken for a keyword.
 */
export function mapSubschemas(
  schema: JsonSchema,
  fn: (subschema: unknown, location: string[]) => unknown,
): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const key of SINGLE_SUBSCHEMA_KEYWORDS) {
    const value = schema[key];
    if (value === undefined) continue;
    // Draft-07 tuple form `items: [...]` is an array of schemas, not one schema.
    out[key] = Array.isArray(value) ? value.map((v, i) => fn(v, [key, String(i)])) : fn(value, [key]);
  }
  for (const key of ARRAY_SUBSCHEMA_KEYWORDS) {
    const value = schema[key];
    if (Array.isArray(value)) out[key] = value.map((v, i) => fn(v, [key, String(i)]));
  }
  for (const key of MAP_SUBSCHEMA_KEYWORDS) {
    const value = schema[key];
    if (!isSchemaObject(value)) continue;
    out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, fn(v, [key, name])]));
  }
  return out;
}

/**
 * A deep copy of `schema` without `$schema` in any schema position. Providers and their strict
 * modes accept only the keywords they document, and a dialect marker is none of them; data
 * keywords (`const`, `enum`, `default`, `examples`) and property names are kept verbatim.
 */
export function withoutDialect(schema: JsonSchema): JsonSchema {
  const strip = (node: unknown): unknown => (isSchemaObject(node) ? withoutDialect(node) : cloneJson(node));
  const { $schema: _dialect, ...rest } = mapSubschemas(schema, strip);
  return rest;
}

/**
 * Rewrite draft-07 spellings (what zod-to-json-schema emits) into draft 2020-12: `definitions` →
 * `$defs` (and the matching `$ref`s), tuple `items: [...]` → `prefixItems`, `additionalItems` →
 * `items`. Returns a new schema.
 */
export function upgradeDraft07(schema: unknown): unknown {
  if (!isSchemaObject(schema)) return schema;
  const out = mapSubschemas(schema, upgradeDraft07);
  if (isSchemaObject(out.definitions)) {
    out.$defs = { ...(isSchemaObject(out.$defs) ? out.$defs : {}), ...out.definitions };
    delete out.definitions;
  }
  if (typeof out.$ref === "string" && out.$ref.startsWith("#/definitions/")) {
    out.$ref = `#/$defs/${out.$ref.slice("#/definitions/".length)}`;
  }
  if (Array.isArray(out.items)) {
    out.prefixItems = out.items;
    if ("additionalItems" in out) out.items = out.additionalItems;
    else delete out.items;
    delete out.additionalItems;
  }
  return out;
}
