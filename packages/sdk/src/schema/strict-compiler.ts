/**
 * The shared core of the OpenAI-strict and Anthropic-strict schema compilers. Both providers
 * constrain decoding with a grammar built from the schema, so both want closed objects and a
 * known keyword set; they differ in which keywords they keep, whether every property must be
 * required, and whether recursion is allowed. A dialect table captures those differences.
 *
 * The compiler never guesses: a construct the provider cannot express (open records, `not`,
 * conditionals, "any value") is refused with a ConfigurationError naming the schema location,
 * because a silently loosened schema shows up much later as a provider 400 or a wrong argument.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { JsonSchema } from "../tool-types.js";
import { allowsNull, isSchemaObject, joinPath, requiredSet, resolveLocalRef } from "./schema-walk.js";

/** Provider-specific rules for {@link compileStrictSchema}. */
export interface StrictDialect {
  /** Provider name for error messages. */
  readonly provider: string;
  /** OpenAI: every property is listed in `required`; optional ones become nullable. */
  readonly requireAllProperties: boolean;
  /** Scalar keywords copied as they are. */
  readonly keep: ReadonlySet<string>;
  /** Keywords the provider rejects but the model should still hear about: moved into `description`. */
  readonly describe: ReadonlySet<string>;
  /** `format` values the provider understands; others are moved into the description. */
  readonly formats: ReadonlySet<string>;
  /** Whether `$ref` cycles are accepted. */
  readonly allowRecursion: boolean;
  /** Largest `minItems` kept (Anthropic: 1); larger values are described instead. */
  readonly maxMinItems?: number;
}

/** Keywords no strict provider accepts and that cannot be dropped without changing the meaning. */
// A list of pairs rather than an object literal: a `then` key would make the object thenable.
const REFUSED: ReadonlyArray<readonly [keyword: string, advice: string]> = [
  ["allOf", "merge the parts into one object schema (zod: use .extend() instead of .and())"],
  ["not", "express the allowed values positively"],
  ["if", "split the tool or use anyOf"],
  ["then", "split the tool or use anyOf"],
  ["else", "split the tool or use anyOf"],
  ["dependentRequired", "make the fields independent"],
  ["dependentSchemas", "make the fields independent"],
  ["patternProperties", "use fixed property names"],
  ["prefixItems", "use an object instead of a tuple"],
  ["unevaluatedProperties", "use fixed property names"],
  ["$dynamicRef", "use $defs and $ref"],
];

/** Keywords handled structurally below (not copied by the `keep` table). */
const STRUCTURAL = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "oneOf",
  "$ref",
  "$defs",
  "definitions",
  "const",
  "enum",
  "description",
  "$schema",
  "propertyNames",
]);

interface Context {
  readonly dialect: StrictDialect;
  readonly root: JsonSchema;
  readonly refStack: string[];
}

/**
 * Compile a canonical (draft 2020-12) object schema for a strict provider. The input is not
 * modified. The root must be an object; `$defs` are compiled alongside and `#/definitions/…`
 * references are rewritten to `#/$defs/…`.
 */
export function compileStrictSchema(schema: JsonSchema, dialect: StrictDialect): JsonSchema {
  if (schema.type !== "object" || "anyOf" in schema || "oneOf" in schema) {
    throw refuse(dialect, "#", "the root must be a plain object schema (no anyOf/oneOf at the root)");
  }
  const ctx: Context = { dialect, root: schema, refStack: [] };
  const out = compileNode(schema, "#", ctx);
  const defs = { ...asMap(schema.definitions), ...asMap(schema.$defs) };
  if (Object.keys(defs).length > 0) {
    out.$defs = Object.fromEntries(
      Object.entries(defs).map(([name, def]) => [name, compileNode(def, joinPath("#/$defs", name), ctx)]),
    );
  }
  delete out.$schema;
  return out;
}

function compileNode(node: unknown, path: string, ctx: Context): JsonSchema {
  const { dialect } = ctx;
  if (node === false) throw refuse(dialect, path, "the schema `false` accepts no value");
  if (!isSchemaObject(node) || isUnconstrained(node)) {
    throw refuse(
      dialect,
      path,
      "accepts any JSON value; give it a concrete type (zod: avoid z.any/z.unknown)",
    );
  }
  for (const [keyword, advice] of REFUSED) {
    if (keyword in node) throw refuse(dialect, path, `'${keyword}' is not supported: ${advice}`);
  }
  if (typeof node.$ref === "string") return compileRef(node.$ref, path, ctx);

  const out: JsonSchema = {};
  const hints: string[] = [];
  if (node.type !== undefined) out.type = node.type;
  copyEnum(node, out);
  for (const [key, value] of Object.entries(node)) {
    if (STRUCTURAL.has(key)) continue;
    if (key === "format") {
      if (typeof value === "string" && dialect.formats.has(value)) out.format = value;
      else hints.push(`format: ${String(value)}`);
    } else if (
      key === "minItems" &&
      dialect.maxMinItems !== undefined &&
      Number(value) > dialect.maxMinItems
    ) {
      hints.push(`minItems: ${JSON.stringify(value)}`);
    } else if (dialect.keep.has(key)) {
      out[key] = value;
    } else if (dialect.describe.has(key)) {
      hints.push(`${key}: ${JSON.stringify(value)}`);
    }
    // Anything else (examples, $id, $comment, readOnly, vendor x-…) carries no meaning for the
    // model's grammar and is dropped.
  }
  // zod pairs `format: "email"` with a long regex; the format alone says it and keeps grammars small.
  if (out.format !== undefined) delete out.pattern;

  const branches = unionBranches(node, path, dialect);
  if (branches !== undefined) {
    out.anyOf = branches.map((b, i) => compileNode(b, joinPath(path, "anyOf", String(i)), ctx));
  }
  if (isObjectSchema(node)) compileObject(node, out, path, ctx);
  if (node.type === "array" || (Array.isArray(node.type) && node.type.includes("array"))) {
    if (node.items === undefined || node.items === true) {
      throw refuse(dialect, path, "arrays need an item schema (zod: z.array(T) with a concrete T)");
    }
    out.items = compileNode(node.items, joinPath(path, "items"), ctx);
  }
  const description = joinDescription(node.description, hints);
  if (description !== undefined) out.description = description;
  return out;
}

