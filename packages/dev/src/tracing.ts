/**
 * OpenTelemetry export for `rebuno-dev` and for processes that embed the dev kernel (the tour):
 * registers a Node tracer provider that batches spans to an OTLP/HTTP endpoint, so the kernel's
 * spans and the SDK's (both written through `@opentelemetry/api`) reach the backend in the
 * execution's one trace (docs/observability.md). Only this package depends on the OpenTelemetry
 * SDK; the libraries depend on the API alone, as an optional peer.
 */
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

/** Options of {@link startOtlpTracing}. */
export interface OtlpTracingOptions {
  /** Base URL of the OTLP/HTTP receiver (`/v1/traces` is appended), e.g. `http://127.0.0.1:4318`. */
  readonly endpoint: string;
  /** `service.name` of every span (default `rebuno-dev`). */
  readonly serviceName?: string | undefined;
}

/** A registered exporting provider. */
export interface OtlpTracing {
  /** Exports what is still batched, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Registers the global tracer provider (and the AsyncLocalStorage context manager) exporting to
 * `endpoint`. Call it before the kernel or any agent starts.
 *
 * @example
 * ```ts
 * import { startOtlpTracing } from "@rebuno/dev";
 *
 * const tracing = startOtlpTracing({ endpoint: "http://127.0.0.1:4318", serviceName: "my-agents" });
 * // … start the kernel and the agents: their spans are batched to the endpoint …
 * await tracing.shutdown(); // exports what is still batched, then unregisters the provider
 * ```
 */
export function startOtlpTracing(options: OtlpTracingOptions): OtlpTracing {
  const url = `${options.endpoint.replace(/\/+$/, "")}/v1/traces`;
  // #region provider
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName ?? "rebuno-dev" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  provider.register();
  // #endregion
  return {
    async shutdown() {
      await provider.shutdown();
      // Unregister, so a later startOtlpTracing in the same process can register its own.
      trace.disable();
    },
  };
}
