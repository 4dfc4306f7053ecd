/**
 * Resource checkpoints taken after a step body (F53): the kernel marks a resource `due` on the
 * `proceed` decision; the driver snapshots it after the body and before the outcome is recorded,
 * for successes and failures alike. A failed capture is reported, the outcome is kept.
 */

import type { CallState } from "./call-state.js";
import { isControlFlow } from "./control-flow.js";
import type { CaptureFailureRef, CaptureRef, CaptureSet, StepResourceRef } from "./kernel-port.js";
import type { RegisteredResource } from "./resource-types.js";
import { errorMessage } from "./tool-failure.js";

/** Checkpoints one resource; returns the capture or the failure. */
export async function captureOne(
  state: CallState,
  resource: RegisteredResource,
  generation: number,
): Promise<{ capture?: CaptureRef; failure?: CaptureFailureRef }> {
  try {
    if (resource.driver.checkpoint === undefined)
      throw new Error("resource driver does not implement checkpoint()");
    const ref = await resource.driver.checkpoint(resource.handle);
    return { capture: { key: resource.key, generation, checkpointRef: ref } };
  } catch (error) {
    if (isControlFlow(error)) throw error;
    state.logger.warn(`checkpoint of resource '${resource.key}' failed`, { error: errorMessage(error) });
    return { failure: { key: resource.key, generation, error: errorMessage(error) } };
  }
}

/** Captures every due resource named on a decision. */
export async function captureDue(
  state: CallState,
  due: readonly StepResourceRef[],
): Promise<CaptureSet | undefined> {
  const captures: CaptureRef[] = [];
  const failures: CaptureFailureRef[] = [];
  for (const entry of due) {
    if (entry.due !== true) continue;
    const resource = state.resources.get(entry.key);
    if (resource === undefined) {
      failures.push({
        key: entry.key,
        generation: entry.generation,
        error: "resource() was not called in this dispatch",
      });
      continue;
    }
    const out = await captureOne(state, resource, entry.generation);
    if (out.capture !== undefined) captures.push(out.capture);
    if (out.failure !== undefined) failures.push(out.failure);
  }
  if (captures.length === 0 && failures.length === 0) return undefined;
  return {
    ...(captures.length > 0 ? { captures } : {}),
    ...(failures.length > 0 ? { captureFailures: failures } : {}),
  };
}
