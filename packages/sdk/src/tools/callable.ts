/**
 * Builds the callable `RebunoTool` object every tool form hands to frameworks, and the entry
 * point a tool call takes into the runtime.
 */

import { type CallBody, type DenialMode, runCall } from "../runtime/call.js";
import { frames, OUTSIDE_HINT } from "../runtime/context.js";
import type { ToolSpec } from "../tool-spec.js";
import type { RebunoTool, ToolCallOptions } from "../tool-types.js";

/**
 * Runs a tool call in the active execution. `denialMode` `"throw"` is for direct calls from
 * code (decorated methods, `tool(args)`), `"result"` for `execute`, the entry frameworks use.
 *
 * @throws Error when no execution is active (the message says how to fix it).
 */
export function callTool(
  spec: ToolSpec,
  body: CallBody,
  self: unknown,
  args: unknown,
  options: ToolCallOptions | undefined,
  denialMode: DenialMode,
): Promise<unknown> {
  // A framework that already gave up on this call (its abort signal fired) must not start a
  // recorded effect: nothing is submitted, so nothing is left for the kernel to replay or orphan.
  if (options?.abortSignal?.aborted === true) return Promise.reject(options.abortSignal.reason);
  const frame = frames.getStore();
  if (frame === undefined) {
    return Promise.reject(
      new Error(
        `tool '${spec.name}' called outside an active execution. Tools run inside a handler under ` +
          `agent.serve()/agent.fetch (or a test context). ${OUTSIDE_HINT}`,
      ),
    );
  }
  return runCall(frame, spec, args === undefined ? {} : args, body, self, denialMode);
}

/**
 * Makes the callable tool object. `tool.execute(args)` is what frameworks call: a policy denial
 * resolves to the tool's denial rendering for the LLM. `tool(args)` is the direct call from code:
 * a denial rejects with `ToolError` (reason `denied`), so the result type stays the tool's own.
 * Properties are own and enumerable, so `{ ...tool }` keeps `name`, `description` and `inputSchema`.
 *
 * @param prepare maps the caller's argument before recording (wrapTool's `transformArgs`).
 */
export function createToolObject<Args, Out>(
  spec: ToolSpec,
  body: CallBody,
  self: unknown,
  prepare?: (args: Args) => unknown,
): RebunoTool<Args, Out> {
  const execute =
    prepare === undefined
      ? (args: Args, options?: ToolCallOptions) => callTool(spec, body, self, args, options, "result")
      : (args: Args, options?: ToolCallOptions) =>
          callTool(spec, body, self, prepare(args), options, "result");
  const call =
    prepare === undefined
      ? (args: Args, options?: ToolCallOptions) => callTool(spec, body, self, args, options, "throw")
      : (args: Args, options?: ToolCallOptions) =>
          callTool(spec, body, self, prepare(args), options, "throw");
  const enumerable = (value: unknown): PropertyDescriptor => ({
    value,
    enumerable: true,
    configurable: true,
  });
  Object.defineProperties(call, {
    name: enumerable(spec.name),
    description: enumerable(spec.description),
    inputSchema: enumerable(spec.inputSchema),
    input: enumerable(spec.input),
    output: enumerable(spec.output),
    idempotency: enumerable(spec.idempotency),
    resources: enumerable(spec.resources),
    execute: enumerable(execute),
  });
  return call as unknown as RebunoTool<Args, Out>;
}
