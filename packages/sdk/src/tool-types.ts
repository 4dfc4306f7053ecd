/**
 * The shape every Rebuno tool presents to the outside world: decorated toolbox methods,
 * `defineTool`, `wrapTool` and MCP-wrapped tools all produce this. Framework exporters and
 * provider-schema builders read only these fields, so they work for every kind of tool.
 */
import type { StandardSchemaV1 } from "./standard-schema.js";

/** How the kernel treats a step whose outcome is unknown after a crash. */
export type Idempotency = "safe_to_retry" | "at_most_once";

/** A JSON Schema object (draft 2020-12 unless a provider transform says otherwise). */
export type JsonSchema = { [key: string]: unknown };

/** What frameworks pass to `execute` beside the arguments (all optional). */
export interface ToolCallOptions {
  /** The framework's id for this call (Vercel `toolCallId`, OpenAI `call_id`…), kept for logs. */
  readonly toolCallId?: string;
  /** Aborts when the framework gives up on the call. */
  readonly abortSignal?: AbortSignal;
}

/** A callable tool: kernel id = LLM name. */
export interface RebunoTool<Args = unknown, Out = unknown> {
  /** Kernel step target and the name providers see; matches `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the single argument object (root type `object`). */
  readonly inputSchema: JsonSchema;
  /** The validating schema the tool was declared with, when one was given. */
  readonly input?: StandardSchemaV1<unknown, Args> | undefined;
  readonly output?: StandardSchemaV1<unknown, Out> | undefined;
  readonly idempotency: Idempotency;
  /** Resource keys the tool may change (docs/protocol.md §1.10). */
  readonly resources: readonly string[];
  /**
   * Run the tool as a recorded `tool_call` step: the entry LLM frameworks use. A policy denial
   * resolves to the string `"<name> not allowed. reason: <reason>"` (or the tool's `formatDenial`
   * rendering) so the model can take another path. Code that calls a tool directly calls the
   * tool itself (or the decorated method), where a denial rejects with `ToolError` instead.
   */
  execute(args: Args, options?: ToolCallOptions): Promise<Out | string>;
}
