import type {
  Execution,
  KernelProtocol,
  ResourceView,
  SigningSecret,
  Step,
  StepDecision,
} from "@rebuno/protocol";
import type {
  CheckpointsInput,
  CompleteExecutionInput,
  CompleteStepInput,
  FailStepInput,
  RegisterResourceInput,
  StreamDeltaInput,
  SubmitStepInput,
} from "./bodies.js";
import type { FetchLike } from "./engine.js";
import type { DispatchLease } from "./lease.js";
import type { TransportLogger } from "./logger.js";
import type { RetryOptions } from "./retry.js";

/** Options for {@link createAgentTransport}. */
export interface AgentTransportOptions {
  /** Kernel base URL; a path prefix (`https://gw/rebuno`) is kept and signed. */
  readonly baseUrl: string;
  /** `Rebuno-Agent-Id`. */
  readonly agentId: string;
  /** The agent secret shared with the kernel (HMAC key). */
  readonly secret: SigningSecret;
  /**
   * Send through this `fetch` (e.g. the dev kernel's in-process handler) instead of the built-in
   * keep-alive undici pool.
   */
  readonly fetch?: FetchLike | undefined;
  /** Per-attempt timeout, ms (default 35 000). */
  readonly timeoutMs?: number | undefined;
  /** Product token(s) sent before ours in `User-Agent`, e.g. `rebuno-sdk/0.1.0`. */
  readonly userAgent?: string | undefined;
  /**
   * Retry budget for the retryable routes (default 4 tries, 250 ms → 4 s backoff). The lease-bound
   * routes that are safe to repeat (step complete/fail, heartbeat, execution complete/fail) and
   * step submissions refused before sending retry without an attempt limit until the lease is
   * lost (`LEASE_RETRY`, 250 ms → 2 s); an `attempts` set here caps them too.
   */
  readonly retry?: Partial<RetryOptions> | undefined;
  readonly logger?: TransportLogger | undefined;
  /** Wall clock in ms for `Rebuno-Timestamp` (default `Date.now`). */
  readonly clock?: (() => number) | undefined;
  /** Max sockets to the kernel (undici pool, default 64). */
  readonly connections?: number | undefined;
  /**
   * Kernel protocol generation (default: `REBUNO_PROTOCOL`, else `"v1"`). `"legacy"` (the older Go
   * kernel): `sha256=<HMAC(body)>` signatures with `Rebuno-Agent-Id` and `Rebuno-Dispatch-Id`, no
   * timestamp, no attempt fencing, fields it refuses left out, and routes it lacks (previous
   * turn, suspend, resources) refused with `NotSupportedByKernel` before anything is sent.
   */
  readonly protocol?: KernelProtocol | undefined;
}

/** Per-call overrides. */
export interface CallOptions {
  /** Per-attempt timeout, ms. */
  readonly timeoutMs?: number | undefined;
  /** Retry budget for this call (ignored by routes that are never retried). */
  readonly retry?: Partial<RetryOptions> | undefined;
  /** No retry starts after this many ms since the first attempt (lease-bound calls). */
  readonly budgetMs?: number | undefined;
}

/** The kernel's answer to a step outcome (`complete`/`fail`). */
export interface StepOutcomeAck {
  /** `recorded` (first write), `replay` (step already terminal), `execution_terminal`. */
  readonly decision: string;
  /** Stored result, with `replay`. */
  readonly result?: unknown;
  /** Stored error, with `replay`. */
  readonly error?: unknown;
}

/**
 * The agent side of the kernel API (HMAC-signed routes, docs/protocol.md §4). Every request carries
 * `Rebuno-Agent-Id`, `Rebuno-Timestamp` and a v1 `Rebuno-Signature` over the exact bytes sent,
 * recomputed for every attempt; every mutation also carries the lease headers. Status ≥ 300
 * throws the mapped error (`errorFromEnvelope`); no-answer failures throw `NetworkError` or
 * `TimeoutError`. Retry rules are per route (docs/design/transport.md).
 */
