/**
 * One execution: its header, delivery failures, pending approvals, the waterfall (redrawn on each
 * event and, while something runs, every half second so running bodies grow), its subagents and
 * session, the fork panel and, folded, the raw event log.
 */
import type { Execution, Event as KernelEvent, Step } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { useEffect, useState } from "preact/hooks";
import { json, status, time } from "../format.js";
import { kernel, message } from "../kernel.js";
import { deriveWaterfall } from "../waterfall/derive.js";
import { WaterfallView } from "../waterfall/view.js";
import { Approvals } from "./approvals.js";
import { DeliveryAlert } from "./delivery-alert.js";
import { Family } from "./family.js";
import { ForkPanel } from "./fork.js";

const TICK_MS = 500;

function Header({ execution }: { execution: Execution }): ComponentChild {
  return h("div", { class: "card grid" }, [
    h("span", { class: "muted" }, "agent"),
    h("span", null, execution.agentId),
    h("span", { class: "muted" }, "created"),
    h("span", null, new Date(execution.createdAt).toLocaleString()),
    ...(execution.spawnedBy === undefined
      ? []
      : [
          h("span", { class: "muted" }, "started by"),
          h("span", { id: "parent-link" }, [
            "step of ",
            h(
              "a",
              { href: `#/exec/${execution.spawnedBy.executionId}` },
              h("code", null, execution.spawnedBy.executionId),
            ),
          ]),
        ]),
    ...(execution.forkedFrom === undefined
      ? []
      : [
          h("span", { class: "muted" }, "forked from"),
          h("span", { id: "forked-from" }, [
            h("a", { href: `#/exec/${execution.forkedFrom}` }, h("code", null, execution.forkedFrom)),
            ` at event ${String(execution.forkSeq ?? "")}`,
          ]),
        ]),
    h("span", { class: "muted" }, "input"),
    h("pre", null, json(execution.input)),
    ...(execution.output === undefined
      ? []
      : [h("span", { class: "muted" }, "output"), h("pre", null, json(execution.output))]),
    ...(execution.failureReason === undefined
      ? []
      : [h("span", { class: "muted" }, "failure"), h("span", null, execution.failureReason)]),
  ]);
}

function RawEvents({ events }: { events: KernelEvent[] }): ComponentChild {
  return h("details", { id: "raw-events" }, [
    h("summary", null, [`Raw event log (${events.length}) `, h("span", { class: "live" }, "● following")]),
    h("table", { id: "events" }, [
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["#", "Time", "Type", "Payload"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        events.map((e) =>
          h("tr", { "data-event": e.type }, [
            h("td", null, String(e.eventSeq)),
            h("td", null, time(e.occurredAt)),
            h("td", null, h("code", null, e.type)),
            h("td", null, h("pre", null, JSON.stringify(e.payload))),
          ]),
        ),
      ),
    ]),
  ]);
}

export function ExecutionView({ id }: { id: string }): ComponentChild {
  const [execution, setExecution] = useState<Execution | undefined>(undefined);
  const [steps, setSteps] = useState<Step[]>([]);
  const [events, setEvents] = useState<KernelEvent[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const abort = new AbortController();
    const refresh = async (): Promise<void> => {
      const [e, s] = await Promise.all([kernel().get(id), kernel().listSteps(id)]);
      if (!abort.signal.aborted) {
        setExecution(e);
        setSteps(s);
        setNow(Date.now());
      }
    };
    setEvents([]);
    const follow = async (): Promise<void> => {
      await refresh();
      for await (const event of kernel().followEvents(id, { signal: abort.signal, pollMs: 250 })) {
        setEvents((list) => [...list, event]);
        await refresh();
      }
    };
    follow().catch((err: unknown) => {
      if (!abort.signal.aborted) setError(message(err));
    });
    return () => abort.abort();
  }, [id]);
  const live =
    execution !== undefined &&
    (execution.status === "running" || execution.status === "pending" || execution.status === "blocked");
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, [live]);
  const waterfall = deriveWaterfall(events, steps, now);
  return h("section", null, [
    h("h2", null, [
      "Execution ",
      h("code", null, id),
      " ",
      execution === undefined ? null : status(execution.status),
    ]),
    error === undefined ? null : h("div", { class: "alert" }, error),
    h(DeliveryAlert, { events }),
    execution === undefined ? null : h(Header, { execution }),
    h(Approvals, { executionId: id }),
    h("h3", null, "Steps"),
    h(WaterfallView, { w: waterfall }),
    execution === undefined ? null : h(Family, { execution, steps }),
    execution === undefined ? null : h(ForkPanel, { execution, events }),
    h(RawEvents, { events }),
  ]);
}
