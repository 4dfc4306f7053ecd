import {
  ConfigurationError,
  type Execution,
  KernelError,
  LeaseSuperseded,
  NotFoundError,
  parseExecution,
  parseResourceView,
  parseStep,
  parseStepDecision,
  type ResourceView,
  type Step,
  type StepDecision,
  TransportError,
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
import { Core, type HttpMethod } from "./http-core.js";
import { assertLease, type DispatchLease } from "./lease.js";
import { type HttpResponse, parseResponseJson } from "./responses.js";
import type { RetryMode } from "./retry.js";
import { type AgentSigner, createAgentSigner } from "./signer.js";
import { escapePathSegment, queryString } from "./url.js";

/** Called when a bound view sees the lease lost or a submission in doubt (LeaseKeeper hook). */
export type LeaseObserver = (error: LeaseSuperseded | SubmissionOutcomeUnknown) => void;

/** Internal: bind a signal *and* an observer (used by `LeaseKeeper.transport`). */
export const BIND_OBSERVED: unique symbol = Symbol("rebuno.transport.bindObserved");

interface Shared {
  readonly core: Core;
  readonly agentId: string;
  readonly sign: AgentSigner;
}

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
  ): Promise<T> {
    const signal = this.signal;
    if (signal?.aborted) return Promise.reject(leaseLost(signal));
    if (lease !== undefined) assertLease(lease);
    const sign = this.s.sign;
    return this.s.core.run(
      {
        method,
        path,
        body,
        retry,
        attemptHeaders: (ctx) => sign(ctx, lease),
        signal,
        timeoutMs: options?.timeoutMs,
        retryOptions: options?.retry,
        budgetMs: options?.budgetMs,
      },
      { parse, fail },
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

  private json(
    method: HttpMethod,
    path: string,
    lease: DispatchLease | undefined,
    body: string | undefined,
    retry: RetryMode,
    options: CallOptions | undefined,
  ): Promise<unknown> {
    return this.call(method, path, lease, body, retry, options, (res) =>
      parseResponseJson(res, method, path),
    );
  }

  // Reads: GET has no side effect, so any no-answer failure or 502/503/504 is retried.
  async getExecution(executionId: string, options?: CallOptions): Promise<Execution> {
    return parseExecution(
      await this.json("GET", exec(executionId), undefined, undefined, "idempotent", options),
    );
  }

  async getPrevious(executionId: string, options?: CallOptions): Promise<unknown> {
    const path = `${exec(executionId)}/previous`;
    const body = await this.json("GET", path, undefined, undefined, "idempotent", options);
    return typeof body === "object" && body !== null ? ((body as { state?: unknown }).state ?? null) : null;
  }

  async listSteps(
    executionId: string,
    filter?: { readonly status?: string | undefined },
    options?: CallOptions,
  ): Promise<Step[]> {
    const path = `${exec(executionId)}/steps${queryString({ status: filter?.status })}`;
    const body = await this.json("GET", path, undefined, undefined, "idempotent", options);
    // An empty Go slice can be encoded as `null` (protocol §4.4); treat it as no steps.
    if (body === null || body === undefined) return [];
    if (!Array.isArray(body)) throw invalidResponse(path, "a JSON array");
    return body.map((s) => parseStep(s));
  }

  async getStep(executionId: string, stepId: string, options?: CallOptions): Promise<Step | null> {
    const path = `${exec(executionId)}/steps/${escapePathSegment(stepId, "step id")}`;
    try {
      return parseStep(await this.json("GET", path, undefined, undefined, "idempotent", options));
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
      // NOT idempotent: the kernel advances the occurrence counter when it records a submission,
      // so a re-sent copy would get the next occurrence, a different step id, and could run the
      // effect twice. Only "unsent-only" failures (connection refused, DNS) are re-sent.
      return this.call(
        "POST",
        path,
        lease,
        submitStepBody(input),
        "unsent-only",
        options,
        (res) => parseStepDecision(parseResponseJson(res, "POST", path)),
        (err, answered) => {
          // The kernel answered 2xx, so it recorded the submission, but the decision is unreadable.
          if (answered) return this.inDoubt(executionId, err);
          const mapped = this.onFailure(err, false);
          if (this.signal?.aborted || !isAmbiguousSubmitFailure(mapped)) return mapped;
          return this.inDoubt(executionId, mapped);
        },
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
    // changes nothing (protocol §6.5 step 6), so a repeat after a lost answer cannot double-record.
    return this.call("POST", path, lease, body, "idempotent", options, (res) =>
      toAck(parseResponseJson(res, "POST", path), path),
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
      return this.outcome(executionId, lease, stepId, "fail", failStepBody(input), options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  heartbeat(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<void> {
    try {
      const path = `${exec(executionId)}/heartbeat`;
      // Retry-safe: a renewal only sets locked_at = now; two renewals equal one. The kernel still
      // fences by attempt, so a late retry can never revive a superseded lease.
      return this.call("POST", path, lease, undefined, "idempotent", options, ignoreBody);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async suspend(executionId: string, lease: DispatchLease, options?: CallOptions): Promise<boolean> {
    const path = `${exec(executionId)}/suspend`;
    // Retry-safe: `suspended: false` changes nothing; after a lost `suspended: true` the dispatch
    // is retired, so a repeat gets 409 lease_superseded, which ends the handler exactly like the
    // Blocked that `true` would have caused. Never a second block or a lost wake-up.
    const body = await this.json("POST", path, lease, undefined, "idempotent", options);
    const suspended = (body as { suspended?: unknown } | undefined)?.suspended;
    if (typeof suspended !== "boolean") throw invalidResponse(path, '{"suspended": boolean}');
    return suspended;
  }

  async completeExecution(
    executionId: string,
    lease: DispatchLease,
    input: CompleteExecutionInput,
    options?: CallOptions,
  ): Promise<void> {
    // Retry-safe: the terminal transition happens once under the kernel's per-execution lock; a
    // repeat after a lost 204 gets 409 (execution_terminal or lease_superseded: the dispatch was
    // retired), which the SDK treats as "stop quietly". Never a second completion.
    const body = completeExecutionBody(input);
    await this.send("POST", `${exec(executionId)}/complete`, lease, body, "idempotent", options);
  }

  async failExecution(
    executionId: string,
    lease: DispatchLease,
    error: string,
    options?: CallOptions,
  ): Promise<void> {
    // Retry-safe for the same reason as completeExecution.
    const body = failExecutionBody(error);
    await this.send("POST", `${exec(executionId)}/fail`, lease, body, "idempotent", options);
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
    // Retry-safe: an identical registration is a no-op that returns the current view (§4.17).
    const text = registerResourceBody(body);
    return parseResourceView(
      await this.json("POST", `${exec(executionId)}/resources`, lease, text, "idempotent", options),
    );
  }

  async bindResource(
    executionId: string,
    lease: DispatchLease,
    key: string,
    binding: unknown,
    options?: CallOptions,
  ): Promise<void> {
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

function invalidResponse(path: string, expected: string): KernelError {
  return new KernelError(`${path}: the kernel's answer is not ${expected}`, {
    status: 200,
    code: "invalid_response",
  });
}

function toAck(body: unknown, path: string): StepOutcomeAck {
  // 204/empty: older kernels answer outcomes without a body (sdk-surface appendix A).
  if (body === undefined) return { decision: "recorded" };
  if (
    typeof body !== "object" ||
    body === null ||
    typeof (body as { decision?: unknown }).decision !== "string"
  ) {
    throw invalidResponse(path, "a step outcome decision");
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
      sign: createAgentSigner({ agentId: options.agentId, secret: options.secret, clock: options.clock }),
    },
    undefined,
    undefined,
  );
}
