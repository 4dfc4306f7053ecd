// B12 of docs/benchmarks.md: kernels side by side on one workload, with the same SDK agent.
//
//   pnpm tsc -b && node --expose-gc bench/kernels.mjs [--quick] [--steps 10] [--only memory,sqlite,go-dev,go-server]
//
// Workload: create an execution; its handler makes STEPS no-op tool calls (one signed submit + one
// signed complete each, through `defineTool`) and returns, which completes it. Run at concurrency 1
// (executions one after another) and 50 (50 created at once, ROUNDS times).
// Kernels, each a separate process on loopback, the agent always in this process (`agent.serve`):
//   memory      our dev kernel, memory store
//   sqlite      our dev kernel, SQLite store as shipped (a temp file)
//   go-dev      the Go kernel's `rebuno dev` (in memory), agent and client with protocol "legacy"
//   go-server   the Go kernel's `rebuno server` on a throwaway PostgreSQL cluster
// The Go rows need Go, the kernel source (REBUNO_KERNEL_SRC, default ../shared/rebuno-kernel) and,
// for go-server, PostgreSQL's initdb/postgres (scripts/real-kernel.mjs builds and starts them);
// when one is missing the row is skipped with the reason, the others still run.
// Figures per kernel: per-step latency p50/p99 at c=1, c=10 and c=50 (timed in the handler around each
// tool call), executions/s at c=50 (first create → last handler return: Go's dispatcher claims at
// most 10 executions per replica every 2 s, so its figure is a dispatch-loop cap, not a step cost;
// it also means Go never has more than ~10 of the 50 executions in flight at once, while ours
// dispatches all 50 together — its c=50 step latency is measured at a lower real concurrency), the
// agent process's CPU per step at c=1 (everything: the client's create and wait polls included),
// and the SDK's CPU per step at c=1: the process CPU spent between a tool call's start and its
// return (sign, send, parse, validate, the no-op body, sign and send the completion), which is the
// SDK's share of a step; at c=1 nothing else runs in the process then but the rare client poll.
// Goals: per-step p50 at c=50 on memory and on SQLite ≤ go-dev's; the SDK's CPU per step on
// go-server ≤ 5 % of its per-step latency.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { freePort } from "@rebuno/test-kit";
import { serveDevKernel, startDevKernelProcess } from "./lib/kernel-harness.mjs";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const STEPS = Number(arg("--steps") ?? (QUICK ? 5 : 10));
const CONCURRENCY = 50;
// Go's dispatcher claims at most 10 executions per replica per 2 s tick: its real concurrency.
const GO_IN_FLIGHT = 10;
const SEQUENTIAL_EXECUTIONS = QUICK ? 4 : 20;
const ROUNDS = QUICK ? 1 : 4;
const ONLY = arg("--only")?.split(",");
// Warm-up per kernel (see `workload`): ours JIT-compiles, the Go binary does not (and its
// dispatch loop makes every execution there cost up to 2 s, so it only warms its sockets).
const WARM_OURS = { sequential: QUICK ? 3 : 40, burst: !QUICK };
const WARM_GO = { sequential: 3, burst: false };
const SECRET = "bench-kernels-secret-0123456789";
const TOKEN = "bench-kernels-token";
const POLICY = "default_action: allow\nrules: []\n";
const quietLogger = { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") };

/** Build the agent for `baseUrl` and serve it on `port`; resolves with its webhook URL and run state. */
async function startAgent(sdk, id, baseUrl, protocol, port) {
  const run = { latencies: [], stepCpuUs: 0, finished: 0, target: 0, onTarget: undefined };
  const noop = sdk.defineTool({
    name: "noop",
    description: "does nothing",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: async (args) => ({ ok: true, n: args.n }),
  });
  const handler = async () => {
    for (let i = 0; i < STEPS; i++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await noop({ n: i });
      run.latencies.push((performance.now() - t0) * 1e6);
      const cpu = process.cpuUsage(cpu0);
      run.stepCpuUs += cpu.user + cpu.system;
    }
    if (++run.finished === run.target) run.onTarget?.();
    return { ok: true };
  };
  const agent = new sdk.Agent(id, handler, { secret: SECRET, baseUrl, logger: quietLogger, protocol });
  const served = await agent.serve({ host: "127.0.0.1", port });
  return { run, served, url: served.url };
}

/** The workload against one kernel; `client` creates and waits. */
async function workload(client, agentId, run, warm) {
  const waitOptions = { timeoutMs: 300_000, pollMs: 100 };
  /** `rounds` rounds of `concurrency` executions created at once; resolves with the wall seconds. */
  const burst = async (concurrency, rounds = ROUNDS) => {
    let seconds = 0;
    for (let r = 0; r < rounds; r++) {
      // The end is the last handler's return, not a client's wait: waiting clients would load
      // the kernel under test (and differently: a stream on ours, polls on Go's).
      run.finished = 0;
      run.target = concurrency;
      const allReturned = new Promise((resolve) => (run.onTarget = resolve));
      const t0 = performance.now();
      const ids = await Promise.all(
        Array.from({ length: concurrency }, () => client.create(agentId, null).then((e) => e.id)),
      );
      await allReturned;
      seconds += (performance.now() - t0) / 1000;
      run.target = 0;
      const done = await Promise.all(ids.map((id) => client.waitForTerminal(id, waitOptions)));
      const failed = done.filter((e) => e.status !== "completed");
      if (failed.length > 0) throw new Error(`${failed.length} executions ended ${failed[0].status}`);
    }
    return seconds;
  };
  // Warm-up: sockets, the kernel's caches and, on our Node kernel and the agent, the JIT. V8
  // optimizes a function after some thousands of calls; three executions (30 steps) left the step
  // path of both processes half in the interpreter and B12 measured that (c=1 p50 1.40 ms on the
  // memory kernel after 3 warm-up executions, 0.78 ms after this warm-up, interleaved runs): a Go
  // binary is compiled ahead of time, so a steady-state comparison warms ours first.
  // `warm.burst` also runs the concurrent paths once.
  for (let i = 0; i < warm.sequential; i++)
    await client.waitForTerminal((await client.create(agentId, null)).id, waitOptions);
  if (warm.burst) await burst(CONCURRENCY, 1);

  run.latencies = [];
  run.stepCpuUs = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < SEQUENTIAL_EXECUTIONS; i++) {
    await client.waitForTerminal((await client.create(agentId, null)).id, waitOptions);
  }
  const cpu = process.cpuUsage(cpu0);
  const c1 = summarize(run.latencies);
  const cpuPerStepUs = round((cpu.user + cpu.system) / (SEQUENTIAL_EXECUTIONS * STEPS));
  const stepCpuUs = round(run.stepCpuUs / (SEQUENTIAL_EXECUTIONS * STEPS));

  // c=10 first: the most Go's dispatcher keeps in flight, so both kernels see the same concurrency.
  run.latencies = [];
  await burst(GO_IN_FLIGHT);
  const c10 = summarize(run.latencies);
  run.latencies = [];
  const seconds = await burst(CONCURRENCY);
  const c50 = summarize(run.latencies);
  return {
    c1: { p50Us: c1.p50Us, p99Us: c1.p99Us, n: c1.n },
    c10: { p50Us: c10.p50Us, p99Us: c10.p99Us, n: c10.n },
    c50: { p50Us: c50.p50Us, p99Us: c50.p99Us, n: c50.n },
    executionsPerSecond: round((ROUNDS * CONCURRENCY) / seconds),
    agentCpuPerStepUs: cpuPerStepUs,
    sdkCpuPerStepUs: stepCpuUs,
  };
}

