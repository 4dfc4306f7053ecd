/**
 * One dispatch of one execution: read it, run the handler under the lease heartbeat inside an
 * execution context, and map the outcome to exactly one kernel write (or none), as
 * docs/sdk/agents.md (What the agent writes) lists.
 */
import { type AgentTransport, LeaseKeeper, SubmissionOutcomeUnknown } from "@rebuno/kernel-transport";
import {
  Blocked,
  ForbiddenError,
  failureReason,
  LeaseSuperseded,
  PolicyError,
  RateLimited,
  RawJson,
  Terminated,
  ToolError,
  TransportError,
  toWireJson,
} from "@rebuno/protocol";
import { ExecutionContext, runUntilSuspended } from "../runtime/context.js";
import type { KernelPort } from "../runtime/kernel-port.js";
import type { Logger } from "../runtime/logger.js";
import { checkpointOnCompletion } from "../runtime/resource.js";
import type { SubagentClient } from "../runtime/subagent.js";
import { formatIssues, toValidationIssues } from "../runtime/validate.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import { refusalFromError } from "./refusal.js";
import { Result } from "./result.js";
import type { WebhookDelivery } from "./webhook.js";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** What a dispatch needs from its agent. */
export interface DispatchHost {
  readonly id: string;
  readonly logger: Logger;
  readonly inputSchema: StandardSchemaV1 | undefined;
  readonly client: SubagentClient | undefined;
  invoke(input: unknown, ctx: ExecutionContext): unknown;
  /** Event-loop stall warning threshold in ms (`false` disables; default: the keeper's). */
  readonly loopStallWarnMs?: number | false | undefined;
  /** A signed delivery named an execution of another agent; it is not run. */
  onForeignExecution?(executionId: string, ownerAgentId: string | undefined): void;
}

/** A run in progress, as the agent tracks it for dedupe and supersede. */
export interface RunningDispatch {
  readonly delivery: WebhookDelivery;
  readonly controller: AbortController;
  done: Promise<void>;
}

function isQuietStop(error: unknown): boolean {
  return (
    Blocked.isInstance(error) ||
    Terminated.isInstance(error) ||
    LeaseSuperseded.isInstance(error) ||
    SubmissionOutcomeUnknown.isInstance(error)
  );
}

function logError(logger: Logger, message: string, fields: Record<string, unknown>): void {
  (logger.error ?? logger.warn).call(logger, message, fields);
}

/** Runs one delivery to completion; never throws (errors are logged). */
export async function runDispatch(
  host: DispatchHost,
  base: AgentTransport,
  run: RunningDispatch,
): Promise<void> {
  const { executionId, dispatchId, attempt, leaseTimeoutMs } = run.delivery;
  const lease = { dispatchId, attempt, timeoutMs: leaseTimeoutMs };
  const leaseTransport = base.withSignal(run.controller.signal);
  let keeper: LeaseKeeper | undefined;
  try {
    const execution = await leaseTransport.getExecution(executionId).catch((error: unknown) => {
      // A v1 kernel refuses another agent's execution with 403 (the legacy one answers it).
      if (ForbiddenError.isInstance(error)) return undefined;
      throw error;
    });
    if (execution === undefined) {
      host.onForeignExecution?.(executionId, undefined);
      return;
    }
    if (TERMINAL.has(execution.status)) return;
    // Two agents sharing one webhook URL and secret: never run (or fail) another agent's work.
    if (execution.agentId !== host.id) {
      host.onForeignExecution?.(executionId, execution.agentId);
      return;
    }
    keeper = new LeaseKeeper({
      transport: leaseTransport,
      executionId,
      lease,
      logger: host.logger,
      ...(host.loopStallWarnMs === false
        ? { loopDelay: false as const }
        : { loopDelayWarnMs: host.loopStallWarnMs }),
    });
    keeper.start();
    // Cancellation seen on a decision aborts the run's signal too (frameworks stop early).
    const cancelled = new AbortController();
    const signal = AbortSignal.any([run.controller.signal, keeper.signal, cancelled.signal]);
    // keeper.transport refuses calls once the lease is lost, and a LeaseSuperseded or an
    // unknown-outcome submission seen by any call ends the lease for the whole run.
    const transport = keeper.transport;
    const port: KernelPort = transport;
    const ctx = new ExecutionContext({
      port,
      executionId,
      agentId: host.id,
      input: execution.input,
      lease,
      session: execution.session ?? undefined,
      status: execution.status,
      signal,
      logger: host.logger,
      onCurrentStep: (label) => keeper?.setCurrentStep(label),
      client: host.client,
      onTerminal: (reason) => cancelled.abort(reason),
    });
    await ctx.run(() => handle(host, ctx, transport));
  } catch (error) {
    if (isQuietStop(error) || run.controller.signal.aborted || keeper?.lost === true) return;
    if (TransportError.isInstance(error)) {
      // The kernel stayed unreachable for as long as the lease-bound calls kept retrying: the
      // execution did not fail, so it is not failed. Without heartbeats the lease expires and the
      // kernel redelivers; the next attempt replays every recorded step.
      host.logger.warn(`kernel unreachable; leaving execution ${executionId} to redelivery`, {
        executionId,
        dispatchId,
        error: error.message,
      });
      keeper?.abandon(error);
      return;
    }
    logError(host.logger, `unhandled error handling execution ${executionId}`, { error: String(error) });
  } finally {
    keeper?.stop();
  }
}

