// The kernel's event types. No imports: the client re-exports this list, and browser bundles of the
// client must not pull the zod schemas of the wire modules in with it.

/** Every event type the kernel records (documented protocol, events section). */
export const EVENT_TYPES = [
  "execution.created",
  "execution.forked",
  "execution.started",
  "execution.blocked",
  "execution.resumed",
  "execution.completed",
  "execution.failed",
  "execution.cancelled",
  "step.proposed",
  "step.allowed",
  "step.denied",
  "step.awaiting_approval",
  "step.rate_limited",
  "step.executing",
  "step.succeeded",
  "step.failed",
  "step.cancelled",
  "resource.registered",
  "resource.initialized",
  "resource.bound",
  "resource.checkpointed",
  "resource.checkpoint_failed",
  "approval.requested",
  "approval.granted",
  "approval.denied",
  "approval.expired",
  "dispatch.queued",
  "dispatch.acked",
  "dispatch.failed",
  "dispatch.discarded",
] as const;
/** A known event type (consumers must tolerate others). */
export type EventType = (typeof EVENT_TYPES)[number];
