// Public API of @rebuno/kernel-transport. Every export is listed by name (no `export *`).

export type {
  AgentTransport,
  AgentTransportOptions,
  CallOptions,
  StepOutcomeAck,
} from "./agent-api.js";
export { createAgentTransport } from "./agent-transport.js";
export type {
  CheckpointCapture,
  CheckpointCaptureFailure,
  CheckpointsInput,
  CompleteExecutionInput,
  CompleteStepInput,
  FailStepInput,
  RegisterResourceInput,
  StreamDeltaInput,
  SubmitStepInput,
} from "./bodies.js";
export { MAX_STREAM_DELTA_BYTES } from "./bodies.js";
export type { FetchLike } from "./engine.js";
export { isUnsentFailure, SubmissionOutcomeUnknown } from "./errors.js";
export type { HttpCore, HttpCoreOptions } from "./http-core.js";
export { createHttpCore, DEFAULT_TIMEOUT_MS } from "./http-core.js";
export type { DispatchLease } from "./lease.js";
export { heartbeatIntervalMs, leaseHeaders } from "./lease.js";
export type { LeaseKeeperOptions } from "./lease-keeper.js";
export { LeaseKeeper } from "./lease-keeper.js";
export type { TransportLogger } from "./logger.js";
export { consoleLogger } from "./logger.js";
export type { LoopDelaySource } from "./loop-monitor.js";
export type { AttemptContext, HttpMethod, HttpRequest } from "./request.js";
export type { HttpResponse } from "./responses.js";
export { retryAfterMs } from "./responses.js";
export type { RetryCallOptions, RetryEvent, RetryMode, RetryOptions } from "./retry.js";
export {
  DEFAULT_RETRY,
  isRetryableFailure,
  LEASE_RETRY,
  RETRY_STATUSES,
  resolveRetryOptions,
  retryCall,
  retryDelayMs,
} from "./retry.js";
export type { AgentSigner, AgentSignerOptions, AsyncAgentSigner } from "./signer.js";
export { createAgentSigner } from "./signer.js";
export type { BaseUrl } from "./url.js";
export { escapePathSegment, parseBaseUrl, queryString } from "./url.js";
export { TRANSPORT_USER_AGENT, TRANSPORT_VERSION } from "./version.js";
