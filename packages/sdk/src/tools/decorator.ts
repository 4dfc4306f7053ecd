/**
 * `@tool`: TC39 (stage-3) method decorator that turns a toolbox method into a recorded,
 * policy-governed tool call.
 *
 * Metadata strategy: the decorator returns a wrapper and records `wrapper → ToolMeta` in a
 * WeakMap; `Toolbox` walks the prototype chain to find tools, so inheritance and overriding work
 * on every toolchain. The same entries are mirrored into `context.metadata` (copy on write, own
 * map per class) so duplicate ids are caught while the class is being defined and other
 * libraries can read the list.
 */
import "../polyfill.js";
import { ConfigurationError } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "../standard-schema.js";
import type { Idempotency } from "../tool-types.js";
import { callTool } from "./callable.js";
import { describeInput } from "./input-schema.js";
import {
  assertToolId,
  checkIdempotency,
  checkResources,
  type DenialFormatter,
  defaultDenialFormatter,
  isStandardSchema,
  type ToolSpec,
} from "./tool-spec.js";

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
  /** How a policy denial becomes the tool's result (default `"<name> not allowed. reason: <reason>"`). */
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

/** The decorator `@tool(...)` returns. */
export type ToolDecorator = <This, M extends ToolMethod>(
  value: M,
  context: ClassMethodDecoratorContext<This>,
) => M;

/** wrapper function → metadata. Read by Toolbox when it builds its tool list. */
export const toolMethods: WeakMap<Function, ToolMeta> = new WeakMap();

/** Key of the per-class map in `context.metadata` / `Class[Symbol.metadata]`. */
export const TOOLS_METADATA_KEY: unique symbol = Symbol.for("rebuno.tools");

const LEGACY_HINT =
  "@tool is a TC39 standard decorator, but it was called the legacy way (target, key, descriptor). " +
  'Remove "experimentalDecorators" from your tsconfig (esbuild, tsx and vite read it too) and compile ' +
  "with target ES2022–ES2024 (tsc) or es2022 (esbuild). SWC and Oxc-based bundlers need a " +
  "decorator pre-pass; see docs/sdk/tools.md#toolchains.";

function isMethodContext(value: unknown): value is ClassMemberDecoratorContext {
  return typeof value === "object" && value !== null && "kind" in value && "name" in value;
}

function assertNotLegacy(args: readonly unknown[]): void {
  const key = args[1];
  if ((typeof key === "string" || typeof key === "symbol") && args.length >= 2) {
    throw new ConfigurationError(LEGACY_HINT);
  }
}

/**
 * Declares a toolbox method as a Rebuno tool. Calling the method (`box.charge(args)`,
 * `this.charge(args)`) submits a `tool_call` step with target = the tool id and args = the single
 * argument object (`this` is never recorded); the body runs only when the kernel says proceed.
 *
 * Forms: `@tool`, `@tool()`, `@tool("id")`, `@tool("id", options)`, `@tool(options)`. The id
 * defaults to the method name and must match `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @example
 * ```ts
 * class Billing extends Toolbox {
 *   @tool("charge", { idempotency: "at_most_once", input: ChargeInput, description: "Charge a card" })
 *   async charge(args: z.infer<typeof ChargeInput>) { return payments.charge(args); }
 *
 *   @tool async search(args: { query: string }) { return db.search(args.query); }
 * }
 * ```
 */
export function tool<This, M extends ToolMethod>(value: M, context: ClassMethodDecoratorContext<This>): M;
export function tool(id?: string, options?: ToolOptions): ToolDecorator;
export function tool(options: ToolOptions): ToolDecorator;
export function tool(...args: unknown[]): unknown {
  if (isMethodContext(args[1])) {
    return decorate(args[0] as Function, args[1], undefined, {});
  }
  assertNotLegacy(args);
  let id: string | undefined;
  let options: ToolOptions;
  if (typeof args[0] === "string") {
    id = args[0];
    options = (args[1] as ToolOptions | undefined) ?? {};
  } else if (args[0] === undefined) {
    options = {};
  } else if (typeof args[0] === "object" && args[0] !== null && !Array.isArray(args[0])) {
    options = args[0] as ToolOptions;
  } else {
    throw new ConfigurationError(`@tool expects an id string or an options object, got ${typeof args[0]}`);
  }
  if (id !== undefined) assertToolId(id, `@tool("${id}")`);
  return (value: unknown, context: unknown, ...rest: unknown[]) => {
    if (!isMethodContext(context)) {
      assertNotLegacy([value, context, ...rest]);
      throw new ConfigurationError(`@tool must be used as a method decorator. ${LEGACY_HINT}`);
    }
    return decorate(value, context, id, options);
  };
}

