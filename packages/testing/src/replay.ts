/**
 * Offline replay: run an agent's handler against a recording (from `rebuno exec export` or
 * `Client.exportRecording`) with no kernel and no network. Every submission is answered from
 * the recording by step identity, so tools are not called and `llm_call` steps made through
 * `rebunoFetch` get the recorded HTTP response (streams included, docs/protocol.md §14.3). The
 * result says whether the run followed the recording and, if not, where it left it.
 */
import {
  Blocked,
  canonicalJson,
  failureReason,
  parseRecording,
  RebunoError,
  type RecordedStep,
  type Recording,
  Terminated,
} from "@rebuno/protocol";
import { Agent, ExecutionContext, Result, refusalFromError } from "@rebuno/sdk";
import { type JsonDifference, jsonDiff } from "./json-diff.js";
import { RecordingKernelPort, type ReplayedSubmission } from "./recording-port.js";
import { type ScriptedDecision, ScriptedKernelPort } from "./scripted-port.js";

/** What can be replayed: an agent (any `Agent`, class form or function form) or a bare handler. */
export type ReplayTarget =
  | { run(input: never, ctx: ExecutionContext): unknown }
  | ((input: never, ctx: ExecutionContext) => unknown);

/** Options of {@link replayRecording}. */
export interface ReplayOptions {
  /**
   * Let submissions the recording does not hold run instead of stopping the replay: they are
   * answered like `ToolTestContext` answers them (the scripted decisions given here per target,
   * `"*"` for any; unscripted ones proceed and the tool body runs).
   */
  readonly newSteps?: { readonly script?: Readonly<Record<string, readonly ScriptedDecision[]>> } | undefined;
}

/** How a run ended. */
export type ReplayOutcome =
  | { readonly status: "completed"; readonly output: unknown }
  | { readonly status: "failed"; readonly failureReason: string }
  | { readonly status: "blocked" }
  /** The replay stopped the handler at a submission the recording does not hold. */
  | { readonly status: "stopped" };

/** The first submission whose identity is not in the recording. */
export interface ReplayDivergence {
  /** Position among the run's submissions (0-based). */
  readonly index: number;
  readonly submitted: { readonly kind: string; readonly target: string; readonly args: unknown };
  /** The recorded step due at that point, if any was left. */
  readonly recorded?: { readonly kind: string; readonly target: string; readonly args: unknown } | undefined;
  /** Where the arguments differ (recorded vs submitted). */
  readonly argsDiff: readonly JsonDifference[];
}

/** The result of {@link replayRecording}. */
export interface ReplayResult {
  /** True when no submission left the recording, every recorded step was reached and the outcome is the same. */
  readonly followed: boolean;
  readonly divergence?: ReplayDivergence | undefined;
  /** Recorded steps no submission reached, in recording order. */
  readonly unreached: readonly RecordedStep[];
  readonly recordedOutcome: ReplayOutcome;
  readonly outcome: ReplayOutcome;
  readonly sameOutcome: boolean;
  /** Every submission, in order. */
  readonly submissions: readonly ReplayedSubmission[];
  /** Submissions the recording does not hold that ran under `newSteps`. */
  readonly newSteps: readonly ReplayedSubmission[];
}

/** Thrown by {@link assertFollowsRecording}; the message is the divergence report. */
export class ReplayDivergenceError extends RebunoError {
  static {
    ReplayDivergenceError.prototype.name = "ReplayDivergenceError";
  }
  readonly result: ReplayResult;
  constructor(result: ReplayResult) {
    super(formatReplayReport(result), { code: "replay_diverged" });
    this.result = result;
  }
}

function recordedOutcomeOf(recording: Recording): ReplayOutcome {
  const e = recording.execution;
  if (e.status === "completed") return { status: "completed", output: e.output ?? null };
  if (e.status === "failed") return { status: "failed", failureReason: e.failureReason ?? "" };
  if (e.status === "blocked") return { status: "blocked" };
  return { status: "stopped" };
}

/** The output as the kernel would store it (JSON), in canonical form for comparison. */
function canonical(value: unknown): string {
  return canonicalJson(JSON.parse(JSON.stringify(value ?? null)));
}

function sameOutcome(a: ReplayOutcome, b: ReplayOutcome): boolean {
  if (a.status !== b.status) return false;
  if (a.status === "completed" && b.status === "completed")
    return canonical(a.output) === canonical(b.output);
  if (a.status === "failed" && b.status === "failed") return a.failureReason === b.failureReason;
  return true;
}

async function invoke(target: ReplayTarget, input: unknown, ctx: ExecutionContext): Promise<unknown> {
  if (typeof target === "function")
    return (target as (i: unknown, c: ExecutionContext) => unknown)(input, ctx);
  if (target instanceof Agent && target.inputSchema !== undefined) {
    let checked = target.inputSchema["~standard"].validate(input);
    if (checked instanceof Promise) checked = await checked;
    if (checked.issues === undefined) input = checked.value;
  }
  return (target as { run(i: unknown, c: ExecutionContext): unknown }).run(input, ctx);
}

async function runHandler(target: ReplayTarget, ctx: ExecutionContext): Promise<ReplayOutcome> {
  let value: unknown;
  try {
    value = await ctx.run(() => invoke(target, ctx.input, ctx));
  } catch (thrown) {
    if (Blocked.isInstance(ctx.suspension) || Blocked.isInstance(thrown)) return { status: "blocked" };
    if (Terminated.isInstance(ctx.suspension) || Terminated.isInstance(thrown)) return { status: "stopped" };
    return { status: "failed", failureReason: failureReason(refusalFromError(thrown) ?? thrown) };
  }
  if (Blocked.isInstance(ctx.suspension)) return { status: "blocked" };
  if (Terminated.isInstance(ctx.suspension)) return { status: "stopped" };
  // A denial the handler swallowed still fails the execution, as on a kernel.
  if (ctx.denial !== undefined) return { status: "failed", failureReason: failureReason(ctx.denial) };
  return { status: "completed", output: value instanceof Result ? value.output : (value ?? null) };
}

