/**
 * In-memory token buckets for `then.rate_limit` (docs/protocol.md §9.5).
 *
 * The dev kernel is a single process, so an in-process map is the whole backend; it cannot fail,
 * which means `on_limiter_error` never triggers here (the kernel still honours it if it ever
 * wraps this in something that can).
 */

import type { RateLimitScope } from "./types.js";

/** Outcome of {@link RateLimiter.take}: `waitMs` is how long until one whole token is available. */
export type RateLimitTake = { readonly ok: true } | { readonly ok: false; readonly waitMs: number };

/** A set of token buckets keyed by {@link rateLimitKey}. */
export interface RateLimiter {
  /**
   * Takes one token from `key`'s bucket (capacity `maxCalls`, refilled continuously at
   * `maxCalls / windowMs`). A refused call takes nothing. `waitMs` is exact (not rounded).
   */
  take(key: string, maxCalls: number, windowMs: number): RateLimitTake;
}

interface Bucket {
  tokens: number;
  at: number;
  maxCalls: number;
  windowMs: number;
}

// Sweep full buckets every so many takes so long-running dev kernels don't accumulate one bucket
// per execution forever; a full bucket is indistinguishable from a missing one.
const SWEEP_EVERY = 1024;

/**
 * Creates a limiter driven by `clock` (milliseconds; inject a fake one in tests).
 */
export function createRateLimiter(clock: () => number): RateLimiter {
  const buckets = new Map<string, Bucket>();
  let takes = 0;

  const refill = (b: Bucket, now: number): void => {
    // A clock that steps backwards must not drain the bucket.
    const elapsed = Math.max(0, now - b.at);
    b.tokens = Math.min(b.maxCalls, b.tokens + (elapsed * b.maxCalls) / b.windowMs);
    b.at = now;
  };

  const sweep = (now: number): void => {
    for (const [key, b] of buckets) {
      refill(b, now);
      if (b.tokens >= b.maxCalls) buckets.delete(key);
    }
  };

  return {
    take(key, maxCalls, windowMs) {
      const now = clock();
      takes += 1;
      if (takes % SWEEP_EVERY === 0) sweep(now);
      let b = buckets.get(key);
      if (b === undefined) {
        // New buckets start full.
        b = { tokens: maxCalls, at: now, maxCalls, windowMs };
        buckets.set(key, b);
      } else {
        // A re-registered bundle may change the limit; the new capacity and rate apply from now.
        refill(b, now);
        b.maxCalls = maxCalls;
        b.windowMs = windowMs;
        b.tokens = Math.min(b.tokens, maxCalls);
      }
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, waitMs: ((1 - b.tokens) * windowMs) / maxCalls };
    },
  };
}

/**
 * Bucket key for a rule (docs/protocol.md §9.5): `<rule_id>:exec:<execution_id>` (default),
 * `<rule_id>:agent:<agent_id>` or `<rule_id>:global`.
 */
export function rateLimitKey(
  ruleId: string,
  perWhat: RateLimitScope,
  executionId: string,
  agentId: string,
): string {
  switch (perWhat) {
    case "agent":
      return `${ruleId}:agent:${agentId}`;
    case "global":
      return `${ruleId}:global`;
    default:
      return `${ruleId}:exec:${executionId}`;
  }
}