async function handle(host: DispatchHost, ctx: ExecutionContext, transport: AgentTransport): Promise<void> {
  let input = ctx.input;
  if (host.inputSchema !== undefined) {
    let checked = host.inputSchema["~standard"].validate(input);
    if (checked instanceof Promise) checked = await checked;
    if (checked.issues !== undefined) {
      await transport.failExecution(
        ctx.id,
        ctx.lease,
        `input_invalid: ${formatIssues(toValidationIssues(checked.issues))}`,
      );
      return;
    }
    input = checked.value;
  }
  let value: unknown;
  try {
    // A call that blocks parks the handler (no user catch can swallow it) and ends this await.
    value = await runUntilSuspended(ctx, () => host.invoke(input, ctx));
  } catch (error) {
    await onHandlerError(host, ctx, transport, error);
    return;
  }
  if (ctx.suspension !== undefined || ctx.signal.aborted) return;
  if (ctx.denial !== undefined) {
    // G12: a denial a framework swallowed still fails the execution.
    await transport.failExecution(ctx.id, ctx.lease, failureReason(ctx.denial));
    return;
  }
  await checkpointOnCompletion(ctx);
  const result = value instanceof Result ? value : undefined;
  let output: RawJson;
  let state: RawJson | undefined;
  try {
    // Serialize before completing (G14): a bad output fails once instead of looping redeliveries.
    output = new RawJson(toWireJson(result ? result.output : value, "output"));
    const s = result?.state;
    state = s === undefined || s === null ? undefined : new RawJson(toWireJson(s, "state"));
  } catch (error) {
    await transport.failExecution(ctx.id, ctx.lease, failureReason(error));
    return;
  }
  try {
    await transport.completeExecution(
      ctx.id,
      ctx.lease,
      state === undefined ? { output } : { output, state },
    );
  } catch (error) {
    if (!Terminated.isInstance(error)) throw error;
  }
}

async function onHandlerError(
  host: DispatchHost,
  ctx: ExecutionContext,
  transport: AgentTransport,
  thrown: unknown,
): Promise<void> {
  // Anything thrown after a (possibly swallowed) block or termination is that suspension.
  if (ctx.suspension !== undefined || isQuietStop(thrown) || ctx.signal.aborted) return;
  // A kernel call that found no kernel (NetworkError, TimeoutError) is no failure of the
  // execution: runDispatch leaves it to redelivery instead of recording `failed`.
  if (TransportError.isInstance(thrown)) throw thrown;
  let error = thrown;
  const refusal = refusalFromError(thrown);
  if (refusal !== undefined) {
    if (isQuietStop(refusal)) return;
    error = refusal;
  }
  if (!PolicyError.isInstance(error) && !ToolError.isInstance(error) && !RateLimited.isInstance(error)) {
    logError(host.logger, `process error execution_id=${ctx.id}`, { error: String(error) });
  }
  try {
    await transport.failExecution(ctx.id, ctx.lease, failureReason(error));
  } catch (writeError) {
    if (!Terminated.isInstance(writeError)) throw writeError;
  }
}
