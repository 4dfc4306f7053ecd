/**
 * Function forms of tools, for code that does not use decorators (Vite 8, SWC, Node type
 * stripping) and for wrapping foreign tools: `defineTool` and `wrapTool`.
 */

import { ConfigurationError } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "../standard-schema.js";
import {
  assertToolId,
  checkIdempotency,
  checkResources,
  type DenialFormatter,
  defaultDenialFormatter,
  isStandardSchema,
  type ToolSpec,
} from "../tool-spec.js";
import type { Idempotency, JsonSchema, RebunoTool, ToolCallOptions } from "../tool-types.js";
import { createToolObject } from "./callable.js";
import { describeInput } from "./input-schema.js";

/**
 * A tool that is also a function. `t(args)` is the direct call from code: it resolves to the
 * tool's result or rejects with `ToolError` (a denial has reason `denied`). `t.execute(args)` is
 * the framework entry: a denial resolves to the denial string the LLM reads.
 */
export type CallableTool<Args = unknown, Out = unknown> = RebunoTool<Args, Out> &
  ((args: Args, options?: ToolCallOptions) => Promise<Out>);

type InferInput<S> = S extends StandardSchemaV1<infer I, unknown> ? I : never;
type InferOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : never;

/** Definition accepted by {@link defineTool}. */
export interface ToolDefinition<Args, Out> {
  /** Kernel id and LLM-visible name (`^[a-zA-Z0-9_-]{1,64}$`). */
  readonly name: string;
  readonly description?: string;
  /** zod / Standard Schema (validated) or JSON Schema (described only). */
  readonly input?: StandardSchemaV1 | JsonSchema;
  /** The official SDK's name for {@link input} (same meaning; pass one of the two). */
  readonly inputSchema?: StandardSchemaV1 | JsonSchema;
  readonly output?: StandardSchemaV1;
  readonly idempotency?: Idempotency;
  readonly resources?: readonly string[];
  readonly formatDenial?: DenialFormatter;
  /** The body; runs only when the kernel says proceed. */
  readonly execute: (args: Args) => Out | Promise<Out>;
}

function buildSpec(
  where: string,
  name: string,
  def: {
    readonly description?: string | undefined;
    readonly input?: unknown;
    readonly output?: unknown;
    readonly idempotency?: Idempotency | undefined;
    readonly resources?: readonly string[] | undefined;
    readonly formatDenial?: DenialFormatter | undefined;
  },
  toResult?: (raw: unknown) => unknown,
): ToolSpec {
  assertToolId(name, where);
  if (def.output !== undefined && !isStandardSchema(def.output)) {
    throw new ConfigurationError(`${where}: output must be a Standard Schema (zod, valibot…)`);
  }
  const described = describeInput(def.input, where);
  return Object.freeze({
    kind: "tool_call",
    target: name,
    name,
    description: def.description ?? "",
    inputSchema: described.jsonSchema,
    input: described.validator,
    output: def.output as StandardSchemaV1 | undefined,
    idempotency: checkIdempotency(def.idempotency, where),
    resources: checkResources(def.resources, where),
    formatDenial: def.formatDenial ?? defaultDenialFormatter,
    toResult,
  });
}

/**
 * Defines a standalone tool.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { defineTool } from "@rebuno/sdk";
 * import { z } from "zod";
 *
 * const inventory = new Map([["A1", { sku: "A1", inStock: 3 }]]);
 * const lookup = defineTool({
 *   name: "lookup",
 *   input: z.object({ sku: z.string() }),
 *   execute: async ({ sku }) => inventory.get(sku) ?? null,
 * });
 * await lookup({ sku: "A1" }); // recorded as a tool_call step
 * ```
 */
