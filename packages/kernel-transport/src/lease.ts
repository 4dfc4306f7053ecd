import { HEADER_DISPATCH_ATTEMPT, HEADER_DISPATCH_ID, ValidationError } from "@rebuno/protocol";

/**
 * The dispatch lease an agent holds while it works on an execution (docs/protocol.md §1.3, §7.3): the
 * `(dispatch_id, dispatch_attempt)` pair from the webhook plus the lease period.
 */
export interface DispatchLease {
  /** `dispatch_id` from the webhook. */
  readonly dispatchId: string;
  /** `dispatch_attempt` from the webhook (integer ≥ 1). */
  readonly attempt: number;
  /** `lease_timeout_seconds` × 1000. */
  readonly timeoutMs: number;
}

/** The heartbeat cadence for a lease: `min(timeoutMs / 3, 30 s)` (docs/protocol.md §6.6). */
export function heartbeatIntervalMs(lease: Pick<DispatchLease, "timeoutMs">): number {
  return Math.min(lease.timeoutMs / 3, 30_000);
}

const CRLF = /[\r\n]/;

/** Throws `ValidationError` unless the lease can be sent as headers. */
export function assertLease(lease: DispatchLease): void {
  if (typeof lease?.dispatchId !== "string" || lease.dispatchId === "" || CRLF.test(lease.dispatchId)) {
    throw new ValidationError("lease.dispatchId must be a non-empty string without CR/LF");
  }
  if (!Number.isSafeInteger(lease.attempt) || lease.attempt < 1) {
    throw new ValidationError("lease.attempt must be an integer ≥ 1");
  }
  if (!(lease.timeoutMs > 0) || !Number.isFinite(lease.timeoutMs)) {
    throw new ValidationError("lease.timeoutMs must be a positive number");
  }
}

/**
 * `Rebuno-Dispatch-Id` and `Rebuno-Dispatch-Attempt` for a mutation. Reads never send them
 * (docs/protocol.md §14.2); every write does, and the kernel fences stale attempts with them.
 */
export function leaseHeaders(lease: DispatchLease): Record<string, string> {
  assertLease(lease);
  return { [HEADER_DISPATCH_ID]: lease.dispatchId, [HEADER_DISPATCH_ATTEMPT]: String(lease.attempt) };
}
