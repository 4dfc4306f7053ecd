// B14 of docs/benchmarks.md: durable-execution peers side by side on one workload.
//
//   pnpm tsc -b && node bench/peers.mjs [--quick] [--rounds 5] [--only sqlite-full,restate,dbos]
//                                       [--no-fsyncs] [--profile DIR] [--baseline REF]
//
// Workload: a workflow of 20 sequential no-op durable steps, started by a caller that waits for its
// result (bench/peers/workflows.mjs has the three idiomatic versions):
//   memory       our dev kernel (`rebuno-dev --store memory`), SDK agent, `step()` per durable step
//   sqlite       the same on SQLite as shipped (`synchronous=NORMAL`: survives a killed process)
//   sqlite-full  the same with `--sqlite-synchronous full` (fsync per commit: survives power loss)
//   restate      Restate server (npm binary, default configuration) + its TypeScript SDK, a service
//                handler with 20 `ctx.run`, called through the ingress (fsyncs its log: power loss)
//   dbos         DBOS Transact on PostgreSQL 15 with fsync on, a workflow with 20 `DBOS.runStep`
// Each system is two processes measured from /proc: its server (rebuno-dev, restate-server, the
// postmaster and its backends) and its worker (agent / endpoint / DBOS app, plus the caller).
// Figures per system: (a) per-step latency with one workflow at a time (workflow call → result,
// divided by 20), (b) steps/s with 50 workflows in flight (closed loop), (c) CPU per step of server
// + worker during (b), (d) RSS of server + worker after (b).
// The machine may be shared: systems run interleaved, round after round, and the goals are the
// median over rounds of the per-round ratio (ours at equal durability, sqlite-full, vs Restate).
// Goals: step latency ≤ 0.8× Restate's, steps/s ≥ 1.5× Restate's, CPU per step ≤ 0.5× Restate's.
// After the timed rounds (full mode, where strace works), strace counts each system's fsync-family
// calls per step over a few more sequential workflows: what its durability costs in syncs.
// --baseline REF: also runs sqlite and sqlite-full with the dev kernel of git ref REF (built once
// outside the repo, bench/lib/baseline.mjs) as sqlite-base and sqlite-full-base, interleaved in the
// same rounds, and reports the per-round ratios of ours to them.
// --profile DIR: our kernel, our worker and Restate's worker write `node --cpu-prof` profiles
// there (summarize with bench/cpuprofile.mjs); figures of a profiled run are not comparable.
// The peers install on demand into bench/peers/node_modules (bench/peers/install.mjs); a peer that
// cannot be installed or started is skipped with the reason, never failing the bench.
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { baselineRef, baselineRoot } from "./lib/baseline.mjs";
import { sampleTree } from "./lib/proc.mjs";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";
import { peersChart } from "./peers/chart.mjs";
import { countSyncCalls, straceUnavailable } from "./peers/fsyncs.mjs";
import { ensurePeers } from "./peers/install.mjs";
import { startPostgresForDbos, startRebunoDev, startRestate } from "./peers/servers.mjs";
import { STEPS } from "./peers/workflows.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const WORKER = fileURLToPath(new URL("./peers/worker.mjs", import.meta.url));
const QUICK = process.argv.includes("--quick");
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg("--rounds") ?? (QUICK ? 1 : 5));
const SEQUENTIAL = QUICK ? 5 : 20; // workflows one at a time, per round
const CONCURRENCY = 50;
const WARMUP_SEQUENTIAL = QUICK ? 3 : 40;
const CONCURRENT_TOTAL = QUICK ? 100 : 400; // workflows per round at c=50
const ONLY = arg("--only")?.split(",");
const BASELINE = baselineRef();
const FSYNCS = !QUICK && !process.argv.includes("--no-fsyncs");
const FSYNC_WORKFLOWS = 5;
const PROFILE_DIR = arg("--profile");
const profileArgv = (name) =>
  PROFILE_DIR === undefined
    ? []
    : ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR, "--cpu-prof-name", `${name}.cpuprofile`];

