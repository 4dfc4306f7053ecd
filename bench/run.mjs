// Runs every benchmark, each in its own `node --expose-gc` child, collects their machine-readable
// lines into bench/results/latest.json, writes bench/results/latest.md and SVG charts (copied to
// docs/benchmarks/ on a full run) and prints one table of goals with PASS/MISS.
//
//   pnpm tsc -b && node bench/run.mjs [--quick] [--check] [--only sdk,micro]
//
// --quick  smaller iteration counts (CI smoke, no timing assertions: about 3 minutes on 2 vCPUs)
// --check  exit 1 when any goal is missed or a bench fails (default: always 0 on MISS, because
//          absolute load on shared machines moves the figures; a crashed bench is still exit 1)
// --only   comma-separated bench names from the list below
//
// A bench reports through `report()` of bench/lib/stats.mjs (`BENCH_JSON {...}` lines) or, for
// older scripts, one JSON line with a `bench` field. Goals are read from either shape:
// `goals: [{ goal, value, pass }]`, `goals: { name: boolean }`, a record whose id ends in
// `.goals` with boolean fields, or top-level booleans named `goal…`.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { writeReports } from "./lib/results-report.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const QUICK = process.argv.includes("--quick");
const CHECK = process.argv.includes("--check");
const onlyArg = process.argv.indexOf("--only");
const ONLY = onlyArg > 0 ? new Set(process.argv[onlyArg + 1].split(",")) : undefined;

const BENCHES = [
  {
    name: "transport",
    file: "bench/transport.mjs",
    args: [],
    quick: ["--iterations", "500", "--warmup", "300"],
  },
  {
    name: "kernel",
    file: "bench/kernel.mjs",
    args: [],
    quick: ["--quick"],
  },
  { name: "sdk", file: "bench/sdk.mjs", args: [], quick: ["--quick"] },
  { name: "micro", file: "bench/micro.mjs", args: [], quick: ["--quick"] },
  { name: "concurrency", file: "bench/concurrency.mjs", args: [], quick: ["--quick"] },
  { name: "heartbeats", file: "bench/heartbeats.mjs", args: [], quick: ["--quick"] },
  { name: "wait-terminal", file: "bench/wait-terminal.mjs", args: [], quick: ["--quick"] },
  { name: "first-step", file: "bench/first-step.mjs", args: [], quick: ["--quick"] },
  { name: "tracing", file: "bench/tracing.mjs", args: [], quick: ["--quick"] },
  // B12: the Go rows skip themselves (with the reason) when Go, the kernel source or PostgreSQL
  // is missing; --quick keeps only our two kernels so the CI smoke needs neither.
  { name: "kernels", file: "bench/kernels.mjs", args: [], quick: ["--quick", "--only", "memory,sqlite"] },
  // Section 3 of the proof issue: RSS with 100k retained executions (SQLite cold tier, memory cap).
  { name: "retained-memory", file: "bench/retained-memory.mjs", args: [], quick: ["--quick"] },
  // B14: durable-execution peers. Restate and DBOS install on demand into bench/peers/node_modules
  // (outside the workspace, pinned by bench/peers/pnpm-lock.yaml); a peer that cannot be installed
  // or started (no PostgreSQL) is skipped with the reason, ours always run.
  { name: "peers", file: "bench/peers.mjs", args: [], quick: ["--quick"] },
  {
    name: "python-vs-ts",
    file: "verify/interop/bench/python-vs-ts.mjs",
    args: [],
    quick: ["--calls", "200", "--rounds", "1"],
    // Needs the official Python SDK's venv (scripts/interop.mjs creates it).
    skip: () =>
      existsSync(join(ROOT, "verify/interop/python/.venv/bin/python"))
        ? undefined
        : "verify/interop/python/.venv missing",
  },
];

const TIMEOUT_MS = (QUICK ? 4 : 20) * 60_000;

