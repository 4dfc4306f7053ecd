/**
 * `subagent()`: start another agent's execution from inside a tool body and use its output as
 * the tool's result. The parent does not hold a worker while the child runs: once every call in
 * flight waits (on a subagent), the execution suspends and the handler reruns after the children
 * settle, replaying their outcomes (docs/protocol.md §8).
 */
import { Client } from "@rebuno/client";
import { RebunoError, ToolError, ValidationError } from "@rebuno/protocol";
import { haltIn } from "./call.js";
import { frames, kState } from "./context.js";
import type { SubagentClient } from "./kernel-port.js";
import { toolErrorFromRecord } from "./tool-failure.js";

export type { SubagentClient };

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
 * @throws ToolError when the child failed or was cancelled: `reason` is `subagent_failed` or
 *   `subagent_cancelled`, `childExecutionId` and `childError` (its failure reason) are set.
 * @throws Error when called outside a tool or step body.
 * @example
 * ```ts
 * import { Agent, execution, subagent, Toolbox, tool } from "@rebuno/sdk";
 * import { TestEnvironment } from "@rebuno/testing";
 *
 * interface Summary {
 *   readonly topic: string;
 *   readonly points: readonly string[];
 * }
 *
 * class Research extends Toolbox {
 *   @tool("research", { input: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] } })
 *   async research(args: { topic: string }) {
 *     return subagent<Summary>("researcher", args, { session: `researcher:${execution().id}` });
 *   }
 * }
 *
 * class Researcher extends Agent<{ topic: string }, Summary> {
 *   static override id = "researcher";
 *   override async run(input: { topic: string }) {
 *     return { topic: input.topic, points: [`${input.topic} in one line`] };
 *   }
 * }
 *
 * class Lead extends Agent<{ topic: string }, Summary> {
 *   static override id = "lead";
 *   readonly research = new Research();
 *   override async run(input: { topic: string }) {
 *     return this.research.research(input);
 *   }
 * }
 *
 * const env = await TestEnvironment.create({ agents: [Lead, Researcher] });
 * const { output } = await env.run(Lead, { topic: "tides" }); // { topic: "tides", points: [...] }
 * await env.teardown();
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
  if (ctx.suspension !== undefined) return haltIn(frame, ctx.suspension);
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
  if (suspended) {
    if (ctx.suspension === undefined) throw new RebunoError("suspended without a recorded suspension");
    return haltIn(frame, ctx.suspension);
  }
  await lock?.take();
  const step = await state.port.getStep(ctx.id, stepId);
  if (step === null) throw new ToolError(`subagent('${agentId}'): step ${stepId} not found`, { stepId });
  if (step.error !== undefined && step.error !== null) {
    // The same mapping a replay of this step uses, so the rerun throws the identical error.
    throw toolErrorFromRecord(step.error, step.target, stepId);
  }
  return (step.result ?? null) as T;
}
