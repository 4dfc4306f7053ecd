/**
 * Prometheus counters for `/metrics` (protocol §13.3). Counters only grow; gauges that describe
 * current state (queue depth, executions by status) are computed from the store on each scrape by
 * the caller and passed to {@link Metrics.render}.
 */

/** Help text of every counter the kernel increments. */
const COUNTERS = {
  rebuno_executions_created_total: "Executions created.",
  rebuno_executions_finished_total: "Executions that reached a terminal status, by status.",
  rebuno_step_decisions_total: "Step submissions answered, by decision.",
  rebuno_step_outcomes_total: "Step outcomes recorded (complete/fail/settlement), by status.",
  rebuno_replay_hits_total: "Submissions answered from a recorded step.",
  rebuno_policy_decisions_total: "Policy evaluations of new steps, by decision.",
  rebuno_rate_limit_total: "Rate-limit refusals and parks, by outcome.",
  rebuno_dispatch_deliveries_total: "Webhook deliveries, by outcome.",
  rebuno_dispatch_reclaimed_total: "In-flight dispatches returned to pending after their lease expired.",
  rebuno_dispatch_exhausted_total: "Executions failed with dispatch_exhausted.",
  rebuno_approvals_total: "Approvals decided or expired, by outcome.",
  rebuno_llm_usage_missing_total: "Succeeded llm_call steps whose recorded response had no token usage.",
  rebuno_worker_errors_total: "Errors in background work, by loop.",
  rebuno_http_requests_total: "HTTP requests answered, by status code.",
} as const;

/** Name of a kernel counter. */
export type CounterName = keyof typeof COUNTERS;

/** A gauge sample computed at scrape time. */
export interface GaugeSample {
  readonly name: string;
  readonly help: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly value: number;
}

function labelText(labels: Readonly<Record<string, string>> | undefined): string {
  if (labels === undefined) return "";
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]!.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

interface Series {
  readonly labels: string;
  value: number;
}

/** In-process counters. Incrementing is a map lookup; label text is built once per series. */
export class Metrics {
  private readonly values = new Map<CounterName, Map<string, Series>>();

  private series(name: CounterName, label: readonly [string, string] | undefined): Series {
    let byLabel = this.values.get(name);
    if (byLabel === undefined) {
      byLabel = new Map();
      this.values.set(name, byLabel);
    }
    const key = label === undefined ? "" : `${label[0]}\u0000${label[1]}`;
    let s = byLabel.get(key);
    if (s === undefined) {
      s = { labels: label === undefined ? "" : labelText({ [label[0]]: label[1] }), value: 0 };
      byLabel.set(key, s);
    }
    return s;
  }

  /** Add `by` (default 1) to a counter, optionally with one label pair. */
  inc(name: CounterName, label?: readonly [string, string], by = 1): void {
    this.series(name, label).value += by;
  }

  /** Current value of one series (tests and the CLI use it). */
  get(name: CounterName, label?: readonly [string, string]): number {
    return this.values.get(name)?.get(label === undefined ? "" : `${label[0]}\u0000${label[1]}`)?.value ?? 0;
  }

  /** Prometheus text exposition format 0.0.4. */
  render(gauges: readonly GaugeSample[]): string {
    const lines: string[] = [];
    for (const name of Object.keys(COUNTERS) as CounterName[]) {
      lines.push(`# HELP ${name} ${COUNTERS[name]}`, `# TYPE ${name} counter`);
      const series = this.values.get(name);
      if (series === undefined || series.size === 0) {
        if (!LABELLED.has(name)) lines.push(`${name} 0`);
        continue;
      }
      for (const { labels, value } of series.values()) lines.push(`${name}${labels} ${value}`);
    }
    const seen = new Set<string>();
    for (const g of gauges) {
      if (!seen.has(g.name)) {
        seen.add(g.name);
        lines.push(`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} gauge`);
      }
      lines.push(`${g.name}${labelText(g.labels)} ${g.value}`);
    }
    return `${lines.join("\n")}\n`;
  }
}

// Labelled counters have no meaningful zero sample before their first increment.
const LABELLED: ReadonlySet<CounterName> = new Set([
  "rebuno_executions_finished_total",
  "rebuno_step_decisions_total",
  "rebuno_step_outcomes_total",
  "rebuno_policy_decisions_total",
  "rebuno_rate_limit_total",
  "rebuno_dispatch_deliveries_total",
  "rebuno_approvals_total",
  "rebuno_worker_errors_total",
  "rebuno_http_requests_total",
]);