const SYSTEMS = [
  {
    name: "memory",
    peer: false,
    start: () => startRebunoDev("memory", undefined, profileArgv("kernel-memory")),
    worker: "ours",
  },
  {
    name: "sqlite",
    peer: false,
    start: () => startRebunoDev("sqlite", "normal", profileArgv("kernel-sqlite")),
    worker: "ours",
  },
  {
    name: "sqlite-full",
    peer: false,
    start: () => startRebunoDev("sqlite", "full", profileArgv("kernel-sqlite-full")),
    worker: "ours",
  },
  {
    name: "restate",
    peer: true,
    packages: ["@restatedev/restate-server", "@restatedev/restate-sdk"],
    start: startRestate,
    worker: "restate",
  },
  { name: "dbos", peer: true, packages: ["@dbos-inc/dbos-sdk"], start: startPostgresForDbos, worker: "dbos" },
  // --baseline REF: the SQLite rows again with the dev kernel of git ref REF, in the same rounds.
  ...(BASELINE === undefined
    ? []
    : ["normal", "full"].map((level) => ({
        name: level === "normal" ? "sqlite-base" : "sqlite-full-base",
        peer: false,
        start: () => startRebunoDev("sqlite", level, [], baselineRoot(BASELINE)),
        worker: "ours",
      }))),
].filter((s) => ONLY === undefined || ONLY.includes(s.name));

/** Fork the worker of `system`, set it up against its server; resolves with an ask() function. */
async function startWorker(system, config) {
  const child = fork(WORKER, [system.worker], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: system.worker === "dbos" ? [] : profileArgv(`worker-${system.name}`),
  });
  let pending;
  child.on("message", (m) => pending?.(m));
  child.once("exit", (code) => pending?.({ error: `${system.name} worker exited ${code}` }));
  const ask = (message) =>
    new Promise((resolve, reject) => {
      pending = (m) => {
        pending = undefined;
        if (m.error) reject(new Error(`${system.name}: ${m.error}`));
        else resolve(m);
      };
      child.send(message);
    });
  try {
    await ask({ setup: config });
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.disconnect();
    });
  return { pid: child.pid, ask, stop };
}

