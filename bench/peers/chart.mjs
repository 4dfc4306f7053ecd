// The B14 chart: per system, step latency at c=1, CPU per step and wall time per step at c=50
// (1e6 ÷ steps/s), one grouped bar chart with the run's machine, load, Node and date in its footer.
import { groupedBarChart } from "../lib/charts.mjs";
import { round } from "../lib/stats.mjs";

/** SVG text for a B14 result record, or undefined when no system ran. */
export function peersChart(result) {
  const names = Object.keys(result.systems);
  if (names.length === 0) return undefined;
  const env = result.environment;
  return groupedBarChart({
    title: `B14: ${result.steps} durable no-op steps per workflow, peers side by side`,
    yLabel: "µs per step",
    series: ["latency c=1 p50", "CPU per step (c=50)", "wall per step at c=50 (1e6/steps·s)"],
    groups: names.map((n) => {
      const s = result.systems[n];
      return { label: n, values: [s.stepLatencyC1.p50Us, s.cpuPerStepUs, round(1e6 / s.stepsPerSecond)] };
    }),
    footer: {
      baseline:
        "Restate at its default durability (goals for sqlite-full: ≤ 0.8× latency, ≥ 1.5× steps/s, ≤ 0.5× CPU)",
      machine: `${env.cpus} × ${env.cpuModel}, ${env.platform}, load ${result.loadavg.before.join(" ")}`,
      node: env.node,
      date: `${result.date.slice(0, 16).replace("T", " ")} UTC`,
    },
  });
}
