/** Plain-object RebunoTools for tests: no toolbox, no kernel, an execute that does real work. */

import { type SchemaSource, toJsonSchema } from "../../src/schema/index.js";
import type { StandardSchemaV1 } from "../../src/standard-schema.js";
import type { JsonSchema, RebunoTool, ToolCallOptions } from "../../src/tool-types.js";

/** Build a RebunoTool from any schema form; `calls` records every execute invocation. */
export function makeTool<Out>(
  name: string,
  schema: SchemaSource,
  run: (args: Record<string, unknown>, options?: ToolCallOptions) => Out | Promise<Out>,
  extra: { description?: string; idempotency?: RebunoTool["idempotency"] } = {},
): RebunoTool<Record<string, unknown>, Out> & { calls: Array<{ args: unknown; options?: ToolCallOptions }> } {
  const calls: Array<{ args: unknown; options?: ToolCallOptions }> = [];
  const isStandard = "~standard" in schema;
  return {
    name,
    description: extra.description ?? `${name} tool`,
    inputSchema: toJsonSchema(schema),
    input: isStandard ? (schema as StandardSchemaV1<unknown, Record<string, unknown>>) : undefined,
    idempotency: extra.idempotency ?? "safe_to_retry",
    resources: [],
    calls,
    async execute(args, options) {
      calls.push(options === undefined ? { args } : { args, options });
      return await run(args, options);
    },
  };
}

/** Every subschema of `schema` (depth-first), with its JSON-pointer-ish path. */
export function* subschemas(schema: unknown, path = "#"): Generator<[string, JsonSchema]> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
  const node = schema as JsonSchema;
  yield [path, node];
  for (const key of ["items", "additionalProperties", "not"]) {
    if (typeof node[key] === "object") yield* subschemas(node[key], `${path}/${key}`);
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = node[key];
    if (Array.isArray(list)) for (const [i, s] of list.entries()) yield* subschemas(s, `${path}/${key}/${i}`);
  }
  for (const key of ["properties", "$defs"]) {
    const map = node[key];
    if (typeof map === "object" && map !== null) {
      for (const [k, s] of Object.entries(map)) yield* subschemas(s, `${path}/${key}/${k}`);
    }
  }
}
