// The readable side of bench/run.mjs: bench/results/latest.md (goals table, per-bench summary) and
// SVG charts (latency percentiles and throughput vs concurrency from B5, kernels side by side from
// B12, B14's table). A full run also copies the charts to docs/benchmarks/, which docs/benchmarks.md embeds;
// `--quick` figures are too small to publish, so a quick run writes under bench/results/ only.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { groupedBarChart } from "./charts.mjs";

function record(out, bench, id) {
  return out.results[bench]?.records?.find((r) => r.id === id);
}

/** Write latest.md and the charts; returns the paths written. */
export function writeReports(root, out) {
  const dir = join(root, "bench/results");
  mkdirSync(dir, { recursive: true });
  const env = out.environment;
  const date = `${out.generatedAt.slice(0, 16).replace("T", " ")} UTC`;
  const machine = `${env.cpus} × ${env.cpuModel}, ${env.platform}, load ${env.loadavg.join(" ")}`;
  const footer = (baseline) => ({ baseline, machine, node: env.node, date });
  const charts = [];

  const b5 = record(out, "concurrency", "B5");
  if (b5?.levels?.length) {
    charts.push({
      file: "bench-latency.svg",
      title: "B5: per-step latency percentiles by executions in flight (K)",
      svg: groupedBarChart({
        title: "B5: per-step latency percentiles by executions in flight (K)",
        yLabel: "µs per step",
        series: ["SDK p50", "SDK p99", "raw p50", "raw p99"],
        groups: b5.levels.map((l) => ({
          label: `K = ${l.k}`,
          values: [l.sdk.latency.p50Us, l.sdk.latency.p99Us, l.raw.latency.p50Us, l.raw.latency.p99Us],
        })),
        footer: footer("raw signed submit + complete (undici, no SDK) against the same dev kernel"),
      }),
    });
    charts.push({
      file: "bench-throughput.svg",
      title: "B5: steps/s vs concurrency",
      svg: groupedBarChart({
        title: "B5: steps/s vs concurrency (one agent process, dev kernel in memory)",
        yLabel: "steps per second",
        series: ["SDK", "raw round trips"],
        groups: b5.levels.map((l) => ({
          label: `K = ${l.k}`,
          values: [l.sdk.stepsPerSecond, l.raw.stepsPerSecond],
        })),
        footer: footer("raw signed round trips at the same concurrency (goal: SDK ≥ 0.5×)"),
      }),
    });
  }
  const b12 = record(out, "kernels", "B12");
  if (b12 !== undefined && Object.keys(b12.kernels).length > 0) {
    const names = Object.keys(b12.kernels);
    charts.push({
      file: "bench-kernels.svg",
      title: "B12: kernels side by side",
      svg: groupedBarChart({
        title: `B12: per-step latency, same SDK agent, ${b12.steps} tool steps per execution`,
        yLabel: "µs per step",
        series: ["c=1 p50", "c=10 p50", "c=50 p50", "c=50 p99"],
        groups: names.map((n) => {
          const k = b12.kernels[n];
          return { label: n, values: [k.c1.p50Us, k.c10?.p50Us, k.c50.p50Us, k.c50.p99Us] };
        }),
        footer: footer("the Go kernel's `rebuno dev` (goal: ours ≤ 1.0× its step latency at c=50)"),
      }),
    });
  }
  const written = [];
  for (const c of charts) {
    const file = join(dir, c.file);
    writeFileSync(file, c.svg);
    written.push(file);
    if (!out.quick) {
      const docs = join(root, "docs/benchmarks");
      mkdirSync(docs, { recursive: true });
      copyFileSync(file, join(docs, c.file));
      written.push(join(docs, c.file));
    }
  }

  const lines = [
    `# Benchmark results${out.quick ? " (--quick: harness smoke, figures not meaningful)" : ""}`,
    "",
    `${date} · Node ${env.node} · ${machine}`,
    "",
    "Every figure is a ratio against a baseline measured in the same run (see each goal).",
    "",
    "| bench | record | goal | value | result |",
    "| --- | --- | --- | --- | --- |",
    ...out.goals.map(
      (g) =>
        `| ${g.bench} | ${g.id} | ${String(g.goal).replaceAll("|", "\\|")} | ${g.value ?? ""} | ${g.pass ? "PASS" : "MISS"} |`,
    ),
    "",
    "| bench | exit | seconds | note |",
    "| --- | --- | --- | --- |",
    ...Object.entries(out.results).map(([name, r]) =>
      r.skipped
        ? `| ${name} | – | – | skipped: ${r.skipped} |`
        : `| ${name} | ${r.exitCode} | ${r.seconds} | |`,
    ),
  ];
  if (b12 !== undefined) {
    lines.push(
      "",
      "## B12: kernels side by side",
      "",
      "| kernel | c=1 p50 µs | c=1 p99 µs | c=10 p50 µs | c=10 p99 µs | c=50 p50 µs | c=50 p99 µs | executions/s (c=50) | agent CPU µs/step | SDK CPU in the step µs |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    );
    for (const [n, k] of Object.entries(b12.kernels)) {
      lines.push(
        `| ${n} | ${k.c1.p50Us} | ${k.c1.p99Us} | ${k.c10?.p50Us ?? ""} | ${k.c10?.p99Us ?? ""} | ${k.c50.p50Us} | ${k.c50.p99Us} | ${k.executionsPerSecond} | ${k.agentCpuPerStepUs} | ${k.sdkCpuPerStepUs ?? ""} |`,
      );
    }
    for (const [n, why] of Object.entries(b12.skipped ?? {}))
      lines.push(`| ${n} | skipped: ${why} | | | | | | | | |`);
  }
  const b14 = record(out, "peers", "B14");
  if (b14 !== undefined) {
    lines.push(
      "",
      `## B14: durable-execution peers (${b14.steps} sequential steps per workflow, medians of ${b14.rounds} rounds)`,
      "",
      "| system | step p50 µs (c=1) | steps/s (c=50) | CPU µs/step (server part) | RSS MiB | sync calls/step |",
      "| --- | --- | --- | --- | --- | --- |",
    );
    for (const [n, sys] of Object.entries(b14.systems)) {
      lines.push(
        `| ${n} | ${sys.stepLatencyC1.p50Us} | ${sys.stepsPerSecond} | ${sys.cpuPerStepUs} (${sys.serverCpuPerStepUs}) | ${sys.rssMiB} | ${sys.syncCallsPerStep} |`,
      );
    }
    for (const [n, why] of Object.entries(b14.skipped ?? {}))
      lines.push(`| ${n} | skipped: ${why} | | | | |`);
  }
  if (charts.length > 0) {
    lines.push("", "## Charts", "");
    for (const c of charts) lines.push(`![${c.title}](${c.file})`, "");
  }
  const md = join(dir, "latest.md");
  writeFileSync(md, `${lines.join("\n")}\n`);
  written.unshift(md);
  return written;
}