function compileObject(node: JsonSchema, out: JsonSchema, path: string, ctx: Context): void {
  const { dialect } = ctx;
  const properties = asMap(node.properties);
  const names = Object.keys(properties);
  const extra = node.additionalProperties;
  const valueSchema = isSchemaObject(extra) && Object.keys(extra).length > 0;
  const freeForm =
    names.length === 0 &&
    (extra === true || isSchemaObject(extra) || (!("properties" in node) && path !== "#"));
  if (valueSchema || freeForm) {
    throw refuse(
      dialect,
      path,
      "open records and free-form objects (additionalProperties with a schema, z.record, " +
        '{type: "object"} without properties) cannot be strict; list the keys as properties, ' +
        "or pass an array of {key, value} objects",
    );
  }
  // `additionalProperties: true` / `{}` next to declared properties (z.looseObject) is closed:
  // the model may only send the declared keys, which every loose object accepts.
  const required = requiredSet(node);
  const compiled: JsonSchema = {};
  for (const name of names) {
    const sub = compileNode(properties[name], joinPath(path, "properties", name), ctx);
    compiled[name] = dialect.requireAllProperties && !required.has(name) ? makeNullable(sub) : sub;
  }
  out.type = node.type ?? "object";
  out.properties = compiled;
  const requiredOut = dialect.requireAllProperties ? names : names.filter((n) => required.has(n));
  if (requiredOut.length > 0 || dialect.requireAllProperties) out.required = requiredOut;
  out.additionalProperties = false;
}

function compileRef(ref: string, path: string, ctx: Context): JsonSchema {
  const normalized = ref.startsWith("#/definitions/") ? `#/$defs/${ref.slice("#/definitions/".length)}` : ref;
  if (normalized !== "#" && !normalized.startsWith("#/$defs/")) {
    throw refuse(
      ctx.dialect,
      path,
      `$ref '${ref}' must point into $defs (zod: keep the default reused: "inline")`,
    );
  }
  if (!ctx.dialect.allowRecursion) {
    if (ctx.refStack.includes(normalized) || normalized === "#") {
      throw refuse(ctx.dialect, path, `recursive schemas are not supported ($ref '${ref}')`);
    }
    // Walk the target once per reference chain to detect cycles; the $defs copy is compiled
    // separately by compileStrictSchema.
    ctx.refStack.push(normalized);
    try {
      compileNode(resolveLocalRef(ctx.root, ref), path, ctx);
    } finally {
      ctx.refStack.pop();
    }
  } else {
    resolveLocalRef(ctx.root, ref); // fail early on a dangling reference
  }
  return { $ref: normalized };
}

function unionBranches(node: JsonSchema, path: string, dialect: StrictDialect): unknown[] | undefined {
  const anyOf = Array.isArray(node.anyOf) ? node.anyOf : undefined;
  const oneOf = Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (anyOf && oneOf) throw refuse(dialect, path, "anyOf and oneOf on the same schema cannot be combined");
  // zod's discriminatedUnion emits oneOf; its branches are disjoint by the discriminator, so
  // anyOf accepts exactly the same values.
  return anyOf ?? oneOf;
}

function copyEnum(node: JsonSchema, out: JsonSchema): void {
  if (Array.isArray(node.enum)) out.enum = node.enum;
  // const is not in every strict grammar; a one-value enum is, and means the same.
  else if ("const" in node) out.enum = [node.const];
}

/** Let `schema` also accept null, in the most compact form the grammar supports. */
export function makeNullable(schema: JsonSchema): JsonSchema {
  if (allowsNull(schema)) return schema;
  const { type } = schema;
  const simple = typeof type === "string" && !("anyOf" in schema) && !("$ref" in schema);
  if (simple && type !== "object" && type !== "array") {
    const out: JsonSchema = { ...schema, type: [type, "null"] };
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
    return out;
  }
  const { description, ...rest } = schema;
  const wrapped: JsonSchema = { anyOf: [rest, { type: "null" }] };
  if (description !== undefined) wrapped.description = description;
  return wrapped;
}

function isObjectSchema(node: JsonSchema): boolean {
  const { type } = node;
  return (
    type === "object" || (Array.isArray(type) && type.includes("object")) || isSchemaObject(node.properties)
  );
}

function isUnconstrained(node: JsonSchema): boolean {
  return !["type", "enum", "const", "anyOf", "oneOf", "$ref", "properties", "items", "allOf", "not"].some(
    (k) => k in node,
  );
}

function asMap(value: unknown): Record<string, unknown> {
  return isSchemaObject(value) ? value : {};
}

function joinDescription(description: unknown, hints: string[]): string | undefined {
  const base = typeof description === "string" && description !== "" ? description : undefined;
  if (hints.length === 0) return base;
  const extra = `(${hints.join(", ")})`;
  return base === undefined ? extra : `${base} ${extra}`;
}

function refuse(dialect: StrictDialect, path: string, message: string): ConfigurationError {
  return new ConfigurationError(`${dialect.provider} strict schema: at ${path}: ${message}`);
}