async function devKernelRow(sdk, Client, name, storeSpec) {
  const kernel = await startDevKernelProcess(SCRIPT, storeSpec, "http://127.0.0.1:9/unused");
  try {
    const agentId = `bench-b12-${name}`;
    const agent = await startAgent(sdk, agentId, kernel.url, undefined, 0);
    try {
      const client = new Client({ baseUrl: kernel.url, env: {} });
      await client.registerAgent({ id: agentId, webhookUrl: agent.url, secret: SECRET });
      return await workload(client, agentId, agent.run, WARM_OURS);
    } finally {
      await agent.served.close();
    }
  } finally {
    await kernel.stop();
  }
}

/** `rebuno dev` or `rebuno server`; throws SetupError (from real-kernel.mjs) when it cannot run. */
async function goKernelRow(sdk, Client, name) {
  const rk = await import("../scripts/real-kernel.mjs");
  const bin = rk.buildKernel({ log: (m) => console.error(m) });
  const agentId = `bench-b12-${name}`;
  const port = await freePort();
  const agents = [
    { id: agentId, webhookUrl: `http://127.0.0.1:${port}/webhook`, secret: SECRET, policy: POLICY },
  ];
  const cleanup = [];
  try {
    let kernel;
    let apiKey;
    if (name === "go-dev") {
      kernel = await rk.startGoDev({ agents, bin });
    } else {
      const pg = await rk.startPostgres();
      cleanup.push(() => pg.stop());
      kernel = await rk.startGoServer({ dbUrl: pg.url, token: TOKEN, agents, bin });
      apiKey = TOKEN;
    }
    cleanup.unshift(() => kernel.stop());
    const agent = await startAgent(sdk, agentId, kernel.url, "legacy", port);
    cleanup.unshift(() => agent.served.close());
    const client = new Client({ baseUrl: kernel.url, apiKey, protocol: "legacy", env: {} });
    return await workload(client, agentId, agent.run, WARM_GO);
  } finally {
    for (const stop of cleanup) await stop().catch((err) => console.error(`cleanup: ${err.message}`));
  }
}

