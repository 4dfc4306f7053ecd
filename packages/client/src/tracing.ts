/**
 * The caller's spans (docs/observability.md §3): `create_execution {agent id}` and
 * `wait_for_terminal`, started in the execution's trace (the remote root derived from its id, as
 * the SDK's and the kernel's spans are) and linked to the caller's active span.
 *
 * `@opentelemetry/api` is an optional peer loaded with a dynamic `import()`, because the client
 * also runs in browsers, Deno and Bun, where the SDK's `createRequire` does not exist. When it
 * cannot be loaded (absent, or a browser bundle that leaves it external) or no tracer provider is
 * registered, no span is created and each call costs one resolved `await`.
 */
import type * as OtelApi from "@opentelemetry/api";
import { executionSpanContext } from "@rebuno/protocol";

type Api = typeof OtelApi;

/** A variable, not a literal: bundlers that are not told the peer is external do not inline it. */
const API_MODULE = "@opentelemetry/api";
const SCOPE = "@rebuno/client";

interface Loaded {
  readonly api: Api;
  /** The API's no-op provider: the global provider's delegate until one is registered. */
  readonly noop: OtelApi.TracerProvider;
}
let loading: Promise<Loaded | null> | undefined;

function load(): Promise<Loaded | null> {
  loading ??= import(/* @vite-ignore */ API_MODULE).then(
    (api: Api) => ({ api, noop: new api.ProxyTracerProvider().getDelegate() }),
    () => null,
  );
  return loading;
}

/** The API when installed and a tracer provider is registered, else null. */
async function activeApi(): Promise<Api | null> {
  const loaded = await load();
  if (loaded === null) return null;
  const provider = loaded.api.trace.getTracerProvider() as OtelApi.ProxyTracerProvider;
  return provider.getDelegate() === loaded.noop ? null : loaded.api;
}

/** Epoch milliseconds with the sub-millisecond part, a start time every OpenTelemetry SDK accepts. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Start a caller span of `executionId` under the execution's root, linked to the caller's active
 * span; the active span is told the execution id and, where it is recording, linked back.
 */
function startInExecution(
  a: Api,
  name: string,
  executionId: string,
  attributes: OtelApi.Attributes,
  startTime: number,
): OtelApi.Span {
  const caller = a.trace.getActiveSpan();
  const callerContext = caller?.spanContext();
  const links =
    callerContext !== undefined && a.isSpanContextValid(callerContext)
      ? [{ context: callerContext, attributes: { "rebuno.link": "caller" } }]
      : [];
  const span = a.trace.getTracer(SCOPE).startSpan(
    name,
    {
      kind: a.SpanKind.CLIENT,
      startTime,
      links,
      attributes: { ...attributes, "rebuno.execution.id": executionId },
    },
    a.trace.setSpanContext(a.ROOT_CONTEXT, executionSpanContext(executionId)),
  );
  if (caller?.isRecording()) {
    caller.setAttribute("rebuno.execution.id", executionId);
    caller.addLink({ context: span.spanContext(), attributes: { "rebuno.link": "execution" } });
  }
  return span;
}

function endWithError(a: Api, span: OtelApi.Span, error: unknown, endTime?: number): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setAttribute("error.type", exception.name);
  span.setStatus({ code: a.SpanStatusCode.ERROR, message: exception.message });
  span.end(endTime);
}

/**
 * Record `create_execution {agentId}` around `send` (the request). The execution id, hence the
 * trace, is only known from the answer, so the span is started afterwards with the time taken
 * before the request. A create that fails has no execution: its span stays in the caller's trace.
 */
export async function tracedCreate<T extends { readonly id: string }>(
  agentId: string,
  send: () => Promise<T>,
): Promise<T> {
  const startTime = preciseNow();
  let created: T;
  try {
    created = await send();
  } catch (error) {
    const a = await activeApi();
    if (a !== null) {
      const span = a.trace.getTracer(SCOPE).startSpan(`create_execution ${agentId}`, {
        kind: a.SpanKind.CLIENT,
        startTime,
        attributes: { "gen_ai.agent.id": agentId, "gen_ai.agent.name": agentId },
      });
      endWithError(a, span, error);
    }
    throw error;
  }
  const endTime = preciseNow();
  const a = await activeApi();
  if (a !== null) {
    const attributes = { "gen_ai.agent.id": agentId, "gen_ai.agent.name": agentId };
    startInExecution(a, `create_execution ${agentId}`, created.id, attributes, startTime).end(endTime);
  }
  return created;
}

/** Record `wait_for_terminal` around `wait`, in the execution's trace, with the status it ended in. */
export async function tracedWait<T extends { readonly status: string }>(
  executionId: string,
  wait: () => Promise<T>,
): Promise<T> {
  const a = await activeApi();
  if (a === null) return wait();
  const span = startInExecution(a, "wait_for_terminal", executionId, {}, preciseNow());
  try {
    const done = await wait();
    span.setAttribute("rebuno.execution.status", done.status);
    span.end();
    return done;
  } catch (error) {
    endWithError(a, span, error);
    throw error;
  }
}
