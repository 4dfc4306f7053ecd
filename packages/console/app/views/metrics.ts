/**
 * The kernel's /metrics (docs/protocol.md §13.3) as a page, refreshed every second: executions by
 * status, steps by decision and outcome, deliveries and their failures by cause. Step durations
 * (p50/p99 by tool) are not a kernel metric: they are computed here from the steps of the most
 * recent executions, and the page says so.
 */
import type { Step } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { duration } from "../format.js";
import { usePoll } from "../hooks.js";
import { kernel, kernelUrl } from "../kernel.js";
import { quantilesByTool } from "../metrics/durations.js";
import { byLabel, parseMetrics, type Sample, scalar } from "../metrics/parse.js";

const RECENT_EXECUTIONS = 30;

function Bars({
  id,
  title,
  values,
}: {
  id: string;
  title: string;
  values: Map<string, number>;
}): ComponentChild {
  const max = Math.max(1, ...values.values());
  return h("div", { class: "card metric", id }, [
    h("h3", null, title),
    values.size === 0
      ? h("p", { class: "muted" }, "none yet")
      : h(
          "dl",
          null,
          [...values.entries()].map(([k, v]) => [
            h("dt", null, k === "" ? "(all)" : k),
            h("dd", { "data-key": k, "data-value": v }, [
              h("span", { class: "hbar", style: { width: `${(v / max) * 100}%` } }),
              h("span", { class: "num" }, String(v)),
            ]),
          ]),
        ),
  ]);
}

async function loadMetrics(): Promise<Sample[]> {
  const response = await fetch(`${kernelUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  return parseMetrics(await response.text());
}

async function recentSteps(): Promise<Step[]> {
  const { executions } = await kernel().list({ limit: RECENT_EXECUTIONS });
  return (await Promise.all(executions.map((e) => kernel().listSteps(e.id)))).flat();
}

export function MetricsView(): ComponentChild {
  const metrics = usePoll(loadMetrics, []);
  const steps = usePoll(recentSteps, []);
  const samples = metrics.data ?? [];
  const created = scalar(samples, "rebuno_executions_created_total") ?? 0;
  const finished = byLabel(samples, "rebuno_executions_finished_total", "status");
  const doneCount = [...finished.values()].reduce((a, b) => a + b, 0);
  const executions = new Map<string, number>([
    ["created", created],
    ["in progress", created - doneCount],
    ...finished,
  ]);
  const failures = byLabel(samples, "rebuno_dispatch_failures_total", "cause");
  const quantiles = quantilesByTool(steps.data ?? []);
  return h("section", { id: "metrics" }, [
    h("h2", null, ["Metrics ", h("span", { class: "live" }, "● live")]),
    metrics.error === undefined ? null : h("div", { class: "alert" }, metrics.error),
    h("div", { class: "metrics-grid" }, [
      h(Bars, { id: "m-executions", title: "Executions by status", values: executions }),
      h(Bars, {
        id: "m-decisions",
        title: "Steps by decision",
        values: byLabel(samples, "rebuno_step_decisions_total", "decision"),
      }),
      h(Bars, {
        id: "m-outcomes",
        title: "Step outcomes",
        values: byLabel(samples, "rebuno_step_outcomes_total", "status"),
      }),
      h(Bars, {
        id: "m-deliveries",
        title: "Webhook deliveries",
        values: byLabel(samples, "rebuno_dispatch_deliveries_total", "outcome"),
      }),
      samples.length > 0 &&
      !samples.some((s) => s.name === "rebuno_dispatch_failures_total") &&
      failures.size === 0
        ? h("div", { class: "card metric", id: "m-failures" }, [
            h("h3", null, "Delivery failures by cause"),
            h(
              "p",
              { class: "muted" },
              "None recorded (a kernel without rebuno_dispatch_failures_total never reports them).",
            ),
          ])
        : h(Bars, { id: "m-failures", title: "Delivery failures by cause", values: failures }),
      h(Bars, {
        id: "m-leases",
        title: "Leases and replays",
        values: new Map([
          ["leases reclaimed", scalar(samples, "rebuno_dispatch_reclaimed_total") ?? 0],
          ["replay hits", scalar(samples, "rebuno_replay_hits_total") ?? 0],
          ["approvals pending", scalar(samples, "rebuno_approvals_pending") ?? 0],
        ]),
      }),
    ]),
    h("div", { class: "card", id: "m-durations" }, [
      h("h3", null, "Step duration by tool"),
      h(
        "p",
        { class: "muted" },
        `From the steps of the ${RECENT_EXECUTIONS} most recent executions (the kernel keeps no duration histogram).`,
      ),
      h("table", null, [
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            ["Tool", "Steps", "p50", "p99"].map((t) => h("th", null, t)),
          ),
        ),
        h(
          "tbody",
          null,
          quantiles.map((q) =>
            h("tr", { "data-tool": q.target }, [
              h("td", null, q.target),
              h("td", null, String(q.count)),
              h("td", null, duration(q.p50)),
              h("td", null, duration(q.p99)),
            ]),
          ),
        ),
      ]),
    ]),
  ]);
}
