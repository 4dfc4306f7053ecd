/**
 * The waterfall of one execution: a band per dispatch attempt on top, then one row per step on the
 * same time axis. A row's bar runs from proposal to outcome: a thin line while waiting, a hatched
 * gap while a person decides, solid where the body ran (struck through when its attempt died
 * under it), a diamond per later attempt that replayed it. Rows are focusable; Enter or a click
 * opens the step's arguments and result.
 */
import { type ComponentChild, h } from "preact";
import { useState } from "preact/hooks";
import { duration, json, status } from "../format.js";
import type { Attempt, AttemptEnd, BodyRun, DeliveryFailure, StepRow, Waterfall } from "./derive.js";

/** Why an attempt ended, in words. */
export function attemptEndText(end: AttemptEnd): string {
  switch (end.kind) {
    case "running":
      return "running";
    case "completed":
      return "completed the execution";
    case "failed":
      return `failed the execution (${end.reason})`;
    case "cancelled":
      return `ended by cancellation (${end.reason})`;
    case "lease_expired":
      return "lease expired: the agent went silent, the kernel redelivered";
    case "suspended":
      return end.waitingFor === "approval"
        ? "suspended, waiting for an approval"
        : end.waitingFor === "subagent"
          ? "suspended, waiting for a subagent"
          : "suspended";
  }
}

function bodyText(row: StepRow): string {
  const runs = row.bodies;
  if (runs.length === 0) return row.outcome === "succeeded" || row.outcome === "failed" ? "no body ran" : "";
  const parts = runs.map((b) =>
    b.cutShort
      ? `body in attempt ${b.ordinal} cut short`
      : b.inferred
        ? `body ran again in attempt ${b.ordinal}`
        : `body in attempt ${b.ordinal}`,
  );
  const times = runs.filter((b) => !b.cutShort || row.idempotency === "safe_to_retry").length;
  return `${parts.join(", ")}${times > 1 ? ` (body ran ${times} times)` : ""}`;
}

/** The one-line story of a step, shown beside its bar. */
export function stepSummary(row: StepRow): string {
  const parts: string[] = [];
  if (row.denial !== undefined)
    parts.push(
      `denied${row.denial.ruleId === undefined ? "" : ` by ${row.denial.ruleId}`}: ${row.denial.reason}`,
    );
  if (row.approval !== undefined) {
    const a = row.approval;
    const waited = a.decidedMs === undefined ? "" : ` after ${duration(a.decidedMs - a.requestedMs)}`;
    parts.push(
      a.status === "pending"
        ? "waiting for a person"
        : `${a.status}${a.decidedBy === undefined ? "" : ` by ${a.decidedBy}`}${waited}${a.rationale === undefined ? "" : `: “${a.rationale}”`}`,
    );
  }
  if (row.outcome === "indeterminate")
    parts.push("outcome unknown: the attempt died mid-body (at_most_once)");
  const body = bodyText(row);
  if (body !== "") parts.push(body);
  if (row.replayedIn.length > 0) parts.push(`replayed in attempt ${row.replayedIn.join(", ")} (no body ran)`);
  return parts.join(" · ");
}

function pct(ms: number, w: Waterfall): string {
  const span = Math.max(1, w.endMs - w.startMs);
  return `${(Math.min(1, Math.max(0, (ms - w.startMs) / span)) * 100).toFixed(2)}%`;
}

function segment(w: Waterfall, from: number, to: number, cls: string, title: string): ComponentChild {
  const left = pct(from, w);
  const width = `${Math.max(0.4, Number.parseFloat(pct(to, w)) - Number.parseFloat(left)).toFixed(2)}%`;
  return h("span", { class: `seg ${cls}`, style: { left, width }, title });
}

function body(w: Waterfall, row: StepRow, b: BodyRun): ComponentChild {
  const cls = b.cutShort ? "body cut" : `body ${row.outcome}${b.inferred ? " again" : ""}`;
  const title = b.cutShort
    ? `attempt ${b.ordinal}: body cut short when the attempt ended`
    : `attempt ${b.ordinal}: body${b.inferred ? " ran again (inferred: a redelivery proceeds without an event)" : ""}`;
  return h(
    "span",
    { "data-body": b.cutShort ? "cut" : b.inferred ? "again" : "ran", "data-attempt": b.ordinal },
    [segment(w, b.startMs, b.endMs ?? w.endMs, cls, title)],
  );
}

function Bar({ w, row }: { w: Waterfall; row: StepRow }): ComponentChild {
  const end = row.settledMs ?? w.endMs;
  const firstBody = row.bodies[0]?.startMs ?? end;
  const approval = row.approval;
  return h("div", { class: "track", "aria-hidden": "true" }, [
    segment(w, row.proposedMs, firstBody, "wait", "submitted, waiting for its decision or body"),
    approval === undefined
      ? null
      : segment(w, approval.requestedMs, approval.decidedMs ?? w.endMs, "approval", "waiting for a person"),
    ...row.bodies.map((b) => body(w, row, b)),
    row.outcome === "denied" || (row.outcome === "indeterminate" && row.settledMs !== undefined)
      ? h("span", { class: `mark ${row.outcome}`, style: { left: pct(end, w) }, title: row.outcome })
      : null,
    ...row.replayedIn.map((ordinal) => {
      const a = w.attempts.find((x) => x.ordinal === ordinal);
      return a === undefined
        ? null
        : h("span", {
            class: "mark replay",
            style: { left: pct(a.startMs, w) },
            title: `replayed in attempt ${ordinal}`,
          });
    }),
  ]);
}