/**
 * Replay `recording` (a parsed one, or its JSON text) through `agent` offline.
 *
 * @throws RecordingError when the recording is of another format, malformed, or edited.
 * @example
 * ```ts
 * import { Agent, step } from "@rebuno/sdk";
 * import { assertFollowsRecording, replayRecording, TestEnvironment } from "@rebuno/testing";
 *
 * const handler = async (input: { n: number }) => step("double", () => input.n * 2);
 * const env = await TestEnvironment.create({ agents: [(options) => new Agent("doubler", handler, options)] });
 * const { execution } = await env.run("doubler", { n: 21 });
 * const recording = await env.client.exportRecording(execution.id); // what `rebuno exec export` writes
 * await env.teardown();
 *
 * const result = await replayRecording(handler, recording); // no kernel from here on
 * assertFollowsRecording(result);
 * ```
 */
export async function replayRecording(
  agent: ReplayTarget,
  recording: Recording | string,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const rec = parseRecording(recording);
  let scripted: ScriptedKernelPort | undefined;
  if (options.newSteps !== undefined) {
    scripted = new ScriptedKernelPort();
    for (const [target, decisions] of Object.entries(options.newSteps.script ?? {})) {
      scripted.script(target, ...decisions);
    }
  }
  const port = new RecordingKernelPort(rec, scripted);
  const abort = new AbortController();
  const ctx = new ExecutionContext({
    port,
    executionId: rec.execution.id,
    agentId: rec.execution.agentId,
    input: rec.execution.input,
    session: rec.execution.session,
    lease: { dispatchId: "replay", attempt: 1, timeoutMs: 120_000 },
    signal: abort.signal,
    logger: { warn: () => {}, error: () => {} },
  });
  const outcome = await runHandler(agent, ctx);
  abort.abort();
  const recordedOutcome = recordedOutcomeOf(rec);
  const unknown = port.firstUnknown;
  const divergence: ReplayDivergence | undefined =
    unknown === undefined || scripted !== undefined
      ? undefined
      : {
          index: unknown.index,
          submitted: {
            kind: unknown.submission.kind,
            target: unknown.submission.target,
            args: unknown.submission.args,
          },
          recorded:
            unknown.expected === undefined
              ? undefined
              : { kind: unknown.expected.kind, target: unknown.expected.target, args: unknown.expected.args },
          argsDiff: jsonDiff(unknown.expected?.args, unknown.submission.args),
        };
  const unreached = rec.steps.filter((s) => !port.reached.has(s.stepId));
  const same = sameOutcome(recordedOutcome, outcome);
  return {
    followed: divergence === undefined && unreached.length === 0 && same,
    divergence,
    unreached,
    recordedOutcome,
    outcome,
    sameOutcome: same,
    submissions: port.submissions,
    newSteps: port.submissions.filter((s) => !s.recorded),
  };
}

const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
const SHORT = 100;
/** Arguments on a one-line summary: long ones (LLM requests) are cut; the diff lines are not. */
const brief = (v: unknown) => {
  const text = show(v);
  return text.length <= SHORT ? text : `${text.slice(0, SHORT)}…`;
};

function outcomeText(o: ReplayOutcome): string {
  if (o.status === "completed") return `completed ${show(o.output)}`;
  if (o.status === "failed") return `failed: ${o.failureReason}`;
  return o.status;
}

/** A readable account of a replay: "followed the recording", or each way it left it. */
export function formatReplayReport(result: ReplayResult): string {
  if (result.followed) return `followed the recording (${result.submissions.length} steps replayed)`;
  const lines = ["the replay left the recording:"];
  const d = result.divergence;
  if (d !== undefined) {
    lines.push(`  submission #${d.index + 1} is not in the recording`);
    lines.push(
      `    recorded:  ${d.recorded === undefined ? "(no recorded step left)" : `${d.recorded.kind} ${d.recorded.target} ${brief(d.recorded.args)}`}`,
    );
    lines.push(`    submitted: ${d.submitted.kind} ${d.submitted.target} ${brief(d.submitted.args)}`);
    if (d.recorded !== undefined && d.recorded.target !== d.submitted.target) {
      lines.push(`    target: ${d.recorded.target} → ${d.submitted.target}`);
    }
    for (const diff of d.argsDiff) {
      lines.push(`    args ${diff.path}: ${show(diff.recorded)} → ${show(diff.submitted)}`);
    }
  }
  if (result.unreached.length > 0) {
    lines.push(`  ${result.unreached.length} recorded step(s) never reached:`);
    for (const s of result.unreached) lines.push(`    ${s.kind} ${s.target} ${brief(s.args)}`);
  }
  if (!result.sameOutcome) {
    lines.push(
      `  outcome: recorded ${outcomeText(result.recordedOutcome)}, replayed ${outcomeText(result.outcome)}`,
    );
  }
  return lines.join("\n");
}

/** Throws {@link ReplayDivergenceError} (its message is the report) unless the replay followed the recording. */
export function assertFollowsRecording(result: ReplayResult): void {
  if (!result.followed) throw new ReplayDivergenceError(result);
}
