/** The newest webhook delivery failure of an execution, with its cause. */
import type { Event as KernelEvent } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { time } from "../format.js";

/** The newest delivery outcome, when it is a failure: what the kernel could not do, and why. */
export function DeliveryAlert({ events }: { events: KernelEvent[] }): ComponentChild {
  const last = [...events]
    .reverse()
    .find((e) => e.type.startsWith("dispatch.") && e.type !== "dispatch.queued");
  if (last === undefined || last.type !== "dispatch.failed") return null;
  const p = last.payload;
  // An HTTP status means the agent answered (401/403: wrong secret); a class alone means it was not reached.
  const cause =
    p.http_status !== undefined
      ? `HTTP ${String(p.http_status)}`
      : typeof p.error_class === "string"
        ? p.error_class
        : "";
  const retry =
    typeof p.next_attempt_at === "string" ? `next retry at ${time(p.next_attempt_at)}` : "no retry left";
  return h("div", { class: "alert", id: "delivery-failure" }, [
    h(
      "b",
      null,
      `Webhook delivery failed (attempt ${String(p.attempt)}${p.max_attempts === undefined ? "" : ` of ${String(p.max_attempts)}`})`,
    ),
    `${typeof p.error === "string" ? p.error : "the agent did not acknowledge the webhook"}${cause === "" ? "" : ` — ${cause}`}; ${retry}.`,
  ]);
}
