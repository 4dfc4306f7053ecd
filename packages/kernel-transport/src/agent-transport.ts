import {
  ConfigurationError,
  type Execution,
  KERNEL_PROTOCOL_ENV,
  KernelError,
  type KernelProtocol,
  LeaseSuperseded,
  NotFoundError,
  NotSupportedByKernel,
  parseExecution,
  parseResourceView,
  parseStep,
  parseStepDecision,
  type ResourceView,
  resolveKernelProtocol,
  type Step,
  type StepDecision,
  TransportError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";
import type { AgentTransport, AgentTransportOptions, CallOptions, StepOutcomeAck } from "./agent-api.js";
import {
  bindingBody,
  type CheckpointsInput,
  type CompleteExecutionInput,
  type CompleteStepInput,
  checkpointsBody,
  completeExecutionBody,
  completeStepBody,
  type FailStepInput,
  failExecutionBody,
  failStepBody,
  type RegisterResourceInput,
  registerResourceBody,
  type StreamDeltaInput,
  type SubmitStepInput,
  streamDeltaBody,
  submitStepBody,
} from "./bodies.js";
import { isUnsentFailure, SubmissionOutcomeUnknown } from "./errors.js";
import { Core } from "./http-core.js";
import { assertLease, type DispatchLease } from "./lease.js";
import type { HttpMethod } from "./request.js";
import { type HttpResponse, parseAnswer } from "./responses.js";
import { LEASE_RETRY, type RetryMode, type RetryOptions, resolveRetryOptions } from "./retry.js";
import { type AgentSigner, type AsyncAgentSigner, createAgentSigner } from "./signer.js";
import { escapePathSegment, queryString } from "./url.js";

/** Called when a bound view sees the lease lost or a submission in doubt (LeaseKeeper hook). */
export type LeaseObserver = (error: LeaseSuperseded | SubmissionOutcomeUnknown) => void;

/** Internal: bind a signal *and* an observer (used by `LeaseKeeper.transport`). */
export const BIND_OBSERVED: unique symbol = Symbol("rebuno.transport.bindObserved");

interface Shared {
  readonly core: Core;
  readonly agentId: string;
  readonly sign: AgentSigner | AsyncAgentSigner;
  readonly protocol: KernelProtocol;
  /** {@link LEASE_RETRY} under the transport's `retry` option. */
  readonly leaseRetry: RetryOptions;
}

/**
 * How long a call keeps re-sending: `"once"` per its retry mode and the transport's budget;
 * `"lease"` until the lease can no longer be renewed ({@link LEASE_RETRY}).
 */
type Persistence = "once" | "lease";

/** The `LeaseSuperseded` thrown locally once a bound signal has aborted. */
function leaseLost(signal: AbortSignal): LeaseSuperseded {
  const reason: unknown = signal.reason;
  if (LeaseSuperseded.isInstance(reason)) return new LeaseSuperseded(reason.message, { cause: reason });
  return new LeaseSuperseded(undefined, { cause: reason });
}

const exec = (id: string) => `/v0/executions/${escapePathSegment(id, "execution id")}`;

// A step submission may have been counted when its failure gives no definite answer: the socket
// broke or timed out after sending, a gateway or the kernel answered 5xx.
function isAmbiguousSubmitFailure(err: unknown): boolean {
  if (TransportError.isInstance(err)) return !isUnsentFailure(err);
  return KernelError.isInstance(err) && err.status >= 500;
}

class AgentTransportImpl implements AgentTransport {
  constructor(
    private readonly s: Shared,
    readonly signal: AbortSignal | undefined,
    private readonly observer: LeaseObserver | undefined,
  ) {}

  get agentId(): string {
    return this.s.agentId;
  }
  get baseUrl(): string {
    return this.s.core.baseUrl.href;
  }
  get engine(): "undici" | "fetch" {
    return this.s.core.engine;
  }

  /**
   * Send one call: the signal and lease are checked before anything is sent, and the error a
   * failed call rejects with is mapped by `onFailure` (or by `fail`, for submitStep). Not `async`,
   * and parsing runs inside the core: one promise per call on the hot routes. Throws
   * synchronously on a bad lease; the public methods turn that into a rejection.
   */
  private call<T>(
    method: HttpMethod,
    path: string,
    lease: DispatchLease | undefined,
    body: string | undefined,
    retry: RetryMode,
    options: CallOptions | undefined,
    parse: (res: HttpResponse) => T,
    fail: ((error: unknown, answered: boolean) => unknown) | undefined = this.onFailure,
    persistence: Persistence = "once",
  ): Promise<T> {
    const signal = this.signal;
    if (signal?.aborted) return Promise.reject(leaseLost(signal));
    if (lease !== undefined) assertLease(lease);
    const sign = this.s.sign;
    // Lease-bound persistence: no attempt limit; the bound signal (lease keeper: lease lost;
    // agent: dispatch superseded) or the lease period ends the retries. A lease can live no longer
    // than its period without a renewal, so by then the kernel has reclaimed the dispatch anyway.
    const untilLeaseLost = persistence === "lease" && lease !== undefined;
    let retryOptions = options?.retry;
    if (untilLeaseLost)
      retryOptions =
        retryOptions === undefined ? this.s.leaseRetry : resolveRetryOptions(this.s.leaseRetry, retryOptions);
    return this.s.core.run(
      {
        method,
        path,
        body,
        retry,
        attemptHeaders: (ctx) => sign(ctx, lease),
        signal,
        timeoutMs: options?.timeoutMs,
        retryOptions,
        budgetMs: options?.budgetMs ?? (untilLeaseLost ? lease.timeoutMs : undefined),
      },
      { parse, fail },
    );
  }

  /** Refuse, before sending, a feature the configured kernel generation does not have. */
  private unsupported(feature: string, what: string): NotSupportedByKernel {
    return new NotSupportedByKernel(
      `${what} needs ${feature}, which the legacy Go kernel does not have (${KERNEL_PROTOCOL_ENV}=legacy); ` +
        `use a kernel that speaks the newest protocol ("v1")`,
      { feature, protocol: this.s.protocol },
    );
  }

  // Every route: once the bound signal aborted, the error is the lost lease; a LeaseSuperseded
  // answer is reported to the observer (the keeper) so the whole run stops. An unreadable 2xx
  // body (`answered`) is returned unchanged.
  private readonly onFailure = (err: unknown, answered: boolean): unknown => {
    if (answered) return err;
    const signal = this.signal;
    if (signal?.aborted) return leaseLost(signal);
    if (this.observer !== undefined && LeaseSuperseded.isInstance(err)) this.observer(err);
    if (UnauthorizedError.isInstance(err)) return withProtocolHint(err, this.s.protocol);
    return err;
  };

  private send(
    method: HttpMethod,
    path: string,
    lease: DispatchLease | undefined,
    body: string | undefined,
    retry: RetryMode,
    options: CallOptions | undefined,
  ): Promise<undefined> {
    return this.call(method, path, lease, body, retry, options, ignoreBody);
  }

  // The answer's model is parsed inside the core, where the status and body text are at hand: a
  // 2xx of the wrong shape becomes an UnexpectedResponse with both (parseAnswer).
  private parsed<T>(
    method: HttpMethod,
    path: string,
    lease: DispatchLease | undefined,
    body: string | undefined,
    retry: RetryMode,
    options: CallOptions | undefined,
    model: (body: unknown) => T,
  ): Promise<T> {
    return this.call(method, path, lease, body, retry, options, (res) =>
      parseAnswer(res, method, path, model),
    );
  }

  // Reads: GET has no side effect, so any no-answer failure or 502/503/504 is retried.
  async getExecution(executionId: string, options?: CallOptions): Promise<Execution> {
    return this.parsed("GET", exec(executionId), undefined, undefined, "idempotent", options, parseExecution);
  }

  async getPrevious(executionId: string, options?: CallOptions): Promise<unknown> {
    const path = `${exec(executionId)}/previous`;
    if (this.s.protocol === "legacy") throw this.unsupported("sessions", "reading the previous turn");
    return this.parsed("GET", path, undefined, undefined, "idempotent", options, previousState);
  }

  async listSteps(
    executionId: string,
    filter?: { readonly status?: string | undefined },
    options?: CallOptions,
  ): Promise<Step[]> {
    const path = `${exec(executionId)}/steps${queryString({ status: filter?.status })}`;
    return this.parsed("GET", path, undefined, undefined, "idempotent", options, parseStepList);
  }

  async getStep(executionId: string, stepId: string, options?: CallOptions): Promise<Step | null> {
    const path = `${exec(executionId)}/steps/${escapePathSegment(stepId, "step id")}`;
    try {
      return await this.parsed("GET", path, undefined, undefined, "idempotent", options, parseStep);
    } catch (err) {
      if (NotFoundError.isInstance(err)) return null;
      throw err;
    }
  }

  submitStep(
    executionId: string,
    lease: DispatchLease,
    input: SubmitStepInput,
    options?: CallOptions,
  ): Promise<StepDecision> {
    try {
      const path = `${exec(executionId)}/steps`;
      if (this.s.protocol === "legacy" && input.resources !== undefined && input.resources.length > 0) {
        return Promise.reject(this.unsupported("resources", `step "${input.target}" declares resources; it`));
      }
      // NOT idempotent: the kernel advances the occurrence counter when it records a submission,
      // so a re-sent copy would get the next occurrence, a different step id, and could run the
      // effect twice. Only "unsent-only" failures (connection refused, DNS, connect timeout: no
      // byte was written, so the kernel cannot have seen it) are re-sent, and those for as long as
      // the lease lasts: a kernel restarting refuses connections, and the step must not fail for it.
      return this.call(
        "POST",
        path,
        lease,
        submitStepBody(input),
        "unsent-only",
        options,
        (res) => parseAnswer(res, "POST", path, parseStepDecision),
        (err, answered) => {
          // The kernel answered 2xx, so it recorded the submission, but the decision is unreadable.
          if (answered) return this.inDoubt(executionId, err);
          const mapped = this.onFailure(err, false);
          if (this.signal?.aborted || !isAmbiguousSubmitFailure(mapped)) return mapped;
          return this.inDoubt(executionId, mapped);
        },
        "lease",
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private inDoubt(executionId: string, cause: unknown): SubmissionOutcomeUnknown {
    const err = new SubmissionOutcomeUnknown(executionId, cause);
    this.observer?.(err);
    return err;
  }

  // Throws synchronously on bad input; the callers turn that into a rejection.
  private outcome(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    verb: "complete" | "fail",
    body: string,
    options: CallOptions | undefined,
  ): Promise<StepOutcomeAck> {
    const path = `${exec(executionId)}/steps/${escapePathSegment(stepId, "step id")}/${verb}`;
    // Retry-safe: keyed by step id. Once the step is terminal the kernel answers `replay` and
    // changes nothing (docs/protocol.md §6.5 step 6), so a repeat after a lost answer cannot double-record.
    // Re-sent until the lease is lost: this carries a finished tool's result, which a kernel
    // restart must not lose while the lease still holds.
    return this.call(
      "POST",
      path,
      lease,
      body,
      "idempotent",
      options,
      (res) => parseAnswer(res, "POST", path, toAck),
      this.onFailure,
      "lease",
    );
  }

  completeStep(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: CompleteStepInput,
    options?: CallOptions,
  ): Promise<StepOutcomeAck> {
    try {
      if (this.s.protocol === "legacy" && hasCaptures(input)) {
        return Promise.reject(this.unsupported("resources", "a step outcome with resource checkpoints"));
      }
      return this.outcome(executionId, lease, stepId, "complete", completeStepBody(input), options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  failStep(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: FailStepInput,
    options?: CallOptions,
  ): Promise<StepOutcomeAck> {
    try {
      if (this.s.protocol === "legacy" && hasCaptures(input)) {
        return Promise.reject(this.unsupported("resources", "a step outcome with resource checkpoints"));
      }
      return this.outcome(executionId, lease, stepId, "fail", failStepBody(input), options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  heartbeat(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<void> {
    try {
      const path = `${exec(executionId)}/heartbeat`;
      // Retry-safe: a renewal only sets locked_at = now; two renewals equal one. The kernel still
      // fences by attempt, so a late retry can never revive a superseded lease. (The lease keeper
      // bounds each beat's retries by its interval through `budgetMs`.)
      return this.call(
        "POST",
        path,
        lease,
        undefined,
        "idempotent",
        options,
        ignoreBody,
        this.onFailure,
        "lease",
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async suspend(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<boolean> {
    const path = `${exec(executionId)}/suspend`;
    if (this.s.protocol === "legacy") throw this.unsupported("suspend", "suspending an execution");
    // Retry-safe: `suspended: false` changes nothing; after a lost `suspended: true` the dispatch
    // is retired, so a repeat gets 409 lease_superseded, which ends the handler exactly like the
    // Blocked that `true` would have caused. Never a second block or a lost wake-up.
    return this.parsed("POST", path, lease, undefined, "idempotent", options, suspendedFlag);
  }

  async completeExecution(
    executionId: string,
    lease: DispatchLease,
    input: CompleteExecutionInput,
    options?: CallOptions,
  ): Promise<void> {
    // Retry-safe: the terminal transition happens once under the kernel's per-execution lock; a
    // repeat after a lost 204 gets 409 (execution_terminal or lease_superseded: the dispatch was
    // retired), which the SDK treats as "stop quietly". Never a second completion. Re-sent until
    // the lease is lost: the execution's output must survive a kernel restart.
    // The legacy kernel refuses `state` (an unknown field); it has no sessions, so no later turn
    // could read it.
    const body = completeExecutionBody(this.s.protocol === "legacy" ? { output: input.output } : input);
    const path = `${exec(executionId)}/complete`;
    await this.call("POST", path, lease, body, "idempotent", options, ignoreBody, this.onFailure, "lease");
  }

  async failExecution(
    executionId: string,
    lease: DispatchLease,
    error: string,
    options?: CallOptions,
  ): Promise<void> {
    // Retry-safe for the same reason as completeExecution, and re-sent as long.
    const body = failExecutionBody(error);
    const path = `${exec(executionId)}/fail`;
    await this.call("POST", path, lease, body, "idempotent", options, ignoreBody, this.onFailure, "lease");
  }

  async publishStreamDelta(
    executionId: string,
    lease: DispatchLease,
    stepId: string,
    input: StreamDeltaInput,
    options?: CallOptions,
  ): Promise<void> {
    const path = `${exec(executionId)}/steps/${escapePathSegment(stepId, "step id")}/stream`;
    // Not retried: deltas are best effort and not persisted; a repeat could show twice to
    // subscribers, and a late one would arrive out of order. `seq` lets readers see gaps.
    await this.send("POST", path, lease, streamDeltaBody(input), "never", options);
  }

  async registerResource(
    executionId: string,
    lease: DispatchLease,
    body: RegisterResourceInput,
    options?: CallOptions,
  ): Promise<ResourceView> {
    if (this.s.protocol === "legacy")
      throw this.unsupported("resources", `registering resource "${body.key}"`);
    // Retry-safe: an identical registration is a no-op that returns the current view (docs/protocol.md §4.17).
    const text = registerResourceBody(body);
    const path = `${exec(executionId)}/resources`;
    return this.parsed("POST", path, lease, text, "idempotent", options, parseResourceView);
  }

  async bindResource(
    executionId: string,
    lease: DispatchLease,
    key: string,
    binding: unknown,
    options?: CallOptions,
  ): Promise<void> {
    if (this.s.protocol === "legacy") throw this.unsupported("resources", `binding resource "${key}"`);
    const path = `${exec(executionId)}/resources/${escapePathSegment(key, "resource key")}/binding`;
    // Retry-safe: binding the same value again is a 204 no-op; only a different value conflicts.
    await this.send("POST", path, lease, bindingBody(binding), "idempotent", options);
  }

  async publishCheckpoints(
    executionId: string,
    lease: DispatchLease,
    input: CheckpointsInput,
    options?: CallOptions,
  ): Promise<void> {
    if (this.s.protocol === "legacy") throw this.unsupported("resources", "publishing resource checkpoints");
    // Not retried: captures cover "the latest event seq"; a repeat after a lost 204 is refused as
    // duplicate_capture and logged in the execution's events. The next due capture covers it.
    const body = checkpointsBody(input);
    await this.send("POST", `${exec(executionId)}/resources/checkpoints`, lease, body, "never", options);
  }

  withSignal(signal: AbortSignal): AgentTransport {
    return this[BIND_OBSERVED](signal, undefined);
  }

  [BIND_OBSERVED](signal: AbortSignal, observer: LeaseObserver | undefined): AgentTransport {
    const combined = this.signal === undefined ? signal : AbortSignal.any([this.signal, signal]);
    const chained: LeaseObserver | undefined =
      this.observer === undefined || observer === undefined
        ? (observer ?? this.observer)
        : (e) => {
            this.observer?.(e);
            observer(e);
          };
    return new AgentTransportImpl(this.s, combined, chained);
  }

  close(): Promise<void> {
    return this.s.core.close();
  }
}

function ignoreBody(): undefined {
  return undefined;
}

function hasCaptures(input: CheckpointsInput): boolean {
  return (input.captures?.length ?? 0) > 0 || (input.captureFailures?.length ?? 0) > 0;
}

/**
 * A 401 to a signed agent request: a wrong secret, or a kernel of the other protocol generation
 * (each refuses the other's signature). Name the setting, so the first failed request says it.
 */
function withProtocolHint(err: UnauthorizedError, protocol: KernelProtocol): UnauthorizedError {
  const other = protocol === "v1" ? "legacy" : "v1";
  return new UnauthorizedError(
    `${err.message} (agent requests are signed for kernel protocol "${protocol}"; check the agent ` +
      `secret, and if the kernel is the ${other === "legacy" ? "older Go kernel" : "newest protocol"}, ` +
      `set ${KERNEL_PROTOCOL_ENV}=${other} or the \`protocol\` option)`,
    { status: err.status, details: err.details, cause: err },
  );
}

// Answer models: a wrong shape throws ValidationError, which parseAnswer turns into an
// UnexpectedResponse carrying the real status and body excerpt.

function previousState(body: unknown): unknown {
  return typeof body === "object" && body !== null ? ((body as { state?: unknown }).state ?? null) : null;
}

function parseStepList(body: unknown): Step[] {
  // An empty Go slice can be encoded as `null` (docs/protocol.md §4.4); treat it as no steps.
  if (body === null || body === undefined) return [];
  if (!Array.isArray(body)) throw new ValidationError("expected a JSON array of steps");
  return body.map((s) => parseStep(s));
}

function suspendedFlag(body: unknown): boolean {
  const suspended = (body as { suspended?: unknown } | undefined)?.suspended;
  if (typeof suspended !== "boolean") throw new ValidationError('expected {"suspended": boolean}');
  return suspended;
}

function toAck(body: unknown): StepOutcomeAck {
  // 204/empty: older kernels answer outcomes without a body (docs/protocol.md §14.2).
  if (body === undefined) return { decision: "recorded" };
  if (
    typeof body !== "object" ||
    body === null ||
    typeof (body as { decision?: unknown }).decision !== "string"
  ) {
    throw new ValidationError("expected a step outcome decision");
  }
  const b = body as { decision: string; result?: unknown; error?: unknown };
  const ack: { decision: string; result?: unknown; error?: unknown } = { decision: b.decision };
  if ("result" in b) ack.result = b.result;
  if ("error" in b) ack.error = b.error;
  return ack;
}

/**
 * Create the signed, lease-aware agent transport. Uses a keep-alive undici pool for http(s)
 * base URLs, or the injected `fetch` when one is given.
 */
export function createAgentTransport(options: AgentTransportOptions): AgentTransport {
  if (typeof options.agentId !== "string" || options.agentId === "" || /[\r\n]/.test(options.agentId)) {
    throw new ConfigurationError("agentId must be a non-empty string without CR/LF");
  }
  if (options.secret === undefined || options.secret === null || options.secret.length === 0) {
    throw new ConfigurationError("the agent secret is missing (set REBUNO_AGENT_SECRET or pass secret)");
  }
  // Read the environment only where there is one (the transport also runs on Web runtimes).
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const protocol = resolveKernelProtocol(options.protocol, env?.[KERNEL_PROTOCOL_ENV]);
  const core = new Core({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    userAgent: options.userAgent,
    retry: options.retry,
    logger: options.logger,
    connections: options.connections,
  });
  return new AgentTransportImpl(
    {
      core,
      agentId: options.agentId,
      sign: createAgentSigner({
        agentId: options.agentId,
        secret: options.secret,
        clock: options.clock,
        protocol,
        // The fetch engine signs through WebCrypto (async, per attempt, no node:crypto needed);
        // the undici engine keeps the synchronous HMAC on the hot path.
        webCrypto: core.engine === "fetch",
      }),
      protocol,
      leaseRetry: resolveRetryOptions(LEASE_RETRY, options.retry),
    },
    undefined,
    undefined,
  );
}
