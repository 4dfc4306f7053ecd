/**
 * One logical call of the HTTP core: its attempts, its retries, and the one promise its caller
 * awaits. It is callback-driven on purpose. The engine reports each attempt to it as an
 * {@link AttemptSink}, and the happy path creates no promise besides the caller's. On Node 20 the
 * SDK's AsyncLocalStorage installs promise hooks, so every promise (and every `await`) costs an
 * init hook; the old `async` chain (request → retryCall → attempt → engine → `pool.request` →
 * `body.text()`) created about a dozen per request (docs/design/transport.md §2).
 *
 * The retry rule is the shared {@link nextRetryDelay}; the caller's `RetryMode` decides what may
 * be re-sent, so a non-idempotent call can never be repeated after a failure that may have
 * reached the server (the call sites in agent-transport.ts say why each mode is safe).
 */
import type { RebunoError } from "@rebuno/protocol";
import type { AttemptSink, Engine, WireRequest, WireResponse } from "./engine.js";
import { toTransportError } from "./errors.js";
import type { TransportLogger } from "./logger.js";
import type { HttpRequest } from "./request.js";
import { errorFromResponse, type HttpResponse, retryAfterMs } from "./responses.js";
import { abortReason, nextRetryDelay, type RetryMode, type RetryOptions } from "./retry.js";

/** What a run needs from its core. */
export interface RunHost {
  readonly sender: Engine;
  readonly logger: TransportLogger;
  /** The attempt's wire request: headers computed for exactly these bytes and this attempt. */
  wire(req: HttpRequest, target: string, body: Buffer | undefined, attempt: number): WireRequest;
}

/** How a call turns its answer into a value, and its failures into errors. */
export interface RunHooks<T> {
  /**
   * A 2xx (or 1xx) answer → the call's value. It runs inside the HTTP client's callback, so it
   * must have no side effects; a throw becomes the call's error (through `fail`, `answered`).
   */
  readonly parse: (res: HttpResponse) => T;
  /**
   * Maps the final error before the promise rejects: after the last attempt, after an abort, or
   * (`answered` true) when `parse` threw on a 2xx answer. Runs outside the client's callbacks.
   */
  readonly fail?: ((error: unknown, answered: boolean) => unknown) | undefined;
}

/** One call in flight. Create it inside a `Promise` executor and call {@link start}. */
export class RequestRun<T> implements AttemptSink {
  private attempt = 0;
  private startedAt = 0;
  private timeoutMs = 0;

  constructor(
    private readonly host: RunHost,
    private readonly req: HttpRequest,
    private readonly target: string,
    private readonly body: Buffer | undefined,
    private readonly mode: RetryMode,
    private readonly retry: RetryOptions,
    private readonly hooks: RunHooks<T>,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Send the next attempt. */
  start(): void {
    const attempt = ++this.attempt;
    if (attempt === 1 && this.req.budgetMs !== undefined) this.startedAt = Date.now();
    const signal = this.req.signal;
    if (signal?.aborted) {
      this.settle(signal.reason, false);
      return;
    }
    let wire: WireRequest;
    try {
      wire = this.host.wire(this.req, this.target, this.body, attempt);
    } catch (error) {
      this.settle(error, false);
      return;
    }
    this.timeoutMs = wire.timeoutMs;
    try {
      this.host.sender.send(wire, this);
    } catch (error) {
      this.onFailure(error); // engines report through the sink; this is only a safety net
    }
  }

  onResponse(res: WireResponse): void {
    if (res.status >= 300) {
      queueMicrotask(() => this.guarded(() => this.failed(errorFromResponse(res))));
      return;
    }
    let value: T;
    try {
      value = this.hooks.parse(res);
    } catch (error) {
      this.settle(error, true);
      return;
    }
    this.resolve(value);
  }

  onFailure(error: unknown): void {
    // Leave the HTTP client's callback first: logging and the caller's error hooks (which may
    // abort other requests) must not run inside undici's socket handling.
    queueMicrotask(() =>
      this.guarded(() => {
        const signal = this.req.signal;
        // Aborted by the caller (lease lost, agent closing): never retried, never a transport error.
        if (signal?.aborted) this.settle(signal.reason ?? error, false);
        else this.failed(toTransportError(error, `${this.req.method} ${this.target}`, this.timeoutMs));
      }),
    );
  }

  // Deferred work runs outside any promise: a throw (a logger that throws, say) must still end
  // the call instead of escaping as an uncaught exception.
  private guarded(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.settle(error, false);
    }
  }

  private failed(error: RebunoError): void {
    if (this.req.signal?.aborted) {
      this.settle(error, false); // no retry once the caller gave up
      return;
    }
    const delayMs =
      this.mode === "never"
        ? undefined
        : nextRetryDelay(error, {
            mode: this.mode,
            retry: this.retry,
            attempt: this.attempt,
            elapsedMs: this.req.budgetMs === undefined ? 0 : Date.now() - this.startedAt,
            budgetMs: this.req.budgetMs,
            retryAfterMs,
          });
    if (delayMs === undefined) {
      this.settle(error, false);
      return;
    }
    const next = this.attempt + 1;
    // Lease-bound calls may retry for a whole outage: log the first retries, then every 2^n-th.
    if (next <= 4 || (next & (next - 1)) === 0) {
      this.host.logger.warn(`retrying ${this.req.method} ${this.req.path} (attempt ${next})`, {
        delayMs: Math.round(delayMs),
        error: error.message,
      });
    }
    this.backoff(delayMs);
  }

  // Aborting the call's signal ends the wait at once, with the signal's reason.
  private backoff(ms: number): void {
    const signal = this.req.signal;
    const onAbort = () => {
      clearTimeout(timer);
      this.settle(abortReason(signal!), false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      this.guarded(() => this.start());
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  }

  // Reject with the error as the caller's hook maps it. Deferred: this can be reached from
  // inside the engine's callbacks (a 2xx whose body does not parse).
  private settle(error: unknown, answered: boolean): void {
    const fail = this.hooks.fail;
    queueMicrotask(() => {
      let mapped = error;
      if (fail !== undefined) {
        try {
          mapped = fail(error, answered);
        } catch (thrown) {
          mapped = thrown;
        }
      }
      this.reject(mapped);
    });
  }
}
