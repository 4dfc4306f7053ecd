/**
 * What a fork at an event would replay and what would run live (docs/protocol.md §1.9, §4.17): the
 * fork copies the steps settled at or before that event; everything after runs again for real.
 * Pure, unit-tested with the waterfall's derivation.
 */
import type { Event as KernelEvent } from "@rebuno/protocol";

const SETTLING = new Set(["step.succeeded", "step.failed", "step.denied"]);

export interface ForkPlanEntry {
  readonly stepId: string;
  readonly target: string;
  /** `replay`: copied into the fork with its recorded outcome; `live`: asked of the kernel again. */
  readonly mode: "replay" | "live";
}

/** One entry per step the execution's log names, in the order they were proposed. */
export function forkPlan(events: readonly KernelEvent[], atSeq: number): ForkPlanEntry[] {
  const order: string[] = [];
  const targets = new Map<string, string>();
  const settledAt = new Map<string, number>();
  for (const e of events) {
    const p = e.payload as Readonly<Record<string, unknown>>;
    if (!e.type.startsWith("step.") || typeof p.step_id !== "string") continue;
    if (e.type === "step.rate_limited") continue; // refused before any step existed
    if (!targets.has(p.step_id)) {
      order.push(p.step_id);
      targets.set(p.step_id, typeof p.target === "string" ? p.target : "");
    }
    if (SETTLING.has(e.type)) settledAt.set(p.step_id, e.eventSeq);
  }
  return order.map((stepId) => {
    const seq = settledAt.get(stepId);
    return {
      stepId,
      target: targets.get(stepId) ?? "",
      mode: seq !== undefined && seq <= atSeq ? "replay" : "live",
    };
  });
}