export function defineTool<S extends StandardSchemaV1, Out>(
  definition: Omit<ToolDefinition<InferOutput<S>, Out>, "input" | "inputSchema"> & { readonly input: S },
): CallableTool<InferInput<S>, Awaited<Out>>;
export function defineTool<S extends StandardSchemaV1, Out>(
  definition: Omit<ToolDefinition<InferOutput<S>, Out>, "input" | "inputSchema"> & {
    readonly inputSchema: S;
  },
): CallableTool<InferInput<S>, Awaited<Out>>;
export function defineTool<Args = Record<string, unknown>, Out = unknown>(
  definition: ToolDefinition<Args, Out>,
): CallableTool<Args, Awaited<Out>>;
export function defineTool(definition: ToolDefinition<unknown, unknown>): CallableTool {
  const name = definition.name;
  if (typeof definition.execute !== "function") {
    throw new ConfigurationError(`defineTool("${String(name)}"): execute must be a function`);
  }
  const where = `defineTool("${String(name)}")`;
  if (definition.input !== undefined && definition.inputSchema !== undefined) {
    throw new ConfigurationError(`${where}: pass input or inputSchema (the same setting), not both`);
  }
  const spec = buildSpec(where, name, { ...definition, input: definition.input ?? definition.inputSchema });
  const execute = definition.execute;
  return createToolObject(
    spec,
    function (this: unknown, args: never) {
      return execute(args);
    },
    undefined,
  ) as CallableTool;
}

/** Definition accepted by {@link wrapTool}. */
export interface WrapToolDefinition<Args, Raw, Out> {
  readonly name: string;
  /** Calls the foreign tool with the (transformed) arguments. */
  readonly invoke: (args: Args) => Raw | Promise<Raw>;
  readonly description?: string;
  /** JSON Schema (or Standard Schema) of the argument object, passed through to frameworks. */
  readonly inputSchema?: JsonSchema | StandardSchemaV1;
  readonly idempotency?: Idempotency;
  readonly resources?: readonly string[];
  /** Maps the raw return value before it is recorded (default identity). */
  readonly toResult?: (raw: Raw) => Out;
  /** Runs before recording and invoking; its output is recorded (default shallow copy). */
  readonly transformArgs?: (args: Args) => Args;
  readonly formatDenial?: DenialFormatter;
}

function shallowCopy<T>(args: T): T {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? ({ ...args } as T) : args;
}

/**
 * Wraps a non-function tool (a framework object, an MCP tool, a schema-only tool) as a Rebuno
 * tool. `transformArgs` runs first and its output is both recorded and passed to `invoke`;
 * `toResult` maps the raw return before recording.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { wrapTool } from "@rebuno/sdk";
 *
 * // Stands in for a weather API client.
 * const api = {
 *   async weather(city: string) {
 *     return { city, summary: `sunny in ${city}`, raw: {} };
 *   },
 * };
 * const weather = wrapTool({
 *   name: "weather",
 *   inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *   invoke: (args: { city: string }) => api.weather(args.city),
 *   toResult: (raw) => raw.summary,
 * });
 * await weather({ city: "Oslo" }); // "sunny in Oslo", recorded as a tool_call step
 * ```
 */
export function wrapTool<Args = Record<string, unknown>, Raw = unknown, Out = Raw>(
  definition: WrapToolDefinition<Args, Raw, Out>,
): CallableTool<Args, Awaited<Out>> {
  const name = definition.name;
  const where = `wrapTool("${String(name)}")`;
  if (typeof definition.invoke !== "function")
    throw new ConfigurationError(`${where}: invoke must be a function`);
  const spec = buildSpec(
    where,
    name,
    { ...definition, input: definition.inputSchema },
    definition.toResult as ((raw: unknown) => unknown) | undefined,
  );
  const invoke = definition.invoke;
  const transform = definition.transformArgs ?? shallowCopy;
  return createToolObject<Args, Awaited<Out>>(
    spec,
    function (this: unknown, args: never) {
      return invoke(args);
    },
    undefined,
    transform,
  ) as CallableTool<Args, Awaited<Out>>;
}