/** Run one bench; resolves with its exit code, parsed records and wall time. */
function runBench(bench) {
  return new Promise((resolve) => {
    const args = ["--expose-gc", bench.file, ...(QUICK ? bench.quick : bench.args)];
    const started = Date.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    const records = [];
    let pending = "";
    const onLine = (line) => {
      process.stdout.write(`  [${bench.name}] ${line}\n`);
      const record = parseRecord(line);
      if (record !== undefined) records.push(record);
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      let nl = pending.indexOf("\n");
      while (nl >= 0) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        nl = pending.indexOf("\n");
      }
    });
    // Only this child is ever killed, by its own pid.
    const timer = setTimeout(() => child.kill("SIGTERM"), TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (pending !== "") onLine(pending);
      resolve({
        code: code ?? (signal ? `killed (${signal})` : 1),
        records,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

function parseRecord(line) {
  if (line.startsWith("BENCH_JSON ")) {
    try {
      return JSON.parse(line.slice("BENCH_JSON ".length));
    } catch {
      return undefined;
    }
  }
  if (line.startsWith("{") && line.includes('"bench"')) {
    try {
      const value = JSON.parse(line);
      return typeof value.bench === "string" ? { id: value.bench, ...value } : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Goal rows of one record, whatever shape the bench used. */
function goalsOf(record) {
  const rows = [];
  const id = record.id;
  if (Array.isArray(record.goals)) {
    for (const g of record.goals) rows.push({ id, goal: g.goal, value: g.value, pass: g.pass === true });
  } else if (record.goals !== null && typeof record.goals === "object") {
    for (const [goal, pass] of Object.entries(record.goals))
      rows.push({ id, goal, value: "", pass: pass === true });
  } else if (typeof id === "string" && id.endsWith(".goals")) {
    for (const [goal, pass] of Object.entries(record)) {
      if (typeof pass === "boolean") rows.push({ id, goal, value: "", pass });
    }
  } else {
    for (const [goal, pass] of Object.entries(record)) {
      if (typeof pass === "boolean" && goal.startsWith("goal")) {
        rows.push({ id, goal, value: record.ratio ?? "", pass });
      }
    }
  }
  return rows;
}

async function main() {
  const started = Date.now();
  const env = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown CPU",
    platform: platform(),
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
  console.log(
    `bench/run.mjs ${QUICK ? "--quick " : ""}on Node ${env.node}, ${env.cpus} CPUs, load ${env.loadavg.join(" ")}`,
  );
  const results = {};
  for (const bench of BENCHES) {
    if (ONLY !== undefined && !ONLY.has(bench.name)) continue;
    const skipped = bench.skip?.();
    if (skipped !== undefined) {
      console.log(`\n== ${bench.name}: skipped (${skipped})`);
      results[bench.name] = { skipped };
      continue;
    }
    console.log(
      `\n== ${bench.name}: node --expose-gc ${bench.file} ${(QUICK ? bench.quick : bench.args).join(" ")}`,
    );
    const r = await runBench(bench);
    results[bench.name] = { exitCode: r.code, seconds: Math.round(r.seconds * 10) / 10, records: r.records };
  }

  const rows = [];
  const failures = [];
  for (const [name, r] of Object.entries(results)) {
    if (r.skipped) continue;
    if (r.exitCode !== 0) failures.push(`${name} exited ${r.exitCode}`);
    for (const record of r.records) for (const g of goalsOf(record)) rows.push({ bench: name, ...g });
  }
  const out = {
    generatedAt: new Date().toISOString(),
    quick: QUICK,
    environment: { ...env, loadavgAfter: loadavg().map((x) => Math.round(x * 100) / 100) },
    results,
    goals: rows,
  };
  const file = join(ROOT, "bench/results/latest.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  const reports = writeReports(ROOT, out);

  const width = Math.min(70, Math.max(20, ...rows.map((r) => String(r.goal).length)));
  console.log(
    `\n${"bench".padEnd(13)} ${"record".padEnd(14)} ${"goal".padEnd(width)} ${"value".padStart(14)}  result`,
  );
  for (const r of rows) {
    const value = typeof r.value === "number" ? String(r.value) : String(r.value ?? "");
    console.log(
      `${r.bench.padEnd(13)} ${String(r.id).padEnd(14)} ${String(r.goal).padEnd(width)} ${value.padStart(14)}  ${r.pass ? "PASS" : "MISS"}`,
    );
  }
  for (const [name, r] of Object.entries(results)) {
    if (r.skipped) console.log(`${name.padEnd(13)} skipped: ${r.skipped}`);
    else console.log(`${name.padEnd(13)} exit ${r.exitCode}, ${r.seconds} s, ${r.records.length} records`);
  }
  const missed = rows.filter((r) => !r.pass).length;
  console.log(
    `\n${rows.length - missed}/${rows.length} goals met; ${failures.length} bench failure(s)` +
      `${failures.length ? ` (${failures.join("; ")})` : ""}; ${Math.round((Date.now() - started) / 1000)} s; ` +
      `results in ${[file, ...reports].map((f) => relative(process.cwd(), f) || f).join(", ")}`,
  );
  // A crashed bench is always an error; a missed goal only with --check.
  if (failures.length > 0 || (CHECK && missed > 0)) process.exitCode = 1;
}

await main();
