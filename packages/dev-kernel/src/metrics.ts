/**
 * Prometheus counters for `/metrics` (docs/protocol.md §13.3). Counters only grow; gauges that describe
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
  rebuno_dispatch_failures_total: "Webhook deliveries the agent did not accept, by cause (error_class).",
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

/** One counter series. Hot paths hold it (see {@link Metrics.series}) and call `inc()`. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: string) {}

  inc(by = 1): void {
    this.value += by;
  }
}

// One counter: series in creation order (what `render` prints) plus a lookup by label name, then
// label value. Nested maps rather than a joined key: a joined key is a new string per increment,
// hashed again on every lookup, which made `inc` a visible cost on the agent hot path.
interface Counter {
  readonly ordered: CounterSeries[];
  readonly byLabel: Map<string, Map<string, CounterSeries>>;
}

/** In-process counters. Incrementing is a few map lookups; label text is built once per series. */
export class Metrics {
  private readonly values = new Map<CounterName, Counter>();

  /**
   * The series of `name` with at most one label pair, created on first use. Holding it avoids the
   * lookups; the series appears in `/metrics` from its creation on (at 0 until incremented).
   */
  series(name: CounterName, label?: readonly [string, string]): CounterSeries {
    let counter = this.values.get(name);
    if (counter === undefined) {
      counter = { ordered: [], byLabel: new Map() };
      this.values.set(name, counter);
    }
    const labelName = label === undefined ? "" : label[0];
    const labelValue = label === undefined ? "" : label[1];
    let byValue = counter.byLabel.get(labelName);
    if (byValue === undefined) {
      byValue = new Map();
      counter.byLabel.set(labelName, byValue);
    }
    let s = byValue.get(labelValue);
    if (s === undefined) {
      s = new CounterSeries(label === undefined ? "" : labelText({ [labelName]: labelValue }));
      byValue.set(labelValue, s);
      counter.ordered.push(s);
    }
    return s;
  }

  /** Add `by` (default 1) to a counter, optionally with one label pair. */
  inc(name: CounterName, label?: readonly [string, string], by = 1): void {
    this.series(name, label).value += by;
  }

  /** Current value of one series (tests and the CLI use it). */
  get(name: CounterName, label?: readonly [string, string]): number {
    return (
      this.values
        .get(name)
        ?.byLabel.get(label === undefined ? "" : label[0])
        ?.get(label === undefined ? "" : label[1])?.value ?? 0
    );
  }

  /** Prometheus text exposition format 0.0.4. */
  render(gauges: readonly GaugeSample[]): string {
    const lines: string[] = [];
    for (const name of Object.keys(COUNTERS) as CounterName[]) {
      lines.push(`# HELP ${name} ${COUNTERS[name]}`, `# TYPE ${name} counter`);
      const series = this.values.get(name)?.ordered;
      if (series === undefined || series.length === 0) {
        if (!LABELLED.has(name)) lines.push(`${name} 0`);
        continue;
      }
      for (const { labels, value } of series) lines.push(`${name}${labels} ${value}`);
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
  "rebuno_dispatch_failures_total",
  "rebuno_approvals_total",
  "rebuno_worker_errors_total",
  "rebuno_http_requests_total",
]);
