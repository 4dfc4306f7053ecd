/**
 * What every framework adapter shares: calling a RebunoTool with the framework's call id and
 * abort signal, and getting Rebuno's control flow out of frameworks that swallow tool errors.
 *
 * Most agent loops turn a throwing tool into a message for the model and keep looping. For
 * `Blocked` (waiting on an approval), `Terminated`, `LeaseSuperseded`, `RateLimited` and a
 * `PolicyError` escaping a tool body that is wrong: the handler must stop now. Adapters therefore
 * accept a `halt` AbortController: on a control-flow error they abort it with the error as the
 * reason (and still rethrow), the caller hands `halt.signal` to the framework's loop, and
 * {@link haltable} rethrows the original error once the loop unwinds.
 */
import { Blocked, LeaseSuperseded, PolicyError, RateLimited, Terminated } from "@rebuno/protocol";
import type { RebunoTool, ToolCallOptions } from "../tool-types.js";

/** Options every framework adapter accepts. */
export interface AdapterOptions {
  /**
   * Aborted with the error when a tool raises Rebuno control flow (Blocked, Terminated,
   * LeaseSuperseded, RateLimited, PolicyError). Pass its signal to the framework's run.
   */
  readonly halt?: AbortController;
}

/** True for the errors that must end the handler rather than be shown to the model. */
export function isControlFlowError(error: unknown): boolean {
  return (
    Blocked.isInstance(error) ||
    Terminated.isInstance(error) ||
    LeaseSuperseded.isInstance(error) ||
    RateLimited.isInstance(error) ||
    PolicyError.isInstance(error)
  );
}

/**
 * Run a framework loop so that Rebuno control flow raised inside a tool ends it with the original
 * error, even when the framework caught that error or only saw an abort.
 *
 * @example
 * ```ts
 * // example: compile only: it calls a model provider's API
 * import { openai } from "@ai-sdk/openai";
 * import { haltable, Toolbox, toVercelTools, tool } from "@rebuno/sdk";
 * import { generateText, stepCountIs } from "ai";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 * const halt = new AbortController();
 * const tools = toVercelTools(new Billing(), { halt });
 * const result = await haltable(halt, (signal) =>
 *   generateText({ model: openai("gpt-4o-mini"), tools, prompt: "Find my invoice", stopWhen: stepCountIs(5), abortSignal: signal }),
 * );
 * ```
 */
export async function haltable<T>(
  halt: AbortController,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await run(halt.signal);
  } catch (error) {
    if (halt.signal.aborted && isControlFlowError(halt.signal.reason)) throw halt.signal.reason;
    throw error;
  }
  // The framework may have turned the error into a tool message and finished normally.
  if (halt.signal.aborted && isControlFlowError(halt.signal.reason)) throw halt.signal.reason;
  return result;
}

/** Call `tool.execute` with whatever call id and signal the framework provided. */
export async function invokeTool(
  tool: RebunoTool,
  args: unknown,
  call: { readonly toolCallId?: string | undefined; readonly abortSignal?: AbortSignal | undefined },
  options: AdapterOptions,
): Promise<unknown> {
  const callOptions: { toolCallId?: string; abortSignal?: AbortSignal } = {};
  if (call.toolCallId !== undefined) callOptions.toolCallId = call.toolCallId;
  if (call.abortSignal !== undefined) callOptions.abortSignal = call.abortSignal;
  try {
    return await tool.execute(args, callOptions as ToolCallOptions);
  } catch (error) {
    if (isControlFlowError(error) && options.halt !== undefined && !options.halt.signal.aborted) {
      options.halt.abort(error);
    }
    throw error;
  }
}

/** Tool results as text for frameworks whose tool messages are strings. */
export function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  if (result === undefined) return "";
  return JSON.stringify(result);
}
