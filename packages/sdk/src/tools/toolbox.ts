/**
 * `Toolbox`: a class whose `@tool` methods become callable Rebuno tools. `toolbox.tools` is a
 * plain array of `RebunoTool` objects bound to the instance, ready for framework exporters; the
 * toolbox itself iterates over the same tools, so `[...billing]` works too.
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { RebunoTool } from "../tool-types.js";
import { createToolObject } from "./callable.js";
import { bindToolMethod, type ToolMeta, toolMethods } from "./tool-method.js";

/** Tool metadata per class, resolved once (inheritance and overrides applied). */
const classTools = new WeakMap<Function, readonly ToolMeta[]>();

/**
 * Walks the prototype chain from the base class down, so parents' tools come first and an
 * override keeps its parent's position. A method overridden without `@tool` stops being a tool.
 */
function resolveClassTools(proto: object): readonly ToolMeta[] {
  const ctor = (proto as { constructor: Function }).constructor;
  const cached = classTools.get(ctor);
  if (cached !== undefined) return cached;
  const chain: object[] = [];
  for (let p: object | null = proto; p !== null && p !== Toolbox.prototype && p !== Object.prototype; ) {
    chain.push(p);
    p = Object.getPrototypeOf(p);
  }
  const byMethod = new Map<string, ToolMeta>();
  for (let i = chain.length - 1; i >= 0; i--) {
    const level = chain[i] as object;
    for (const key of Object.getOwnPropertyNames(level)) {
      if (key === "constructor") continue;
      const value = Object.getOwnPropertyDescriptor(level, key)?.value;
      const meta = typeof value === "function" ? toolMethods.get(value) : undefined;
      if (meta !== undefined) byMethod.set(key, meta);
      else byMethod.delete(key);
    }
  }
  const list = Object.freeze([...byMethod.values()]);
  const seen = new Map<string, string>();
  for (const meta of list) {
    const other = seen.get(meta.spec.name);
    if (other !== undefined) {
      throw new ConfigurationError(
        `duplicate tool id "${meta.spec.name}" in ${ctor.name}: methods ${other}() and ${meta.methodName}()`,
      );
    }
    seen.set(meta.spec.name, meta.methodName);
  }
  classTools.set(ctor, list);
  return list;
}

/**
 * Base class for decorated toolboxes.
 *
 * @example
 * ```ts
 * import { Toolbox, tool } from "@rebuno/sdk";
 *
 * class Billing extends Toolbox {
 *   @tool("charge", {
 *     idempotency: "at_most_once",
 *     input: { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] },
 *   })
 *   async charge(args: { cents: number }) {
 *     return { ok: true, cents: args.cents };
 *   }
 * }
 * const billing = new Billing();
 * billing.tools.map((t) => t.name); // ["charge"]
 * ```
 */
export class Toolbox implements Iterable<RebunoTool> {
  #tools: readonly RebunoTool[] | undefined;

  constructor() {
    // Each tool method bound to this instance, so a detached `box.search` keeps its `this`
    // (TC39 decorators also do it in an initializer; legacy decorators have no other hook).
    for (const meta of resolveClassTools(Object.getPrototypeOf(this) as object)) {
      const method = (this as unknown as Record<string, unknown>)[meta.methodName];
      if (typeof method === "function") bindToolMethod(this, meta.methodName, method);
    }
  }

  /** This instance's tools, in declaration order (parents first). Built on first access. */
  get tools(): readonly RebunoTool[] {
    if (this.#tools === undefined) {
      const metas = resolveClassTools(Object.getPrototypeOf(this) as object);
      this.#tools = Object.freeze(metas.map((meta) => createToolObject(meta.spec, meta.body, this)));
    }
    return this.#tools;
  }

  /** The tool with kernel id `name`, or undefined. */
  tool(name: string): RebunoTool | undefined {
    return this.tools.find((t) => t.name === name);
  }

  [Symbol.iterator](): Iterator<RebunoTool> {
    return this.tools[Symbol.iterator]();
  }
}

/** The tool metadata a toolbox class declares (for adapters and docs generators). */
export function toolboxMetadata(
  toolbox: Toolbox | (abstract new (...args: never[]) => Toolbox),
): readonly ToolMeta[] {
  const proto = typeof toolbox === "function" ? toolbox.prototype : Object.getPrototypeOf(toolbox);
  return resolveClassTools(proto as object);
}
