/**
 * The kernel's OpenTelemetry spans (docs/observability.md §3): one per request that names an
 * execution, one per policy decision, one per webhook delivery, each in the execution's trace
 * (the ids every process derives from the execution id). `@opentelemetry/api` is an optional
 * peer, loaded on first use; without it, or with no tracer provider registered, every hook is one
 * comparison and allocates nothing.
 */
import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";
import { executionSpanContext } from "@rebuno/protocol";

type Api = typeof OtelApi;

const requireFromHere = createRequire(import.meta.url);
const SCOPE = "@rebuno/dev-kernel";

interface Loaded {
  readonly api: Api;
  /** The API's no-op provider: the global provider's delegate until one is registered. */
  readonly noop: OtelApi.TracerProvider;
}
let loaded: Loaded | null | undefined;

function load(): Loaded | null {
  if (loaded === undefined) {
    try {
      const api = requireFromHere("@opentelemetry/api") as Api;
      loaded = { api, noop: new api.ProxyTracerProvider().getDelegate() };
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** The API when a real tracer provider is registered, else undefined (checked on every call). */
function active(): Api | undefined {
  const l = load();
  if (l === null) return undefined;
  const provider = l.api.trace.getTracerProvider() as OtelApi.ProxyTracerProvider;
  return provider.getDelegate() === l.noop ? undefined : l.api;
}

function parentFor(api: Api, executionId: string): OtelApi.Context {
  // A span of this execution already active (the request being handled) is the parent.
  const current = api.context.active();
  const parent = executionSpanContext(executionId);
  if (api.trace.getSpanContext(current)?.traceId === parent.traceId) return current;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, parent);
}

const EXECUTION_PATH = /^\/v0\/executions\/([0-9a-fA-F-]{36})(?:\/|$)/;

/**
 * Runs `handler(a, b)` under a `kernel {method} {route}` span when the request path names an
 * execution and tracing is on; otherwise just calls it (arguments passed, not a closure, so the
 * untraced path allocates nothing).
 */
export function traceRequest<A, B, T extends { readonly status: number }>(
  method: string,
  path: string,
  route: string,
  handler: (a: A, b: B) => T | Promise<T>,
  a: A,
  b: B,
): T | Promise<T> {
  const api = active();
  if (api === undefined) return handler(a, b);
  const match = EXECUTION_PATH.exec(path);
  if (match === null) return handler(a, b);
  const executionId = (match[1] as string).toLowerCase();
  const span = api.trace.getTracer(SCOPE).startSpan(
    `kernel ${method} ${route}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: {
        "http.request.method": method,
        "http.route": route,
        "rebuno.execution.id": executionId,
      },
    },
    parentFor(api, executionId),
  );
  const run = async () => handler(a, b);
  return api.context.with(api.trace.setSpan(api.context.active(), span), run).then(
    (response) => {
      span.setAttribute("http.response.status_code", response.status);
      if (response.status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
      span.end();
      return response;
    },
    (error: unknown) => {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: String(error) });
      span.end();
      throw error;
    },
  );
}

/** What the policy decided for a new step, as its span records it. */
export interface PolicySpanFields {
  readonly executionId: string;
  readonly kind: string;
  readonly target: string;
  readonly decision: string;
  readonly ruleId: string;
  readonly reason?: string | undefined;
}

/** Records one policy decision as a zero-length `policy {target}` span. */
export function tracePolicyDecision(fields: PolicySpanFields): void {
  const api = active();
  if (api === undefined) return;
  const attributes: OtelApi.Attributes = {
    "rebuno.execution.id": fields.executionId,
    "rebuno.step.kind": fields.kind,
    "rebuno.step.target": fields.target,
    "rebuno.decision": fields.decision,
    "rebuno.rule.id": fields.ruleId,
  };
  if (fields.reason !== undefined) attributes["rebuno.policy.reason"] = fields.reason;
  const span = api.trace
    .getTracer(SCOPE)
    .startSpan(`policy ${fields.target}`, { attributes }, parentFor(api, fields.executionId));
  if (fields.decision === "deny")
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: fields.reason ?? "policy_denied" });
  span.end();
}

/** The span of one webhook delivery; `end` records the answer or the failure's cause. */
export interface DeliverySpan {
  end(failure: { readonly error_class: string; readonly error: string } | undefined, status?: number): void;
}

/** Starts a `webhook deliver {agent}` span, or returns undefined when tracing is off. */
export function traceDelivery(fields: {
  readonly executionId: string;
  readonly agentId: string;
  readonly dispatchId: string;
  readonly attempt: number;
  readonly url: string;
}): DeliverySpan | undefined {
  const api = active();
  if (api === undefined) return undefined;
  const span = api.trace.getTracer(SCOPE).startSpan(
    `webhook deliver ${fields.agentId}`,
    {
      kind: api.SpanKind.CLIENT,
      attributes: {
        "rebuno.execution.id": fields.executionId,
        "gen_ai.agent.id": fields.agentId,
        "rebuno.dispatch.id": fields.dispatchId,
        "rebuno.dispatch.attempt": fields.attempt,
        "url.full": fields.url,
      },
    },
    parentFor(api, fields.executionId),
  );
  return {
    end(failure, status) {
      if (status !== undefined) span.setAttribute("http.response.status_code", status);
      if (failure !== undefined) {
        span.setAttribute("error.type", failure.error_class);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure.error });
      }
      span.end();
    },
  };
}