function decorate(
  value: unknown,
  context: ClassMemberDecoratorContext,
  id: string | undefined,
  options: ToolOptions,
): Function {
  const member = String(context.name);
  if (context.kind !== "method" || typeof value !== "function") {
    throw new ConfigurationError(`@tool can only decorate methods, but '${member}' is a ${context.kind}`);
  }
  if (context.static || context.private) {
    throw new ConfigurationError(
      `@tool can only decorate public instance methods; '${member}' is ${context.static ? "static" : "private"}`,
    );
  }
  const name = id ?? member;
  const where = `@tool("${name}") on ${member}()`;
  assertToolId(name, where);
  if (options.output !== undefined && !isStandardSchema(options.output)) {
    throw new ConfigurationError(`${where}: output must be a Standard Schema (zod, valibot…)`);
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
  const body = value as ToolMeta["body"];
  const meta: ToolMeta = Object.freeze({ spec, methodName: member, body });
  recordInMetadata(context.metadata, meta);

  const wrapper = function (this: unknown, args?: unknown): Promise<unknown> {
    return callTool(spec, body, this, args);
  };
  // Keep what introspection sees of the original method.
  Object.defineProperty(wrapper, "name", { value: value.name, configurable: true });
  Object.defineProperty(wrapper, "length", { value: value.length, configurable: true });
  toolMethods.set(wrapper, meta);
  // Bind per instance, so a detached method (`execute: box.search`, a callback) keeps its `this`.
  const key = context.name;
  context.addInitializer(function (this: unknown) {
    const self = this as Record<PropertyKey, unknown>;
    if (Object.hasOwn(self, key)) return;
    const current = self[key];
    if (typeof current !== "function") return;
    const bound = current.bind(self);
    Object.defineProperty(bound, "name", { value: value.name, configurable: true });
    Object.defineProperty(bound, "length", { value: value.length, configurable: true });
    Object.defineProperty(self, key, { value: bound, writable: true, configurable: true, enumerable: false });
  });
  return wrapper;
}

type ToolMap = Map<string, ToolMeta>;

/**
 * Adds the tool to this class's own map (copy on write: the metadata object inherits from the
 * parent's, and mutating an inherited map would change the parent's tool list).
 */
function recordInMetadata(metadata: DecoratorMetadataObject | undefined, meta: ToolMeta): void {
  if (metadata === undefined || metadata === null) return;
  const record = metadata as Record<PropertyKey, unknown>;
  let own = Object.hasOwn(record, TOOLS_METADATA_KEY) ? (record[TOOLS_METADATA_KEY] as ToolMap) : undefined;
  if (own === undefined) {
    own = new Map();
    Object.defineProperty(record, TOOLS_METADATA_KEY, { value: own, enumerable: false });
  }
  const id = meta.spec.name;
  for (const other of own.values()) {
    if (other.spec.name === id) {
      throw new ConfigurationError(
        `duplicate tool id "${id}" in one toolbox: methods ${other.methodName}() and ${meta.methodName}()`,
      );
    }
  }
  // An inherited tool with the same id is only fine when this class overrides that same method.
  for (let p = Object.getPrototypeOf(record); p !== null; p = Object.getPrototypeOf(p)) {
    const inherited = Object.hasOwn(p, TOOLS_METADATA_KEY) ? (p[TOOLS_METADATA_KEY] as ToolMap) : undefined;
    if (inherited === undefined) continue;
    for (const other of inherited.values()) {
      if (other.spec.name === id && other.methodName !== meta.methodName) {
        throw new ConfigurationError(
          `duplicate tool id "${id}": ${meta.methodName}() reuses the id of inherited ${other.methodName}(); ` +
            `override ${other.methodName}() instead or pick another id`,
        );
      }
    }
  }
  own.set(meta.methodName, meta);
}
