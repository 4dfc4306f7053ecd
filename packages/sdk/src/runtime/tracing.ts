/**
 * OpenTelemetry spans for a dispatch and its recorded calls (docs/observability.md). The API is an
 * optional peer: it is loaded on the first dispatch, and when it is missing, or no tracer provider
 * is registered (the first span of a dispatch does not record), the dispatch carries no trace and
 * every call skips tracing with one `undefined` check.
 *
 * Every span of an execution is parented under one remote span context derived from the execution
 * id (docs/observability.md §2), so every process that runs or calls it writes into one trace.
 */
import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";
import { executionSpanContext, ToolError } from "@rebuno/protocol";
import type { CallSpec } from "../tool-spec.js";
import type { StepDecisionLike } from "./kernel-port.js";

type Api = typeof OtelApi;

const requireFromHere = createRequire(import.meta.url);

interface Loaded {
  readonly api: Api;
  /** The API's no-op provider: the global provider's delegate until one is registered. */
  readonly noop: OtelApi.TracerProvider;
}
let loaded: Loaded | null | undefined;

/** The OpenTelemetry API when installed and a tracer provider is registered, else null. */
function activeApi(): Api | null {
  if (loaded === undefined) {
    try {
      const api = requireFromHere("@opentelemetry/api") as Api;
      loaded = { api, noop: new api.ProxyTracerProvider().getDelegate() };
    } catch {
      loaded = null;
    }
  }
  if (loaded === null) return null;
  const provider = loaded.api.trace.getTracerProvider() as OtelApi.ProxyTracerProvider;
  return provider.getDelegate() === loaded.noop ? null : loaded.api;
}

const SCOPE = "@rebuno/sdk";
/** Opt-in content capture: the GenAI conventions' switch (docs/observability.md §4). */
const CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
/** Captured arguments and results are cut to this many characters. */
export const CAPTURE_LIMIT = 4096;

function captureEnabled(): boolean {
  const value = typeof process === "undefined" ? undefined : process.env[CAPTURE_ENV];
  return value !== undefined && /^(1|true)$/i.test(value);
}

const capped = (text: string) => (text.length > CAPTURE_LIMIT ? text.slice(0, CAPTURE_LIMIT) : text);

/** The remote parent every span of `executionId` starts under. */
function executionContext(a: Api, executionId: string): OtelApi.Context {
  return a.trace.setSpanContext(a.ROOT_CONTEXT, executionSpanContext(executionId));
}

/** What a dispatch span is told about the dispatch. */
export interface DispatchInfo {
  readonly executionId: string;
  readonly agentId: string;
  readonly dispatchId: string;
  readonly attempt: number;
  /** The parent execution and step when this execution is a subagent. */
  readonly spawnedBy?: { readonly executionId: string; readonly stepId: string } | undefined;
}

/** The `invoke_agent` span of one dispatch attempt, and the factory of its calls' spans. */
export class DispatchTrace {
  private constructor(
    private readonly a: Api,
    private readonly tracer: OtelApi.Tracer,
    private readonly span: OtelApi.Span,
    private readonly context: OtelApi.Context,
    readonly executionId: string,
    readonly attempt: number,
    readonly captureContent: boolean,
  ) {}

