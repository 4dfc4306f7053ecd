/**
 * Optional OpenTelemetry export for the tour (docs/observability.md): with
 * OTEL_EXPORTER_OTLP_ENDPOINT set, the tour process (its embedded kernel and in-process agents)
 * and its agent child processes export their spans over OTLP/HTTP. Unset, nothing is loaded.
 */

/** Starts export when configured; the returned function flushes and stops it. */
export async function traceIfConfigured(serviceName: string): Promise<() => Promise<void>> {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || endpoint === "") return async () => {};
  // Loaded only here, so a tour without tracing never loads the OpenTelemetry SDK.
  const { startOtlpTracing } = await import("@rebuno/dev");
  const tracing = startOtlpTracing({ endpoint, serviceName });
  return () => tracing.shutdown();
}