export interface AgentTransport {
  readonly agentId: string;
  /** Normalized base URL (prefix included). */
  readonly baseUrl: string;
  /** `"undici"` (keep-alive pool) or `"fetch"` (injected fetch). */
  readonly engine: "undici" | "fetch";
  /** The signal bound by {@link AgentTransport.withSignal}, if any. */
  readonly signal: AbortSignal | undefined;

  /** `GET /v0/executions/{id}`. Retried. */
  getExecution(executionId: string, options?: CallOptions): Promise<Execution>;
  /** `GET /v0/executions/{id}/previous` → the previous turn's `state` (or output), `null` if none. Retried. */
  getPrevious(executionId: string, options?: CallOptions): Promise<unknown>;
  /** `GET /v0/executions/{id}/steps[?status=]`. Retried. */
  listSteps(
    executionId: string,
    filter?: { readonly status?: string | undefined },
    options?: CallOptions,
  ): Promise<Step[]>;
  /** `GET /v0/executions/{id}/steps/{stepId}`; `null` on 404. Retried. */
  getStep(executionId: string, stepId: string, options?: CallOptions): Promise<Step | null>;
  /**
   * `POST /v0/executions/{id}/steps`. Never re-sent once it may have reached the kernel: an
   * ambiguous failure throws `SubmissionOutcomeUnknown` (end the attempt). Re-sent only
   * after failures that prove it was never sent (connection refused, DNS), as long as the lease
   * holds (a restarting kernel refuses connections).
   */
  submitStep(
    executionId: string,
    lease: DispatchLease,
    input: SubmitStepInput,
    options?: CallOptions,
  ): Promise<StepDecision>;
  /** `POST …/steps/{stepId}/complete`. Retried until the lease is lost (keyed by step id; a repeat answers `replay`). */
  completeStep(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: CompleteStepInput,
    options?: CallOptions,
  ): Promise<StepOutcomeAck>;
  /** `POST …/steps/{stepId}/fail`. Retried until the lease is lost (keyed by step id). */
  failStep(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: FailStepInput,
    options?: CallOptions,
  ): Promise<StepOutcomeAck>;
  /** `POST …/heartbeat`. Retried until the lease is lost or `budgetMs` (renewal is idempotent). */
  heartbeat(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<void>;
  /** `POST …/suspend` → `suspended`. Retried. */
  suspend(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<boolean>;
  /** `POST …/complete`. Retried until the lease is lost (the terminal transition happens once). */
  completeExecution(
    executionId: string,
    lease: DispatchLease,
    input: CompleteExecutionInput,
    options?: CallOptions,
  ): Promise<void>;
  /** `POST …/fail` with a failure-reason string. Retried until the lease is lost. */
  failExecution(
    executionId: string,
    lease: DispatchLease,
    error: string,
    options?: CallOptions,
  ): Promise<void>;
  /** `POST …/steps/{stepId}/stream`. Not retried (best effort, not persisted). */
  publishStreamDelta(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: StreamDeltaInput,
    options?: CallOptions,
  ): Promise<void>;
  /** `POST …/resources`. Retried (identical registrations are no-ops). */
  registerResource(
    executionId: string,
    lease: DispatchLease,
    body: RegisterResourceInput,
    options?: CallOptions,
  ): Promise<ResourceView>;
  /** `POST …/resources/{key}/binding`. Retried (the same binding is a no-op). */
  bindResource(
    executionId: string,
    lease: DispatchLease,
    key: string,
    binding: unknown,
    options?: CallOptions,
  ): Promise<void>;
  /** `POST …/resources/checkpoints`. Not retried (a repeat is logged by the kernel as a duplicate). */
  publishCheckpoints(
    executionId: string,
    lease: DispatchLease,
    input: CheckpointsInput,
    options?: CallOptions,
  ): Promise<void>;
  /**
   * A view of this transport bound to `signal` (combined with any signal already bound): once it
   * aborts, every call throws `LeaseSuperseded` without sending, and calls in flight are aborted.
   */
  withSignal(signal: AbortSignal): AgentTransport;
  /** Close the keep-alive sockets (all views share them). */
  close(): Promise<void>;
}
