/**
 * `@tool`: the method decorator that turns a toolbox method into a recorded, policy-governed tool
 * call. It works as a TC39 (stage-3) decorator, the default, and under TypeScript's
 * `experimentalDecorators`, told apart by the arguments it receives (a context object, or
 * `(target, key, descriptor)`); see legacy-decorator.ts for the second mode.
 *
 * Metadata strategy: the decorator returns a wrapper and records `wrapper → ToolMeta` in a
 * WeakMap; `Toolbox` walks the prototype chain to find tools, so inheritance and overriding work
 * on every toolchain. The same entries are mirrored into `context.metadata` (copy on write, own
 * map per class) so duplicate ids are caught while the class is being defined and other
 * libraries can read the list.
 */
import "../polyfill.js";
import { ConfigurationError } from "@rebuno/protocol";
import { assertToolId } from "../tool-spec.js";
import { decorateLegacy, isLegacyCall } from "./legacy-decorator.js";
import {
  bindToolMethod,
  buildToolMeta,
  makeToolWrapper,
  type ToolDecorator,
  type ToolMeta,
  type ToolMethod,
  type ToolOptions,
  toolMethods,
} from "./tool-method.js";

export { type ToolDecorator, type ToolMeta, type ToolMethod, type ToolOptions, toolMethods };

/** Key of the per-class map in `context.metadata` / `Class[Symbol.metadata]`. */
export const TOOLS_METADATA_KEY: unique symbol = Symbol.for("rebuno.tools");

function isMethodContext(value: unknown): value is ClassMemberDecoratorContext {
  return typeof value === "object" && value !== null && "kind" in value && "name" in value;
}

/**
 * Declares a toolbox method as a Rebuno tool. Calling the method (`box.charge(args)`,
 * `this.charge(args)`) submits a `tool_call` step with target = the tool id and args = the single
 * argument object (`this` is never recorded); the body runs only when the kernel says proceed.
 *
 * Forms: `@tool`, `@tool()`, `@tool("id")`, `@tool("id", options)`, `@tool(options)`. The id
 * defaults to the method name and must match `^[a-zA-Z0-9_-]{1,64}$`. Works as a TC39 decorator
 * and under `experimentalDecorators` (detected from the call).
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { Toolbox, tool } from "@rebuno/sdk";
 * import { z } from "zod";
 *
 * const ChargeInput = z.object({ customer: z.string(), cents: z.number().int().positive() });
 * const SearchInput = z.object({ query: z.string() });
 *
 * class Billing extends Toolbox {
 *   @tool("charge", { idempotency: "at_most_once", input: ChargeInput, description: "Charge a card" })
 *   async charge(args: z.infer<typeof ChargeInput>) {
 *     return { charged: args.cents };
 *   }
 *
 *   // No id: the method name ("search"). Every tool declares its input schema.
 *   @tool({ input: SearchInput })
 *   async search(args: z.infer<typeof SearchInput>) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 *
 * const billing = new Billing();
 * await billing.charge({ customer: "c1", cents: 500 }); // a tool_call step "charge"
 * await billing.search({ query: "refund" }); // a tool_call step "search"
 * ```
 */
export function tool<This, M extends ToolMethod>(value: M, context: ClassMethodDecoratorContext<This>): M;
export function tool(target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): void;
export function tool(id?: string, options?: ToolOptions): ToolDecorator;
export function tool(options: ToolOptions): ToolDecorator;
export function tool(...args: unknown[]): unknown {
  if (isMethodContext(args[1])) {
    return decorate(args[0] as Function, args[1], undefined, {});
  }
  if (isLegacyCall(args)) {
    return decorateLegacy(
      args[0] as object,
      args[1] as string | symbol,
      args[2] as PropertyDescriptor | undefined,
      undefined,
      {},
    );
  }
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
  return (...call: unknown[]) => {
    if (isMethodContext(call[1])) return decorate(call[0], call[1], id, options);
    if (isLegacyCall(call)) {
      return decorateLegacy(
        call[0] as object,
        call[1] as string | symbol,
        call[2] as PropertyDescriptor | undefined,
        id,
        options,
      );
    }
    throw new ConfigurationError("@tool must be used as a method decorator");
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
  const meta = buildToolMeta(value, member, id, options);
  recordInMetadata(context.metadata, meta);
  const wrapper = makeToolWrapper(meta, value);
  // Bind per instance, so a detached method (`execute: box.search`, a callback) keeps its `this`.
  const key = context.name;
  context.addInitializer(function (this: unknown) {
    bindToolMethod(this as object, key, value);
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
