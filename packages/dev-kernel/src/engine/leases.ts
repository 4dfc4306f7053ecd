import { leaseSuperseded } from "../errors.js";
import type { DispatchRow } from "../store/types.js";
import type { KernelContext } from "./context.js";
import { copyDispatch } from "./rows.js";

/** The lease an agent presents: the webhook's `(dispatch_id, dispatch_attempt)`. */
export interface Lease {
  readonly dispatchId: string;
  readonly attempt: number;
}

/**
 * *Current* lease (docs/protocol.md §7.3): the dispatch exists, belongs to the execution and has the same
 * attempt; its status is not checked. Otherwise 409 `lease_superseded`.
 */
export function requireCurrentLease(ctx: KernelContext, executionId: string, lease: Lease): DispatchRow {
  const d = ctx.store.getDispatch(lease.dispatchId);
  if (d === undefined || d.executionId !== executionId || d.attempt !== lease.attempt)
    throw leaseSuperseded();
  return d;
}

/**
 * *Live* lease: current and `in_flight`. A live lease is renewed (`locked_at = now`): every
 * accepted agent write counts as a heartbeat. Otherwise 409 `lease_superseded`.
 */
export function requireLiveLease(ctx: KernelContext, executionId: string, lease: Lease): DispatchRow {
  const d = requireCurrentLease(ctx, executionId, lease);
  if (d.status !== "in_flight") throw leaseSuperseded();
  const renewed = copyDispatch(d);
  renewed.lockedAt = ctx.clock();
  ctx.store.updateDispatch(renewed);
  return renewed;
}
