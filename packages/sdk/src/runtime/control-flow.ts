/** Which errors end or pause the dispatch rather than fail a step (F09). */
import { SubmissionOutcomeUnknown } from "@rebuno/kernel-transport";
import { Blocked, LeaseSuperseded, PolicyError, RateLimited, Terminated } from "@rebuno/protocol";

/** Errors that end or pause the dispatch rather than fail a step (F09). */
export function isControlFlow(error: unknown): boolean {
  return (
    Blocked.isInstance(error) ||
    Terminated.isInstance(error) ||
    LeaseSuperseded.isInstance(error) ||
    PolicyError.isInstance(error) ||
    RateLimited.isInstance(error) ||
    SubmissionOutcomeUnknown.isInstance(error)
  );
}
