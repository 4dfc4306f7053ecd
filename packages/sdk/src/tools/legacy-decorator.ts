/**
 * `@tool` under TypeScript's `experimentalDecorators` (NestJS, Angular, TypeORM codebases): the
 * decorator is then called as `(prototype, key, descriptor)` and returns the descriptor whose
 * value is the same wrapper the TC39 mode installs, so `Toolbox`, frameworks and the runtime see
 * no difference.
 *
 * With `emitDecoratorMetadata`, TypeScript also records the method's parameter and return types
 * (`design:paramtypes`, `design:returntype`) through `reflect-metadata`. When the application has
 * loaded it, the declared input schema is checked against them at class definition: a tool takes
 * one argument object and always returns a Promise. Nothing is imported here: the SDK reads
 * `Reflect.getMetadata` only if the application installed it.
 */
import { ConfigurationError } from "@rebuno/protocol";
import { isSchemaObject } from "../schema/schema-walk.js";
import { buildToolMeta, makeToolWrapper, type ToolMeta, type ToolOptions } from "./tool-method.js";

/** True for a legacy decorator call: `(target, key)` or `(target, key, descriptor)`. */
export function isLegacyCall(args: readonly unknown[]): boolean {
  const key = args[1];
  return (
    args.length >= 2 &&
    (typeof key === "string" || typeof key === "symbol") &&
    (typeof args[0] === "object" || typeof args[0] === "function") &&
    args[0] !== null
  );
}

/** Tool ids per prototype, to refuse two methods with one id while the class is defined. */
const idsByPrototype = new WeakMap<object, Map<string, string>>();

/** Decorates a method the legacy way; returns the descriptor to install. */
export function decorateLegacy(
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor | undefined,
  id: string | undefined,
  options: ToolOptions,
): PropertyDescriptor {
  const member = String(key);
  if (typeof target === "function") {
    throw new ConfigurationError(`@tool can only decorate public instance methods; '${member}' is static`);
  }
  const method = descriptor?.value;
  if (typeof method !== "function") {
    const kind = descriptor?.get || descriptor?.set ? "an accessor" : "a field";
    throw new ConfigurationError(`@tool can only decorate methods, but '${member}' is ${kind}`);
  }
  const meta = buildToolMeta(method, member, id, options);
  checkDesignTypes(target, key, meta);
  let ids = idsByPrototype.get(target);
  if (ids === undefined) idsByPrototype.set(target, (ids = new Map()));
  const other = ids.get(meta.spec.name);
  if (other !== undefined && other !== member) {
    throw new ConfigurationError(
      `duplicate tool id "${meta.spec.name}" in one toolbox: methods ${other}() and ${member}()`,
    );
  }
  ids.set(meta.spec.name, member);
  return { ...descriptor, value: makeToolWrapper(meta, method) };
}

type GetMetadata = (metadataKey: string, target: object, propertyKey: string | symbol) => unknown;

/** Constructors TypeScript emits for primitive parameter types (never an argument object). */
const PRIMITIVES: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [String, "string"],
  [Number, "number"],
  [Boolean, "boolean"],
  [BigInt, "bigint"],
  [Symbol, "symbol"],
  [Array, "an array"],
]);

/**
 * Checks the method's emitted design types against the tool contract. Skipped when
 * `reflect-metadata` is not loaded or the compiler emitted no metadata.
 */
function checkDesignTypes(target: object, key: string | symbol, meta: ToolMeta): void {
  const getMetadata = (Reflect as unknown as { getMetadata?: GetMetadata }).getMetadata;
  if (typeof getMetadata !== "function") return;
  const where = `@tool("${meta.spec.name}") on ${meta.methodName}()`;
  const params = getMetadata.call(Reflect, "design:paramtypes", target, key);
  if (Array.isArray(params)) {
    if (params.length > 1) {
      throw new ConfigurationError(
        `${where}: the method declares ${params.length} parameters, but a tool receives one argument ` +
          "object (what the LLM fills in from the input schema). Put them in one object: " +
          "(args: { a: …; b: … }) with a matching input.",
      );
    }
    const primitive = params.length === 1 ? PRIMITIVES.get(params[0]) : undefined;
    if (primitive !== undefined) {
      throw new ConfigurationError(
        `${where}: the parameter is declared as ${primitive}, but a tool receives one argument object ` +
          `(the input schema's root is type "object"). Declare it as an object, e.g. (args: { value: … }).`,
      );
    }
    const required = requiredProperties(meta);
    if (params.length === 0 && required.length > 0) {
      throw new ConfigurationError(
        `${where}: the input schema requires ${required.map((r) => `'${r}'`).join(", ")}, but the method ` +
          "declares no parameter to receive them. Add (args: { … }) or drop them from input.",
      );
    }
  }
  const returns = getMetadata.call(Reflect, "design:returntype", target, key);
  // `undefined` means no annotation was emitted; `Promise` is what an async method declares.
  if (returns !== undefined && returns !== Promise) {
    const name = typeof returns === "function" ? returns.name : String(returns);
    throw new ConfigurationError(
      `${where}: the method's declared return type is ${name}, but calling a tool always returns a ` +
        "Promise (the call is recorded by the kernel first). Make the method async.",
    );
  }
}

function requiredProperties(meta: ToolMeta): string[] {
  const required = meta.spec.inputSchema.required;
  return isSchemaObject(meta.spec.inputSchema) && Array.isArray(required)
    ? required.filter((r): r is string => typeof r === "string")
    : [];
}
