import { KernelError, TransportError } from "@rebuno/protocol";
import { isUnsentFailure } from "./errors.js";

/** Retry budget for one call. `attempts` counts every try, the first one included. */
export interface RetryOptions {
  /** Total tries including the first (1 = never retry; `Infinity` = until the budget or signal ends it). */
  readonly attempts: number;
  /** Backoff before the first retry, before jitter. Doubles each retry. */
  readonly baseMs: number;
  /** Cap on one backoff delay (and on an honoured `Retry-After`). */
  readonly maxMs: number;
}

/** 4 tries, 250 ms doubling to at most 4 s: rides out a kernel restart without outliving a lease. */
export const DEFAULT_RETRY: RetryOptions = Object.freeze({ attempts: 4, baseMs: 250, maxMs: 4_000 });

/**
 * Budget of the lease-bound calls the protocol makes safe to repeat (step complete/fail, heartbeat,
 * execution complete/fail) and of step submissions refused before a byte was sent: no attempt
 * limit. They stop when the lease can no longer be renewed (the lease keeper aborts the call's
 * signal), when the dispatch is superseded (same signal), or after the lease period (the call's
 * `budgetMs`), whichever comes first. 250 ms doubling, capped at 2 s with equal jitter: a kernel
 * back from a restart is reached within ~2 s while a herd of agents spreads out.
 */
export const LEASE_RETRY: RetryOptions = Object.freeze({
  attempts: Number.POSITIVE_INFINITY,
  baseMs: 250,
  maxMs: 2_000,
});

/**
 * Which failures a call may be re-sent after:
 * - `"idempotent"`: network errors, timeouts and 502/503/504. Only for calls whose repetition
 *   cannot change the outcome (reads, keyed writes). 4xx and 500 are never retried.
 * - `"unsent-only"`: only failures that prove the request never left the process (connection
 *   refused, DNS, connect timeout). For non-idempotent calls such as step submission.
 * - `"never"`.
 */
export type RetryMode = "idempotent" | "unsent-only" | "never";

/** Gateway statuses that mean "the request did not get a kernel answer; try again". */
export const RETRY_STATUSES: readonly number[] = Object.freeze([502, 503, 504]);

/** The retry rule shared by the agent transport and the client. */
export function isRetryableFailure(err: unknown, mode: RetryMode): boolean {
  switch (mode) {
    case "never":
      return false;
    case "unsent-only":
      return isUnsentFailure(err);
    case "idempotent":
      if (TransportError.isInstance(err)) return true;
      return KernelError.isInstance(err) && RETRY_STATUSES.includes(err.status);
  }
}

/**
 * Backoff before retry number `retry` (1-based): `d = min(maxMs, baseMs · 2^(retry−1))`, then
 * "equal jitter" in `[d/2, d)` so concurrent agents spread out but never retry instantly.
 */
export function retryDelayMs(
  retry: number,
  options: RetryOptions,
  random: () => number = Math.random,
): number {
  // The exponent is capped so that endless retries never overflow to Infinity·0 = NaN.
  const d = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(retry - 1, 30));
  return d / 2 + random() * (d / 2);
}

/** What {@link retryCall} reports before each retry. */
export interface RetryEvent {
  /** The attempt about to start (2 = first retry). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

/** Options for {@link retryCall}. */
export interface RetryCallOptions {
  readonly mode: RetryMode;
  readonly retry?: Partial<RetryOptions> | undefined;
  /** Aborting stops the loop (also during a backoff sleep) with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** No retry starts once the time spent plus the next delay would exceed this budget. */
  readonly budgetMs?: number | undefined;
  /** Server-requested delay (`Retry-After`) for an error, if any; capped at `maxMs`. */
  readonly retryAfterMs?: ((error: unknown) => number | undefined) | undefined;
  readonly onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Injection points for tests. */
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
}

/** Merge partial retry options over {@link DEFAULT_RETRY}, validating them. */
export function resolveRetryOptions(...layers: (Partial<RetryOptions> | undefined)[]): RetryOptions {
  let attempts = DEFAULT_RETRY.attempts;
  let baseMs = DEFAULT_RETRY.baseMs;
  let maxMs = DEFAULT_RETRY.maxMs;
  for (const l of layers) {
    if (l === undefined) continue;
    if (l.attempts !== undefined) attempts = l.attempts;
    if (l.baseMs !== undefined) baseMs = l.baseMs;
    if (l.maxMs !== undefined) maxMs = l.maxMs;
  }
  if (!(Number.isInteger(attempts) || attempts === Number.POSITIVE_INFINITY) || attempts < 1)
    throw new RangeError("retry.attempts must be an integer ≥ 1 (or Infinity)");
  if (!(baseMs >= 0) || !(maxMs >= 0)) throw new RangeError("retry.baseMs and retry.maxMs must be ≥ 0");
  return { attempts, baseMs, maxMs };
}

/** The reason a signal aborted with (a DOMException `AbortError` when it gave none). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The inputs of one retry decision; see {@link nextRetryDelay}. */
export interface RetryDecision {
  readonly mode: RetryMode;
  readonly retry: RetryOptions;
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  /** Time since the first attempt started, when a budget applies. */
  readonly elapsedMs: number;
  readonly budgetMs?: number | undefined;
  readonly retryAfterMs?: ((error: unknown) => number | undefined) | undefined;
  readonly random?: (() => number) | undefined;
}

/**
 * The backoff before re-sending after `error`, or `undefined` to give up: the attempts are used
 * up, the failure is not retryable for the mode ({@link isRetryableFailure}), or the delay would
 * overrun the budget. A server's `Retry-After` replaces the computed delay, capped at `maxMs`.
 * The one retry rule of both {@link retryCall} and the HTTP core's request loop.
 */
export function nextRetryDelay(error: unknown, d: RetryDecision): number | undefined {
  if (d.attempt >= d.retry.attempts || !isRetryableFailure(error, d.mode)) return undefined;
  const hinted = d.retryAfterMs?.(error);
  const delayMs =
    hinted !== undefined ? Math.min(hinted, d.retry.maxMs) : retryDelayMs(d.attempt, d.retry, d.random);
  if (d.budgetMs !== undefined && d.elapsedMs + delayMs > d.budgetMs) return undefined;
  return delayMs;
}

/**
 * Run `fn(attempt)` (attempt is 1-based) and re-run it after failures that
 * {@link isRetryableFailure} allows for `mode`, with jittered exponential backoff. `fn` must
 * rebuild everything that has to be fresh per attempt (timestamps, signatures). The last error is
 * thrown unchanged.
 */
export async function retryCall<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryCallOptions,
): Promise<T> {
  const retry = resolveRetryOptions(options.retry);
  const now = options.now ?? Date.now;
  const started = now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const delayMs = nextRetryDelay(error, {
        mode: options.mode,
        retry,
        attempt,
        elapsedMs: now() - started,
        budgetMs: options.budgetMs,
        retryAfterMs: options.retryAfterMs,
        random: options.random,
      });
      if (delayMs === undefined) throw error;
      options.onRetry?.({ attempt: attempt + 1, delayMs, error });
      await sleep(delayMs, options.signal);
    }
  }
}