/** One round of one system: the sequential phase, then the c=50 phase, with CPU and RSS. */
async function measure(running) {
  const roots = [running.server.pid, running.worker.pid];
  const seqCpu0 = sampleTree(roots).cpuUs;
  const seq = await running.worker.ask({ phase: "seq", count: SEQUENTIAL });
  const seqCpu = sampleTree(roots).cpuUs - seqCpu0;
  const conc0 = sampleTree(roots).cpuUs;
  const server0 = sampleTree([running.server.pid]).cpuUs;
  const conc = await running.worker.ask({ phase: "conc", concurrency: CONCURRENCY, total: CONCURRENT_TOTAL });
  const after = sampleTree(roots);
  const server = sampleTree([running.server.pid]);
  const steps = CONCURRENT_TOTAL * STEPS;
  const perStep = (ns) => ns / STEPS;
  return {
    seqStepNs: seq.latenciesNs.map(perStep),
    seqCpuPerStepUs: seqCpu / (SEQUENTIAL * STEPS),
    stepsPerSecond: steps / conc.seconds,
    concStepNs: conc.latenciesNs.map(perStep),
    cpuPerStepUs: (after.cpuUs - conc0) / steps,
    serverCpuPerStepUs: (server.cpuUs - server0) / steps,
    rssMiB: after.rssKiB / 1024,
    serverRssMiB: server.rssKiB / 1024,
    load1: loadavg()[0],
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const loadBefore = loadavg().map((x) => round(x));
  const skipped = {};
  const peerPackages = [...new Set(SYSTEMS.filter((s) => s.peer).flatMap((s) => s.packages))];
  const installed = peerPackages.length > 0 ? ensurePeers(peerPackages) : {};
  const versions = {};
  for (const [name, r] of Object.entries(installed)) if (r.ok) versions[name] = r.version;

  const running = [];
  try {
    for (const system of SYSTEMS) {
      const missing = (system.packages ?? []).map((p) => installed[p]).find((r) => !r.ok);
      if (missing !== undefined) {
        skipped[system.name] = missing.reason;
        console.log(`${system.name.padEnd(12)} skipped: ${missing.reason}`);
        continue;
      }
      try {
        const server = await system.start();
        let worker;
        try {
          worker = await startWorker(system, server.config);
          // Warm-up, the same for every system: JIT (V8 optimizes our step path, and the peers'
          // JavaScript SDKs, only after some thousands of calls: see B12), connections, caches.
          await worker.ask({ phase: "seq", count: WARMUP_SEQUENTIAL });
          await worker.ask({ phase: "conc", concurrency: CONCURRENCY, total: CONCURRENCY });
        } catch (err) {
          await worker?.stop();
          await server.stop();
          throw err;
        }
        running.push({ system, server, worker, rounds: [] });
        console.log(`${system.name.padEnd(12)} ready (server pid ${server.pid}, worker pid ${worker.pid})`);
      } catch (err) {
        // Ours must run; a peer that cannot start is reported and skipped.
        if (!system.peer) throw err;
        skipped[system.name] = err instanceof Error ? err.message.split("\n")[0] : String(err);
        console.log(`${system.name.padEnd(12)} skipped: ${skipped[system.name]}`);
      }
    }

    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order so no system always runs right after the same neighbour.
      const order = running.map((_, i) => running[(i + r) % running.length]);
      for (const run of order) {
        const m = await measure(run);
        run.rounds.push(m);
        console.log(
          `round ${r + 1} ${run.system.name.padEnd(12)} c=1 ${round(median(m.seqStepNs) / 1000)} µs/step | ` +
            `c=50 ${round(m.stepsPerSecond)} steps/s | CPU ${round(m.cpuPerStepUs)} µs/step ` +
            `(server ${round(m.serverCpuPerStepUs)}) | ` +
            `RSS ${round(m.rssMiB)} MiB | load ${round(m.load1)}`,
        );
      }
    }
    const noStrace = FSYNCS ? straceUnavailable() : "not counted (--quick or --no-fsyncs)";
    for (const run of running) {
      if (noStrace !== undefined) {
        run.syncsPerStep = noStrace;
        continue;
      }
      const { counts, seconds } = await countSyncCalls([run.server.pid, run.worker.pid], () =>
        run.worker.ask({ phase: "seq", count: FSYNC_WORKFLOWS }),
      );
      const n = FSYNC_WORKFLOWS * STEPS;
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      run.syncsPerStep = { total: round(total / n), usInSyncCalls: round((seconds * 1e6) / n), ...counts };
      console.log(
        `${run.system.name.padEnd(12)} sync calls per step (c=1): ${JSON.stringify(run.syncsPerStep)}`,
      );
    }
  } finally {
    for (const run of running) {
      await run.worker.stop().catch((err) => console.error(`stop ${run.system.name} worker: ${err.message}`));
      await run.server.stop().catch((err) => console.error(`stop ${run.system.name} server: ${err.message}`));
    }
  }

  const rows = {};
  for (const run of running) {
    const rs = run.rounds;
    const seq = summarize(rs.flatMap((m) => m.seqStepNs));
    const conc = summarize(rs.flatMap((m) => m.concStepNs));
    rows[run.system.name] = {
      stepLatencyC1: { p50Us: seq.p50Us, p99Us: seq.p99Us, n: seq.n },
      stepLatencyC50: { p50Us: conc.p50Us, p99Us: conc.p99Us },
      stepsPerSecond: round(median(rs.map((m) => m.stepsPerSecond))),
      cpuPerStepUs: round(median(rs.map((m) => m.cpuPerStepUs))),
      // of which the server process tree (kernel / restate-server / PostgreSQL); the rest is the worker
      serverCpuPerStepUs: round(median(rs.map((m) => m.serverCpuPerStepUs))),
      cpuPerStepC1Us: round(median(rs.map((m) => m.seqCpuPerStepUs))),
      rssMiB: round(Math.max(...rs.map((m) => m.rssMiB)), 1),
      serverRssMiB: round(Math.max(...rs.map((m) => m.serverRssMiB)), 1),
      // sync calls summed over FSYNC_WORKFLOWS × STEPS (a string: why they were not counted)
      syncCallsPerStep: run.syncsPerStep,
    };
  }

  /** Median over rounds of subject/baseline measured in the same round. */
  const perRound = (subject, baseline, pick) => {
    const a = running.find((r) => r.system.name === subject)?.rounds;
    const b = running.find((r) => r.system.name === baseline)?.rounds;
    if (a === undefined || b === undefined) return undefined;
    return ratio(median(a.map((m, i) => pick(m) / pick(b[i]))), 1);
  };
  const latency = (m) => median(m.seqStepNs);
  const throughput = (m) => m.stepsPerSecond;
  const cpu = (m) => m.cpuPerStepUs;
  const ratios = {};
  if (BASELINE !== undefined) {
    for (const ours of ["sqlite", "sqlite-full"]) {
      const r = {
        baseline: BASELINE,
        stepLatency: perRound(ours, `${ours}-base`, latency),
        stepsPerSecond: perRound(ours, `${ours}-base`, throughput),
        cpuPerStep: perRound(ours, `${ours}-base`, cpu),
      };
      if (r.stepLatency !== undefined) ratios[`${ours}/${ours}-base`] = r;
    }
  }
  for (const ours of ["memory", "sqlite", "sqlite-full"])
    for (const peer of ["restate", "dbos"]) {
      const r = {
        stepLatency: perRound(ours, peer, latency),
        stepsPerSecond: perRound(ours, peer, throughput),
        cpuPerStep: perRound(ours, peer, cpu),
      };
      if (r.stepLatency !== undefined) ratios[`${ours}/${peer}`] = r;
    }

  const goals = [];
  const eq = ratios["sqlite-full/restate"];
  if (eq !== undefined) {
    goals.push(
      {
        goal: "sqlite-full: step latency (c=1) ≤ 0.8× Restate's",
        value: eq.stepLatency,
        pass: eq.stepLatency <= 0.8,
      },
      {
        goal: "sqlite-full: steps/s (c=50) ≥ 1.5× Restate's",
        value: eq.stepsPerSecond,
        pass: eq.stepsPerSecond >= 1.5,
      },
      {
        goal: "sqlite-full: CPU per step ≤ 0.5× Restate's",
        value: eq.cpuPerStep,
        pass: eq.cpuPerStep <= 0.5,
      },
    );
  }
  const result = {
    environment: { ...environment(), cpuModel: cpus()[0]?.model ?? "unknown CPU" },
    date: new Date().toISOString(),
    loadavg: { before: loadBefore, after: loadavg().map((x) => round(x)) },
    steps: STEPS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    sequentialPerRound: SEQUENTIAL,
    concurrentPerRound: CONCURRENT_TOTAL,
    peerVersions: versions,
    systems: rows,
    ratios,
    skipped,
    goals,
  };
  writeChart(result);
  report("B14", result);
}

/**
 * bench/results/bench-peers.svg, and docs/benchmarks/ on a full run of every system with the
 * default counts (like bench/run.mjs: investigation runs never replace the published chart).
 */
function writeChart(result) {
  const svg = peersChart(result);
  if (svg === undefined) return;
  const canonical =
    !QUICK && ONLY === undefined && arg("--rounds") === undefined && PROFILE_DIR === undefined;
  const dirs = [join(ROOT, "bench/results"), ...(canonical ? [join(ROOT, "docs/benchmarks")] : [])];
  for (const dir of dirs) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "bench-peers.svg"), svg);
  }
}

await main();
