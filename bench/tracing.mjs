// B15 of docs/benchmarks.md: what OpenTelemetry tracing costs a tool call.
//
//   pnpm tsc -b && node bench/tracing.mjs [--quick] [--calls 2000] [--warmup-blocks 40] [--cpu-prof DIR]
//
// --cpu-prof DIR writes each agent's `node --cpu-prof` profile to DIR (read it with
// bench/cpuprofile.mjs); the profiler's own cost inflates every subject alike.
//
// The dev kernel (memory store, no provider) runs in one child process; each subject is an agent
// in its own child process (so its `process.cpuUsage()` is its own), serving on loopback:
//   absent     `@opentelemetry/api` cannot be resolved (bench/lib/hide-otel.cjs): the no-API path.
//   api        the API installed, no tracer provider registered.
//   provider   a BasicTracerProvider with a BatchSpanProcessor and an exporter to nowhere (it
//              drops every batch): spans are built, ended and batched, nothing is sent.
// Each block is one execution whose handler makes BLOCK no-op `defineTool` calls; subjects run
// block by block in turn (absent, api, provider, absent, …), so machine noise meets all of them.
// Reported: wall µs and agent CPU µs per call (the mean and the median of the blocks: the median
// resists the blocks a loaded machine slows down), `api / absent` (goal ≤ 1.02) and the added CPU
// per call with a provider (`provider − api` of the medians, goal ≤ 15 µs).
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serveDevKernel, startDevKernelProcess } from "./lib/kernel-harness.mjs";
import { environment, ratio, report, round } from "./lib/stats.mjs";
import { SECRET } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const HIDE = fileURLToPath(new URL("./lib/hide-otel.cjs", import.meta.url));
const QUICK = process.argv.includes("--quick");
const argAt = (name) => process.argv[process.argv.indexOf(name) + 1];
const CALLS = process.argv.includes("--calls") ? Number(argAt("--calls")) : QUICK ? 600 : 3000;
const BLOCK = QUICK ? 100 : 200;
// The OpenTelemetry SDK's span code takes thousands of calls to reach V8's optimizing tier (the
// compiles run on background threads, which process.cpuUsage counts): the default warm-up (8,000
// calls each) measures a long-running agent's steady state; --warmup-blocks 4 the cold start.
const WARMUP_BLOCKS = process.argv.includes("--warmup-blocks")
  ? Number(argAt("--warmup-blocks"))
  : QUICK
    ? 2
    : 4;
const MODES = ["absent", "api", "provider"];
const PROFILE_DIR = process.argv.includes("--cpu-prof") ? argAt("--cpu-prof") : undefined;

async function agentChild(mode, kernelUrl) {
  if (mode === "provider") {
    const { trace } = await import("@opentelemetry/api");
    const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
    const nowhere = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(nowhere)] }),
    );
  }
  const { Agent, defineTool } = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const noop = defineTool({ name: "noop", execute: (args) => ({ ok: true, n: args.n }) });
  let measured;
  const agent = new Agent(
    `bench-otel-${mode}`,
    async (input) => {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      for (let i = 0; i < input.calls; i++) await noop({ n: i });
      const wallNs = Number(process.hrtime.bigint() - start);
      const used = process.cpuUsage(cpu);
      measured = { wallUs: wallNs / 1000 / input.calls, cpuUs: (used.user + used.system) / input.calls };
      return null;
    },
    { secret: SECRET, baseUrl: kernelUrl, logger: { warn: () => {}, error: console.error } },
  );
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  const client = new Client({ baseUrl: kernelUrl });
  await client.registerAgent({ id: `bench-otel-${mode}`, webhookUrl: served.url, secret: SECRET });
  process.on("message", async ({ calls }) => {
    const { id } = await client.create(`bench-otel-${mode}`, { calls });
    const done = await client.waitForTerminal(id, { timeoutMs: 120_000 });
    if (done.status !== "completed") throw new Error(`bench execution ${done.status}`);
    process.send(measured);
  });
  process.on("disconnect", () => served.close().then(() => process.exit(0)));
  process.send({ ready: true });
}

function startAgent(mode, kernelUrl) {
  const child = fork(SCRIPT, ["--agent", mode, kernelUrl], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: [
      ...(mode === "absent" ? ["--require", HIDE] : []),
      ...(PROFILE_DIR === undefined
        ? []
        : ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR, "--cpu-prof-name", `${mode}.cpuprofile`]),
    ],
  });
  const next = () => new Promise((resolve) => child.once("message", resolve));
  return next().then(() => ({
    child,
    run: (calls) => {
      const answer = next();
      child.send({ calls });
      return answer;
    },
  }));
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main() {
  const kernel = await startDevKernelProcess(SCRIPT, "memory", "http://127.0.0.1:9/");
  const agents = {};
  for (const mode of MODES) agents[mode] = await startAgent(mode, kernel.url);
  for (let i = 0; i < WARMUP_BLOCKS; i++) for (const mode of MODES) await agents[mode].run(BLOCK);
  const samples = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let done = 0; done < CALLS; done += BLOCK) {
    for (const mode of MODES) samples[mode].push(await agents[mode].run(BLOCK));
  }
  for (const { child } of Object.values(agents)) child.disconnect();
  await kernel.stop();
  const per = Object.fromEntries(
    MODES.map((m) => [
      m,
      {
        wallUsPerCall: round(mean(samples[m].map((s) => s.wallUs))),
        cpuUsPerCall: round(mean(samples[m].map((s) => s.cpuUs))),
        medianWallUsPerCall: round(median(samples[m].map((s) => s.wallUs))),
        medianCpuUsPerCall: round(median(samples[m].map((s) => s.cpuUs))),
      },
    ]),
  );
  const apiVsAbsent = ratio(per.api.medianWallUsPerCall, per.absent.medianWallUsPerCall);
  const addedCpu = round(per.provider.medianCpuUsPerCall - per.api.medianCpuUsPerCall);
  report("B15", {
    env: environment(),
    callsPerSubject: samples.absent.length * BLOCK,
    warmupCallsPerSubject: WARMUP_BLOCKS * BLOCK,
    ...per,
    apiVsAbsentWall: apiVsAbsent,
    apiVsAbsentCpu: ratio(per.api.medianCpuUsPerCall, per.absent.medianCpuUsPerCall),
    providerAddedCpuUsPerCall: addedCpu,
    providerVsApiWall: ratio(per.provider.medianWallUsPerCall, per.api.medianWallUsPerCall),
    goals: [
      {
        goal: "B15 API installed, no provider ≤ 1.02 × without it (wall)",
        value: apiVsAbsent,
        pass: apiVsAbsent <= 1.02,
      },
      {
        goal: "B15 provider + batching exporter: added CPU ≤ 15 µs per call",
        value: addedCpu,
        pass: addedCpu <= 15,
      },
    ],
  });
}

if (process.argv.includes("--serve-kernel")) {
  const i = process.argv.indexOf("--serve-kernel");
  await serveDevKernel(process.argv[i + 1], process.argv[i + 2]);
} else if (process.argv.includes("--agent")) {
  const i = process.argv.indexOf("--agent");
  await agentChild(process.argv[i + 1], process.argv[i + 2]);
} else {
  await main();
}