async function main() {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const { SetupError } = await import("../scripts/real-kernel.mjs");
  const sqliteDir = mkdtempSync(join(tmpdir(), "bench-b12-"));
  const subjects = [
    ["memory", () => devKernelRow(sdk, Client, "memory", "memory")],
    ["sqlite", () => devKernelRow(sdk, Client, "sqlite", `sqlite:${join(sqliteDir, "kernel.db")}`)],
    ["go-dev", () => goKernelRow(sdk, Client, "go-dev")],
    ["go-server", () => goKernelRow(sdk, Client, "go-server")],
  ];
  const rows = {};
  const skipped = {};
  try {
    for (const [name, run] of subjects) {
      if (ONLY !== undefined && !ONLY.includes(name)) continue;
      try {
        rows[name] = await run();
        const r = rows[name];
        console.log(
          `${name.padEnd(10)} c=1 p50 ${r.c1.p50Us} µs p99 ${r.c1.p99Us} µs | c=10 p50 ${r.c10.p50Us} µs ` +
            `p99 ${r.c10.p99Us} µs | c=50 p50 ${r.c50.p50Us} µs ` +
            `p99 ${r.c50.p99Us} µs | ${r.executionsPerSecond} executions/s | agent CPU ${r.agentCpuPerStepUs} µs/step, ` +
            `SDK CPU in the step ${r.sdkCpuPerStepUs} µs`,
        );
      } catch (err) {
        // Only a missing prerequisite (Go, kernel source, PostgreSQL) skips a row; anything else fails.
        if (!(err instanceof SetupError)) throw err;
        skipped[name] = err.message;
        console.log(`${name.padEnd(10)} skipped: ${err.message}`);
      }
    }
  } finally {
    rmSync(sqliteDir, { recursive: true, force: true });
  }

  const goals = [];
  const goDev = rows["go-dev"];
  for (const ours of ["memory", "sqlite"]) {
    if (rows[ours] === undefined || goDev === undefined) continue;
    const value = ratio(rows[ours].c50.p50Us, goDev.c50.p50Us);
    goals.push({ goal: `${ours}: step p50 at c=50 ≤ 1.0× go-dev's`, value, pass: value <= 1 });
    const p99 = ratio(rows[ours].c50.p99Us, goDev.c50.p99Us);
    goals.push({ goal: `${ours}: step p99 at c=50 ≤ 1.0× go-dev's`, value: p99, pass: p99 <= 1 });
    // Not a goal of the issue: the same comparison at Go's real in-flight count (see the header).
    const at10 = ratio(rows[ours].c10.p50Us, goDev.c10.p50Us);
    goals.push({ goal: `${ours}: step p50 at c=10 ≤ 1.0× go-dev's (info)`, value: at10, pass: at10 <= 1 });
  }
  const server = rows["go-server"];
  if (server !== undefined) {
    const share = ratio(server.sdkCpuPerStepUs, server.c1.p50Us);
    goals.push({
      goal: "go-server: SDK CPU per step ≤ 5% of step p50 (c=1)",
      value: share,
      pass: share <= 0.05,
    });
  }
  report("B12", {
    environment: environment(),
    date: new Date().toISOString(),
    steps: STEPS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    sequentialExecutions: SEQUENTIAL_EXECUTIONS,
    kernels: rows,
    skipped,
    goals,
  });
}

if (process.argv[2] === "--serve-kernel") {
  await serveDevKernel(process.argv[3], process.argv[4]);
} else {
  await main();
}