  /** Starts the dispatch span, or returns undefined when tracing is off (no API, no provider). */
  static start(info: DispatchInfo): DispatchTrace | undefined {
    const a = activeApi();
    if (a === null) return undefined;
    const tracer = a.trace.getTracer(SCOPE);
    const links =
      info.spawnedBy === undefined
        ? undefined
        : [
            {
              context: executionSpanContext(info.spawnedBy.executionId),
              attributes: { "rebuno.link": "parent_step", "rebuno.step.id": info.spawnedBy.stepId },
            },
          ];
    const span = tracer.startSpan(
      `invoke_agent ${info.agentId}`,
      {
        kind: a.SpanKind.SERVER,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.id": info.agentId,
          "gen_ai.agent.name": info.agentId,
          "rebuno.execution.id": info.executionId,
          "rebuno.dispatch.id": info.dispatchId,
          "rebuno.dispatch.attempt": info.attempt,
          ...(info.spawnedBy === undefined
            ? {}
            : {
                "rebuno.parent.execution.id": info.spawnedBy.executionId,
                "rebuno.parent.step.id": info.spawnedBy.stepId,
              }),
        },
        ...(links === undefined ? {} : { links }),
      },
      executionContext(a, info.executionId),
    );
    if (!span.isRecording()) {
      span.end();
      return undefined;
    }
    const context = a.trace.setSpan(a.ROOT_CONTEXT, span);
    return new DispatchTrace(a, tracer, span, context, info.executionId, info.attempt, captureEnabled());
  }

  /** Starts the span of one recorded call under `parent` (an enclosing call) or this dispatch. */
  startCall(spec: CallSpec, argsText: string, parent: CallTrace | undefined): CallTrace {
    const a = this.a;
    const attributes: OtelApi.Attributes = {
      "rebuno.execution.id": this.executionId,
      "rebuno.dispatch.attempt": this.attempt,
      "rebuno.step.kind": spec.kind,
      "rebuno.step.idempotency": spec.idempotency,
    };
    if (spec.resources.length > 0) attributes["rebuno.resources"] = [...spec.resources];
    let name: string;
    if (spec.kind === "tool_call") {
      name = `execute_tool ${spec.target}`;
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = spec.target;
      attributes["gen_ai.tool.type"] = "function";
      const description = (spec as { description?: unknown }).description;
      if (typeof description === "string" && description !== "")
        attributes["gen_ai.tool.description"] = description;
      if (this.captureContent) attributes["gen_ai.tool.call.arguments"] = capped(argsText);
    } else if (spec.kind === "llm_call") {
      name = `chat ${spec.target}`;
      attributes["gen_ai.operation.name"] = "chat";
      attributes["gen_ai.request.model"] = spec.target;
    } else {
      name = spec.target;
      attributes["rebuno.step.name"] = spec.target;
    }
    const span = this.tracer.startSpan(
      name,
      { kind: a.SpanKind.INTERNAL, attributes },
      parent?.context ?? this.context,
    );
    const call = new CallTrace(a, span, this.captureContent && spec.kind === "tool_call", this.open);
    this.open.add(call);
    return call;
  }

  // Calls whose span is still open: a call parked by the suspension never settles, so the
  // dispatch ends its span.
  private readonly open = new Set<CallTrace>();

  private failure: unknown;

  /** Remembers the error the handler failed the execution with. */
  recordFailure(error: unknown): void {
    this.failure = error;
  }

  /** Ends the dispatch span with how the dispatch ended. */
  end(outcome: DispatchOutcome, error?: unknown): void {
    this.span.setAttribute("rebuno.dispatch.outcome", outcome);
    if (outcome === "failed") setError(this.a, this.span, error ?? this.failure, "failed");
    for (const call of this.open) call.endParked();
    this.span.end();
  }
}

/** How a dispatch attempt ended, as `rebuno.dispatch.outcome` records it. */
export type DispatchOutcome = "completed" | "failed" | "suspended" | "left_to_redelivery" | "not_run";

/** The kernel's decision as `rebuno.decision` names it. */
export function decisionName(decision: StepDecisionLike): string {
  switch (decision.decision) {
    case "proceed":
      return "allowed";
    case "replay":
      return isIndeterminate(decision.error) ? "indeterminate" : "replayed";
    case "blocked":
    case "execution_blocked":
      return decision.approvalId ? "awaiting_approval" : "blocked";
    default:
      return decision.decision;
  }
}

function isIndeterminate(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { reason?: unknown }).reason === "indeterminate"
  );
}

