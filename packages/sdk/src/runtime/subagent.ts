/**
 * `subagent()`: start another agent's execution from inside a tool body and use its output as
 * the tool's result. The parent does not hold a worker while the child runs: once every call in
 * flight waits (on a subagent), the execution suspends and the handler reruns after the children
 * settle, replaying their outcomes (protocol §8).
 */
import { Client } from "@rebuno/client";
import { RebunoError, ToolError, ValidationError } from "@rebuno/protocol";
import { frames, kState } from "./context.js";

/** The part of `Client` subagent() uses. */
export interface SubagentClient {
  create(
    agentId: string,
    input?: unknown,
    options?: {
      readonly session?: string;
      readonly idempotencyKey?: string;
      readonly spawnedBy?: { readonly executionId: string; readonly stepId: string };
    },
  ): Promise<unknown>;
}

/** Options of {@link subagent}. */
export interface SubagentOptions {
  /**
   * Session of the child. Children sharing a session run one at a time, each continuing from the
   * last completed one. Must differ from the parent's own session; derive it from the parent's
   * id (`researcher:${execution().id}`) so other parents cannot join it.
   */
  readonly session?: string | undefined;
  /**
   * Client used to create the child; default the agent's `client` option, else `new Client()`
   * from REBUNO_URL / REBUNO_API_KEY.
   */
  readonly client?: SubagentClient | undefined;
}

let defaultClient: SubagentClient | undefined;

/**
 * Runs agent `agentId` as a child of the calling tool's step and returns its output.
 *
 * @throws ToolError when the child failed or was cancelled (message names the reason).
 * @throws Error when called outside a tool or step body.
 * @example
 * ```ts
 * class Research extends Toolbox {
 *   @tool async research(args: { topic: string }) {
 *     return subagent<Summary>("researcher", args, { session: `researcher:${execution().id}` });
 *   }
 * }
 * ```
 */
export async function subagent<T = unknown>(
  agentId: string,
  input?: unknown,
  options: SubagentOptions = {},
): Promise<T> {
  const frame = frames.getStore();
  if (frame === undefined || frame.stepId === undefined) {
    throw new Error(
      `subagent('${agentId}') called outside a tool body. Call it inside a @tool method, defineTool ` +
        "execute or step() body of a running execution.",
    );
  }
  const ctx = frame.ctx;
  const stepId = frame.stepId;
  if (options.session !== undefined && options.session !== "" && options.session === ctx.session) {
    throw new ValidationError(
      `subagent('${agentId}'): the child's session must differ from the parent's session "${ctx.session}" ` +
        "(a child in its parent's session would wait behind its own parent)",
    );
  }
  if (ctx.suspension !== undefined) throw ctx.suspension;
  const state = ctx[kState];
  const client = options.client ?? state.client ?? (defaultClient ??= new Client());
  await client.create(agentId, input, {
    spawnedBy: { executionId: ctx.id, stepId },
    // One step starts at most one child, also when a redelivered safe_to_retry body runs again (G6).
    idempotencyKey: `${ctx.id}:${stepId}`,
    ...(options.session === undefined || options.session === "" ? {} : { session: options.session }),
  });
  // Hand the resource lock back while waiting, so a sibling call queued on it can reach its own
  // wait (or finish) and the execution can suspend (G5/S9).
  const lock = frame.lock?.held === true ? frame.lock : undefined;
  lock?.release();
  const suspended = await state.waitIdle(frame.depth);
  if (suspended) throw ctx.suspension ?? new RebunoError("suspended without a recorded suspension");
  await lock?.take();
  const step = await state.port.getStep(ctx.id, stepId);
  if (step === null) throw new ToolError(`subagent('${agentId}'): step ${stepId} not found`, { stepId });
  if (step.error !== undefined && step.error !== null) {
    const e = step.error as { message?: unknown; reason?: unknown };
    const message =
      typeof e.message === "string" && e.message !== ""
        ? e.message
        : typeof e.reason === "string"
          ? e.reason
          : JSON.stringify(step.error);
    throw new ToolError(message, { toolId: step.target, stepId });
  }
  return (step.result ?? null) as T;
}
