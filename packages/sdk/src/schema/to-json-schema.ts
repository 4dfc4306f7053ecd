/**
 * One canonical JSON Schema (draft 2020-12, input side) per tool, whatever the author wrote:
 *
 * 1. Standard JSON Schema (`schema["~standard"].jsonSchema.input`): zod ≥ 4.2, and any other
 *    library implementing the extension. Library-neutral, so it is tried first.
 * 2. zod 4 without the extension (zod 4.0/4.1, zod mini): zod's own `toJSONSchema` from
 *    `zod/v4/core`, loaded from the zod the application installed.
 * 3. zod 3 (has `_def` but no `_zod`): the optional peer `zod-to-json-schema`. It must never see a
 *    zod 4 schema: it silently returns `{"$schema": …}` with no properties for those.
 * 4. A plain JSON Schema object, checked minimally and copied.
 *
 * The root must be an object schema: every provider and MCP require it.
 *
 * Optional packages are loaded with `createRequire` so conversion stays synchronous (tools are
 * defined at import time) and resolves from the application's install via peer dependencies.
 */
import { createRequire } from "node:module";
import { ConfigurationError } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "../standard-schema.js";
import type { JsonSchema } from "../tool-types.js";
import { cloneJson, DRAFT_2020_12, isSchemaObject, upgradeDraft07 } from "./schema-walk.js";

/** Anything {@link toJsonSchema} accepts: a Standard Schema, a zod 3/4 schema, or JSON Schema. */
export type SchemaSource = StandardSchemaV1 | JsonSchema;

/** Which converter produced a schema; useful in error messages and tests. */
export type SchemaKind = "standard-json-schema" | "zod4" | "zod3" | "json-schema";

type ZodToJsonSchemaFn = (schema: unknown, options?: Record<string, unknown>) => unknown;
type Zod4ToJsonSchemaFn = (schema: unknown, options?: Record<string, unknown>) => unknown;

const requireFromHere = createRequire(import.meta.url);

/** Classify a schema value without converting it. */
export function schemaKind(schema: unknown): SchemaKind {
  if (!isSchemaObject(schema) && typeof schema !== "function") {
    throw new ConfigurationError(`expected a schema object, got ${schema === null ? "null" : typeof schema}`);
  }
  const record = schema as Record<string, unknown>;
  const standard = record["~standard"] as StandardSchemaV1.Props | undefined;
  if (standard !== undefined && typeof standard.jsonSchema?.input === "function")
    return "standard-json-schema";
  if (isSchemaObject(record._zod)) return "zod4";
  if (isSchemaObject(record._def)) return "zod3";
  if (standard !== undefined) {
    throw new ConfigurationError(
      `the '${standard.vendor}' schema does not expose JSON Schema (Standard JSON Schema); ` +
        "pass a JSON Schema as inputSchema as well",
    );
  }
  return "json-schema";
}

/**
 * Convert a tool's input schema into a draft 2020-12 JSON Schema object (input side: defaulted
 * fields are optional, transforms are ignored). Throws {@link ConfigurationError} for schemas that
 * cannot be converted or whose root is not an object.
 *
 * @example
 * ```ts
 * import { toJsonSchema } from "@rebuno/sdk";
 * import { z } from "zod";
 *
 * toJsonSchema(z.object({ city: z.string() }));
 * // { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object",
 * //   properties: { city: { type: "string" } }, required: ["city"] }
 * ```
 */
export function toJsonSchema(schema: SchemaSource): JsonSchema {
  const kind = schemaKind(schema);
  let converted: unknown;
  try {
    switch (kind) {
      case "standard-json-schema": {
        const props = (schema as StandardSchemaV1)["~standard"];
        converted = props.jsonSchema!.input({ target: "draft-2020-12" });
        break;
      }
      case "zod4":
        converted = loadZod4Converter()(schema, {
          target: "draft-2020-12",
          io: "input",
          unrepresentable: "throw",
          reused: "inline",
        });
        break;
      case "zod3":
        converted = upgradeDraft07(
          loadZod3Converter()(schema, {
            target: "jsonSchema7",
            $refStrategy: "none",
            effectStrategy: "input",
            pipeStrategy: "input",
          }),
        );
        break;
      case "json-schema":
        converted = cloneJson(schema);
        break;
    }
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(
      `cannot convert the ${kind} schema to JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return finishRoot(converted, kind);
}

function finishRoot(converted: unknown, kind: SchemaKind): JsonSchema {
  if (!isSchemaObject(converted)) {
    throw new ConfigurationError(`the ${kind} schema did not convert to a JSON Schema object`);
  }
  if (converted.type !== "object") {
    const got = converted.type === undefined ? "no type" : `type ${JSON.stringify(converted.type)}`;
    const hint = kind === "json-schema" ? "" : " (use z.object({...}) at the root)";
    throw new ConfigurationError(
      `a tool's input schema must have an object root (type: "object"), got ${got}${hint}`,
    );
  }
  // Converters emit their own dialect URI; the canonical form always names 2020-12 except for a
  // hand-written JSON Schema, whose declared dialect is the author's business.
  if (kind !== "json-schema" || converted.$schema === undefined) {
    const { $schema: _drop, ...rest } = converted;
    return { $schema: DRAFT_2020_12, ...rest };
  }
  return converted;
}

function loadZod4Converter(): Zod4ToJsonSchemaFn {
  let core: { toJSONSchema?: Zod4ToJsonSchemaFn };
  try {
    core = requireFromHere("zod/v4/core") as typeof core;
  } catch (error) {
    throw new ConfigurationError(
      "this zod 4 schema has no Standard JSON Schema support and 'zod/v4/core' could not be loaded; " +
        "upgrade zod to >= 4.2",
      { cause: error },
    );
  }
  if (typeof core.toJSONSchema !== "function") {
    throw new ConfigurationError("the installed zod has no toJSONSchema; upgrade zod to >= 4.2");
  }
  return core.toJSONSchema;
}

function loadZod3Converter(): ZodToJsonSchemaFn {
  let mod: { zodToJsonSchema?: ZodToJsonSchemaFn; default?: ZodToJsonSchemaFn };
  try {
    mod = requireFromHere("zod-to-json-schema") as typeof mod;
  } catch (error) {
    throw new ConfigurationError(
      "zod 3 schemas need the optional peer dependency 'zod-to-json-schema' to produce JSON Schema: " +
        "install it (npm i zod-to-json-schema) or upgrade to zod 4",
      { cause: error },
    );
  }
  const fn = mod.zodToJsonSchema ?? mod.default;
  if (typeof fn !== "function") {
    throw new ConfigurationError("'zod-to-json-schema' was found but exports no zodToJsonSchema function");
  }
  return fn;
}
