/**
 * The trace ids that put every span of one execution in one trace without a wire change
 * (docs/observability.md §2): the agent, the caller and the kernel each derive the same W3C ids
 * from the execution id alone.
 */

const UUID_HEX = /^[0-9a-f]{32}$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);
const MASK64 = (1n << 64n) - 1n;
const FNV_PRIME = 0x100000001b3n;

// FNV-1a over UTF-16 code units, 64 bits; only used for ids that are not UUIDs.
function fnv64(text: string, seed: bigint): bigint {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * FNV_PRIME) & MASK64;
  }
  return hash;
}

const hex16 = (n: bigint) => n.toString(16).padStart(16, "0");

/**
 * The execution's trace id: a UUID execution id's 128 bits as 32 lowercase hex digits (so the
 * trace id and the execution id read the same); any other id is hashed (two FNV-1a-64 halves).
 * Never the all-zero id, which W3C trace context declares invalid.
 */
export function traceIdOfExecution(executionId: string): string {
  const hex = executionId.replaceAll("-", "").toLowerCase();
  if (UUID_HEX.test(hex) && hex !== ZERO_TRACE) return hex;
  const id = hex16(fnv64(executionId, 0xcbf29ce484222325n)) + hex16(fnv64(executionId, 0x84222325cbf29ce4n));
  return id === ZERO_TRACE ? `${ZERO_TRACE.slice(1)}1` : id;
}

/**
 * The span id every process uses as the remote parent of an execution's spans: the XOR of the
 * trace id's two 64-bit halves (deterministic, and never zero).
 */
export function rootSpanIdOfExecution(executionId: string): string {
  const trace = traceIdOfExecution(executionId);
  const id = hex16(BigInt(`0x${trace.slice(0, 16)}`) ^ BigInt(`0x${trace.slice(16)}`));
  return id === ZERO_SPAN ? `${ZERO_SPAN.slice(1)}1` : id;
}

/** The remote parent of an execution's spans, shaped as OpenTelemetry's `SpanContext`. */
export interface ExecutionSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  /** W3C trace flags: 1, sampled (OpenTelemetry's `TraceFlags.SAMPLED`). */
  readonly traceFlags: number;
  readonly isRemote: true;
}

/**
 * The span context every process (agent, caller, kernel) starts an execution's spans under, so
 * they meet in one trace; pass it to OpenTelemetry's `trace.setSpanContext`.
 */
export function executionSpanContext(executionId: string): ExecutionSpanContext {
  return {
    traceId: traceIdOfExecution(executionId),
    spanId: rootSpanIdOfExecution(executionId),
    traceFlags: 1,
    isRemote: true,
  };
}
