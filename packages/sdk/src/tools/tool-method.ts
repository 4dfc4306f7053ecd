/**
 * What both decorator modes share: `@tool`'s options and metadata, the spec built from them at
 * class definition, and the wrapper that replaces the method. TC39 decorators (decorator.ts) and
 * TypeScript's `experimentalDecorators` (legacy-decorator.ts) only differ in how they receive the
 * method and where they put the wrapper.
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
import type { Idempotency } from "../tool-types.js";
import { callTool } from "./callable.js";
import { describeInput } from "./input-schema.js";

/** Options of `@tool`. */
export interface ToolOptions {
  /** `safe_to_retry` (default) re-runs an orphaned call; `at_most_once` fails it as indeterminate. */
  readonly idempotency?: Idempotency;
  /** Registered resource keys this tool may change (default none). */
  readonly resources?: readonly string[];
  /** What the LLM reads about the tool. */
  readonly description?: string;
  /** Schema of the argument object: zod 3/4, any Standard Schema, or a JSON Schema object. */
  readonly input?: StandardSchemaV1 | Readonly<Record<string, unknown>>;
  /** Optional Standard Schema the result must satisfy before it is recorded. */
  readonly output?: StandardSchemaV1;
  /**
   * How a policy denial becomes the result frameworks hand the LLM (`execute`; default
   * `"<name> not allowed. reason: <reason>"`). Direct calls of the method throw `ToolError` instead.
   */
  readonly formatDenial?: DenialFormatter;
}

/** What `@tool` records about one method. */
export interface ToolMeta {
  readonly spec: ToolSpec;
  /** The method's property name on the class. */
  readonly methodName: string;
  /** The undecorated method (called with the instance as `this`). */
  readonly body: (this: unknown, args: never) => unknown;
}

/**
 * The methods `@tool` accepts: async, with at most one parameter (the argument object). The
 * decorated method keeps its exact type.
 */
export type ToolMethod = (args: never) => Promise<unknown>;

/**
 * The decorator `@tool(...)` returns: a TC39 method decorator, or (under `experimentalDecorators`)
 * a legacy one that installs the wrapper through the returned descriptor.
 */
export type ToolDecorator = {
  <This, M extends ToolMethod>(value: M, context: ClassMethodDecoratorContext<This>): M;
  (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): void;
};

/** wrapper function → metadata. Read by Toolbox when it builds its tool list. */
export const toolMethods: WeakMap<Function, ToolMeta> = new WeakMap();

/**
 * Builds the frozen metadata of one decorated method. Throws a ConfigurationError naming the tool
 * for every misuse found at definition time (bad id, output not a schema, parameters without an
 * input schema, bad idempotency or resources, input root not an object).
 */
export function buildToolMeta(
  body: Function,
  member: string,
  id: string | undefined,
  options: ToolOptions,
): ToolMeta {
  const name = id ?? member;
  const where = `@tool("${name}") on ${member}()`;
  assertToolId(name, where);
  if (options.output !== undefined && !isStandardSchema(options.output)) {
    throw new ConfigurationError(`${where}: output must be a Standard Schema (zod, valibot…)`);
  }
  if (options.input === undefined && body.length > 0) {
    throw new ConfigurationError(
      `${where}: the method takes an argument object but declares no input schema, so LLMs would ` +
        `be told the tool takes no parameters. Add \`input\` to the options, e.g. ` +
        `@tool("${name}", { input: z.object({ ... }) }) (zod, any Standard Schema, or a JSON Schema ` +
        "object), or remove the parameter if the tool takes none.",
    );
  }
  const described = describeInput(options.input, where);
  const spec: ToolSpec = Object.freeze({
    kind: "tool_call",
    target: name,
    name,
    description: options.description ?? "",
    inputSchema: described.jsonSchema,
    input: described.validator,
    output: options.output,
    idempotency: checkIdempotency(options.idempotency, where),
    resources: checkResources(options.resources, where),
    formatDenial: options.formatDenial ?? defaultDenialFormatter,
  });
  return Object.freeze({ spec, methodName: member, body: body as ToolMeta["body"] });
}

/** The function that replaces a decorated method; registered in {@link toolMethods}. */
export function makeToolWrapper(meta: ToolMeta, original: Function): Function {
  const { spec, body } = meta;
  const wrapper = function (this: unknown, args?: unknown): Promise<unknown> {
    // A direct call from code: a denial throws ToolError (reason "denied"), so the method's
    // declared return type holds; frameworks call `toolbox.tools[i].execute`, which returns it.
    return callTool(spec, body, this, args, undefined, "throw");
  };
  // Keep what introspection sees of the original method.
  Object.defineProperty(wrapper, "name", { value: original.name, configurable: true });
  Object.defineProperty(wrapper, "length", { value: original.length, configurable: true });
  toolMethods.set(wrapper, meta);
  return wrapper;
}

/** `instance[key]` bound to the instance, so a detached method keeps its `this`. */
export function bindToolMethod(instance: object, key: PropertyKey, original: Function): void {
  const self = instance as Record<PropertyKey, unknown>;
  if (Object.hasOwn(self, key)) return;
  const current = self[key];
  if (typeof current !== "function") return;
  const bound = current.bind(self);
  Object.defineProperty(bound, "name", { value: original.name, configurable: true });
  Object.defineProperty(bound, "length", { value: original.length, configurable: true });
  Object.defineProperty(self, key, { value: bound, writable: true, configurable: true, enumerable: false });
}