function StepLine({
  w,
  row,
  open,
  toggle,
}: {
  w: Waterfall;
  row: StepRow;
  open: boolean;
  toggle: () => void;
}): ComponentChild {
  const total = row.settledMs === undefined ? undefined : row.settledMs - row.proposedMs;
  return h(
    "div",
    {
      class: `step-row ${row.outcome}`,
      role: "row",
      tabindex: 0,
      "aria-expanded": open,
      "data-step": row.stepId,
      "data-target": row.target,
      "data-outcome": row.outcome,
      onClick: toggle,
      onKeyDown: (e: KeyboardEvent) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          toggle();
        }
      },
    },
    [
      h("div", { class: "label", role: "cell" }, [
        h("b", null, row.target),
        h("span", { class: "muted" }, ` #${row.occurrence} ${row.idempotency}`),
      ]),
      h("div", { role: "cell" }, [
        status(row.status),
        row.outcome === "indeterminate"
          ? h("span", { class: "status indeterminate" }, "indeterminate")
          : null,
      ]),
      h("div", { class: "timeline", role: "cell" }, [
        h(Bar, { w, row }),
        h("div", { class: "summary" }, [
          stepSummary(row),
          total === undefined ? "" : ` · ${duration(total)}`,
        ]),
      ]),
      h("div", { class: "detail", hidden: !open }, [
        h("div", null, [h("h4", null, "arguments"), h("pre", null, json(row.args))]),
        h("div", null, [
          h("h4", null, row.error === undefined ? "result" : "error"),
          h(
            "pre",
            { class: row.error === undefined ? "" : "error" },
            json(row.error === undefined ? row.result : row.error),
          ),
        ]),
      ]),
    ],
  );
}

function AttemptBand({ w, a }: { w: Waterfall; a: Attempt }): ComponentChild {
  return h("div", { class: `attempt ${a.end.kind}`, "data-attempt": a.ordinal, "data-end": a.end.kind }, [
    h("div", { class: "label" }, [
      h("b", null, `attempt ${a.ordinal}`),
      h("span", { class: "muted" }, ` dispatch ${a.dispatchId.slice(0, 8)} #${a.attempt}`),
    ]),
    h("div", null, a.end.kind === "running" ? status("running") : null),
    h("div", { class: "timeline" }, [
      h("div", { class: "track", "aria-hidden": "true" }, [
        segment(w, a.startMs, a.endMs ?? w.endMs, `band ${a.end.kind}`, attemptEndText(a.end)),
      ]),
      h("div", { class: "summary" }, attemptEndText(a.end)),
    ]),
  ]);
}

/** A delivery the agent did not accept: a mark on the attempts' axis with its cause. */
function FailedDelivery({ w, f }: { w: Waterfall; f: DeliveryFailure }): ComponentChild {
  const of = f.maxAttempts === undefined ? "" : ` of ${f.maxAttempts}`;
  return h("div", { class: "attempt failed-delivery", "data-delivery-failure": f.attempt }, [
    h("div", { class: "label" }, [
      h("b", null, "delivery failed"),
      h("span", { class: "muted" }, ` attempt ${f.attempt}${of}`),
    ]),
    h("div", null, h("span", { class: "status failed" }, f.cause)),
    h("div", { class: "timeline" }, [
      h("div", { class: "track", "aria-hidden": "true" }, [
        h("span", { class: "mark denied", style: { left: pct(f.atMs, w) }, title: f.cause }),
      ]),
      h(
        "div",
        { class: "summary" },
        `agent unreachable or refused: ${f.cause}${f.error === "" ? "" : ` — ${f.error}`}`,
      ),
    ]),
  ]);
}

/** The waterfall (`#waterfall`): attempts, then steps; `#steps` holds the step rows. */
export function WaterfallView({ w }: { w: Waterfall }): ComponentChild {
  const [open, setOpen] = useState<string | undefined>(undefined);
  return h("section", { id: "waterfall" }, [
    h("div", { class: "axis muted" }, [
      `${duration(w.endMs - w.startMs)} from the first event`,
      h("span", { class: "legend" }, [
        h("i", { class: "key body succeeded" }),
        "body ",
        h("i", { class: "key body cut" }),
        "cut short ",
        h("i", { class: "key approval" }),
        "approval wait ",
        h("i", { class: "key replay" }),
        "replay",
      ]),
    ]),
    h(
      "div",
      { id: "attempts" },
      [
        ...w.attempts.map((a) => ({ at: a.startMs, node: h(AttemptBand, { key: `a${a.ordinal}`, w, a }) })),
        ...w.deliveryFailures.map((f) => ({
          at: f.atMs,
          node: h(FailedDelivery, { key: `f${f.atMs}:${f.attempt}`, w, f }),
        })),
      ]
        .sort((x, y) => x.at - y.at)
        .map((r) => r.node),
    ),
    h(
      "div",
      { id: "steps", role: "table", "aria-label": "steps on a time axis" },
      w.steps.map((row) =>
        h(StepLine, {
          key: row.stepId,
          w,
          row,
          open: open === row.stepId,
          toggle: () => setOpen((o) => (o === row.stepId ? undefined : row.stepId)),
        }),
      ),
    ),
  ]);
}