function setError(a: Api, span: OtelApi.Span, error: unknown, fallbackType: string): void {
  const type =
    ToolError.isInstance(error) && error.reason !== undefined
      ? error.reason
      : error instanceof Error
        ? error.name
        : fallbackType;
  span.setAttribute("error.type", type);
  const message = error instanceof Error ? error.message : fallbackType;
  span.setStatus({ code: a.SpanStatusCode.ERROR, message });
  if (error instanceof Error) span.recordException(error);
}

/** The span of one recorded call (tool, `step()`, LLM call). */
export class CallTrace {
  constructor(
    private readonly a: Api,
    private readonly span: OtelApi.Span,
    private readonly captureResult: boolean,
    private readonly open: Set<CallTrace>,
  ) {}

  private parentContext: OtelApi.Context | undefined;

  /** Parent context for calls made inside this call's body (built on first use: most have none). */
  get context(): OtelApi.Context {
    this.parentContext ??= this.a.trace.setSpan(this.a.ROOT_CONTEXT, this.span);
    return this.parentContext;
  }

  /** Records the kernel's decision (and the step id, rule, reason and approval it names). */
  decided(decision: StepDecisionLike): void {
    const span = this.span;
    const name = decisionName(decision);
    // One setAttributes call: the SDK validates and counts per call.
    const attributes: OtelApi.Attributes = { "rebuno.decision": name };
    if (decision.stepId) {
      attributes["rebuno.step.id"] = decision.stepId;
      attributes["gen_ai.tool.call.id"] = decision.stepId;
    }
    if (decision.ruleId) attributes["rebuno.rule.id"] = decision.ruleId;
    if (decision.reason) attributes["rebuno.policy.reason"] = decision.reason;
    if (decision.approvalId) attributes["rebuno.approval.id"] = decision.approvalId;
    if (name === "replayed") attributes["rebuno.replayed"] = true;
    span.setAttributes(attributes);
    if (name === "indeterminate") {
      span.setAttribute("rebuno.replayed", true);
      const message = (decision.error as { message?: unknown }).message;
      span.setAttribute("error.type", "indeterminate");
      this.statusSet = true;
      span.setStatus({
        code: this.a.SpanStatusCode.ERROR,
        message: typeof message === "string" ? message : "indeterminate",
      });
    } else if (name === "denied") {
      span.setAttribute("error.type", "denied");
      this.statusSet = true;
      span.setStatus({ code: this.a.SpanStatusCode.ERROR, message: decision.reason || "policy_denied" });
    }
  }

  /** Records the result text (opt-in content capture only). */
  succeeded(resultText: string): void {
    if (this.captureResult) this.span.setAttribute("gen_ai.tool.call.result", capped(resultText));
  }

  /** Records token usage from an LLM provider's JSON response, when it reports any. */
  usage(input: number | undefined, output: number | undefined): void {
    if (input !== undefined) this.span.setAttribute("gen_ai.usage.input_tokens", input);
    if (output !== undefined) this.span.setAttribute("gen_ai.usage.output_tokens", output);
  }

  // True once the decision set the status (denied, indeterminate): the error thrown for it only
  // adds the exception event.
  private statusSet = false;

  /** Sets error status and records the exception (a failed body, a denial thrown). */
  failed(error: unknown): void {
    if (!this.statusSet) setError(this.a, this.span, error, "tool_failed");
    else if (error instanceof Error) this.span.recordException(error);
  }

  /** Adds a link to another execution's trace (a subagent this call started). */
  linkExecution(executionId: string, relation: string): void {
    this.span.setAttribute("rebuno.child.execution.id", executionId);
    this.span.addLink({
      context: executionSpanContext(executionId),
      attributes: { "rebuno.link": relation },
    });
  }

  end(): void {
    this.open.delete(this);
    this.span.end();
  }

  /** Ends the span of a call the dispatch left parked (blocked, waiting on a subagent). */
  endParked(): void {
    this.span.setAttribute("rebuno.call.parked", true);
    this.end();
  }
}
