/**
 * The description of one callable step target, shared by every tool form (decorated methods,
 * `defineTool`, `wrapTool`) and by `step()`. Built once at definition time so the per-call path
 * only reads fields.
 */
import { ConfigurationError, type PolicyError } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "./standard-schema.js";
import type { Idempotency, JsonSchema } from "./tool-types.js";

/** Provider tool-name rule (OpenAI, Anthropic, Gemini): the kernel id is also the LLM name. */
export const TOOL_ID_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

/** Step kinds the SDK submits. */
export type CallKind = "tool_call" | "local" | "llm_call";

/**
 * Renders a policy denial as a tool result. The default gives the documented
 * `"<name> not allowed. reason: <reason>"`; throw from it to make denials throw instead.
 */
export type DenialFormatter = (toolName: string, error: PolicyError) => unknown;

/** The denial string documented in docs/sdk/tools.md. */
export const defaultDenialFormatter: DenialFormatter = (toolName, error) =>
  `${toolName} not allowed. reason: ${error.reason || error.message}`;

/** What the kernel needs to know about a call, fixed at definition time. */
export interface CallSpec {
  readonly kind: CallKind;
  /** Step target: the tool id, the `step()` name, or the model. */
  readonly target: string;
  readonly idempotency: Idempotency;
  readonly resources: readonly string[];
  /** Validates the argument object before anything is submitted. */
  readonly input?: StandardSchemaV1 | undefined;
  /** Validates the body's result before it is recorded. */
  readonly output?: StandardSchemaV1 | undefined;
  /** How a denial of this call's own submission becomes its result (tools only). */
  readonly formatDenial?: DenialFormatter | undefined;
  /** Maps the body's raw return value before it is recorded (`wrapTool`'s `toResult`). */
  readonly toResult?: ((raw: unknown) => unknown) | undefined;
}

/** A tool's full description: the call spec plus what frameworks read. */
export interface ToolSpec extends CallSpec {
  readonly kind: "tool_call";
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

const IDEMPOTENCY_VALUES: ReadonlySet<string> = new Set(["safe_to_retry", "at_most_once"]);
const RESOURCE_KEY = /^[A-Za-z0-9_.-]{1,128}$/;

/** Throws a ConfigurationError unless `id` is a name every provider accepts. */
export function assertToolId(id: unknown, where: string): asserts id is string {
  if (typeof id !== "string" || !TOOL_ID_PATTERN.test(id)) {
    throw new ConfigurationError(
      `${where}: tool id ${JSON.stringify(id)} is invalid; LLM providers require ^[a-zA-Z0-9_-]{1,64}$ ` +
        `(letters, digits, "_" and "-", at most 64 characters)`,
    );
  }
}

/** Validates and defaults `idempotency`. */
export function checkIdempotency(value: unknown, where: string): Idempotency {
  if (value === undefined) return "safe_to_retry";
  if (typeof value !== "string" || !IDEMPOTENCY_VALUES.has(value)) {
    throw new ConfigurationError(
      `${where}: idempotency must be "safe_to_retry" or "at_most_once", got ${JSON.stringify(value)}`,
    );
  }
  return value as Idempotency;
}

/** Validates `resources` (registered resource keys) and freezes a copy. */
export function checkResources(value: unknown, where: string): readonly string[] {
  if (value === undefined) return EMPTY;
  if (!Array.isArray(value)) throw new ConfigurationError(`${where}: resources must be an array of keys`);
  for (const key of value) {
    if (typeof key !== "string" || !RESOURCE_KEY.test(key)) {
      throw new ConfigurationError(
        `${where}: resource key ${JSON.stringify(key)} is invalid (expected [A-Za-z0-9_.-]{1,128})`,
      );
    }
  }
  return value.length === 0 ? EMPTY : Object.freeze([...value]);
}

const EMPTY: readonly string[] = Object.freeze([]);

/** True for a Standard Schema v1 object (zod ≥ 3.24, valibot, arktype…). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { "~standard"?: { validate?: unknown } })["~standard"]?.validate === "function"
  );
}
