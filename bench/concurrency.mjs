// B5 of docs/benchmarks.md: many executions in flight in ONE agent process against the dev kernel.
//
//   pnpm tsc -b && node --expose-gc bench/concurrency.mjs [--quick] [--levels 1,100,1000,10000]
//
// Wiring: the dev kernel (memory store) runs in a child process; this process hosts one SDK agent
// (`agent.serve`, kernel calls over the transport's undici pool) and the raw baseline client.
// For each concurrency level K:
//   sdk   K executions are created at once; each handler makes STEPS no-op tool calls (a signed
//         submit + a signed complete each) and returns. Steps/s = K × STEPS / wall time from the
//         first create to the last tool call.
//   raw   K concurrent loops of STEPS signed submit + complete pairs, with the same undici pool size
//         as the SDK's transport, against the same kernel: the baseline at the same concurrency.
// Goals: sdk ≥ 0.5 × raw steps/s at every K; per-step p99 at K = 1,000 ≤ 3 × p99 at K = 1.
// Memory: a second pass holds K executions in flight (every handler parked after its steps, leases
// kept alive by heartbeats) and measures this process's heap with forced GCs against the idle
// baseline; then K executions that suspend on an approval hold (the dispatch ends, nothing stays in
// the agent). Goals: ≤ 50 KiB per in-flight execution, ≤ 10 KiB per suspended execution.
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import {
  serveDevKernel,
  signedPost,
  startDevKernelProcess,
  startWebhookReceiver,
} from "./lib/kernel-harness.mjs";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";
import { SECRET } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const levelsArg = process.argv.indexOf("--levels");
const LEVELS =
  levelsArg > 0
    ? process.argv[levelsArg + 1].split(",").map(Number)
    : QUICK
      ? [1, 100]
      : [1, 100, 1000, 10000];
const MEMORY_K = QUICK ? 100 : 1000;
const STEPS = 4;
const CREATE_CONCURRENCY = 64;
const MIN_SAMPLES = QUICK ? 200 : 1000;
const roundsFor = (k) => Math.max(1, Math.ceil(MIN_SAMPLES / (k * STEPS)));
const POOL_CONNECTIONS = 64; // the transport's default undici pool size
const AGENT = "bench-b5";
const HOLD_AGENT = "bench-b5-hold";
const HOLD_POLICY = `default_action: allow
rules:
  - id: hold-everything
    priority: 1
    when: { step_kind: tool_call, target: held }
    then: { decision: require_approval }
`;
const quietLogger = { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") };

async function gcHeap() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

/** Run `fn` over `items` with at most `limit` in flight. */
async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

async function main() {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const receiver = await startWebhookReceiver();
  const kernel = await startDevKernelProcess(SCRIPT, "memory", receiver.url);
  const client = new Client({ baseUrl: kernel.url });

  // One tool, one agent; the handler's behaviour is chosen per run through shared state.
  const noop = sdk.defineTool({
    name: "noop",
    description: "does nothing",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: async (args) => ({ ok: true, n: args.n }),
  });
  const held = sdk.defineTool({
    name: "held",
    description: "held for approval",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: async (args) => ({ ok: true, n: args.n }),
  });
  const run = {
    latencies: [],
    firstStart: undefined,
    stepsDone: 0,
    target: 0,
    onTarget: undefined,
    gate: undefined,
  };
  const handler = async () => {
    for (let i = 0; i < STEPS; i++) {
      const t0 = performance.now();
      run.firstStart ??= t0;
      await noop({ n: i });
      const t1 = performance.now();
      run.latencies.push((t1 - t0) * 1e6);
      if (++run.stepsDone === run.target) run.onTarget?.(t1);
    }
    if (run.gate !== undefined) await run.gate;
    return { ok: true };
  };
  const agent = new sdk.Agent(AGENT, handler, { secret: SECRET, baseUrl: kernel.url, logger: quietLogger });
  const holdAgent = new sdk.Agent(HOLD_AGENT, async () => held({ n: 1 }), {
    secret: SECRET,
    baseUrl: kernel.url,
    logger: quietLogger,
  });
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  const holdServed = await holdAgent.serve({ host: "127.0.0.1", port: 0 });
  await client.registerAgent({ id: AGENT, webhookUrl: served.url, secret: SECRET });
  await client.registerAgent({ id: HOLD_AGENT, webhookUrl: holdServed.url, secret: SECRET });
  await client.setPolicy(HOLD_AGENT, HOLD_POLICY);

  const rawPool = new Pool(kernel.url, { connections: POOL_CONNECTIONS, pipelining: 1 });
  const rawPair = async (executionId, lease, n) => {
    const target = `/v0/executions/${executionId}/steps`;
    const d = await signedPost(
      rawPool,
      target,
      lease,
      `{"kind":"tool_call","target":"noop","args":{"n":${n}},"idempotency":"safe_to_retry","resources":[]}`,
    );
    if (d.decision !== "proceed") throw new Error(`raw: unexpected decision ${JSON.stringify(d)}`);
    await signedPost(rawPool, `${target}/${d.step_id}/complete`, lease, `{"result":{"ok":true,"n":${n}}}`);
  };

  // Steps/s counts from the first tool call to the last, so webhook delivery (the kernel's dispatch
  // loop) is not charged to the SDK; the raw baseline has no delivery either. Small K repeat in
  // rounds until at least MIN_SAMPLES steps were timed.
  async function sdkLevel(k) {
    const latencies = [];
    let seconds = 0;
    for (let r = 0; r < roundsFor(k); r++) {
      run.latencies = latencies;
      run.firstStart = undefined;
      run.stepsDone = 0;
      run.target = k * STEPS;
      const done = new Promise((resolve) => (run.onTarget = resolve));
      const ids = await mapLimit(Array.from({ length: k }), CREATE_CONCURRENCY, () =>
        client.create(AGENT, null).then((e) => e.id),
      );
      seconds += ((await done) - run.firstStart) / 1000;
      await mapLimit(ids, CREATE_CONCURRENCY, (id) =>
        client.waitForTerminal(id, { timeoutMs: 120_000, pollMs: 50 }),
      );
    }
    return { stepsPerSecond: round((roundsFor(k) * k * STEPS) / seconds), latency: summarize(latencies) };
  }

  async function rawLevel(k) {
    const latencies = [];
    let seconds = 0;
    for (let r = 0; r < roundsFor(k); r++) {
      const executions = await mapLimit(Array.from({ length: k }), CREATE_CONCURRENCY, async () => {
        const e = await client.create("bench-agent", null);
        return { id: e.id, lease: await receiver.lease(e.id) };
      });
      const t0 = performance.now();
      await Promise.all(
        executions.map(async ({ id, lease }) => {
          for (let i = 0; i < STEPS; i++) {
            const s = performance.now();
            await rawPair(id, lease, i);
            latencies.push((performance.now() - s) * 1e6);
          }
        }),
      );
      seconds += (performance.now() - t0) / 1000;
      await mapLimit(executions, CREATE_CONCURRENCY, ({ id }) => client.cancel(id).catch(() => undefined));
    }
    return { stepsPerSecond: round((roundsFor(k) * k * STEPS) / seconds), latency: summarize(latencies) };
  }

  // Warm-up: JIT, sockets, kernel maps.
  await sdkLevel(Math.min(50, LEVELS.at(-1)));
  await rawLevel(Math.min(50, LEVELS.at(-1)));

  const levels = [];
  for (const k of LEVELS) {
    const raw = await rawLevel(k);
    const sdkResult = await sdkLevel(k);
    const row = {
      k,
      raw,
      sdk: sdkResult,
      throughputRatio: ratio(sdkResult.stepsPerSecond, raw.stepsPerSecond),
      // The SDK's own share of tail latency at this K (queueing at the kernel affects both sides).
      p99VsRaw: ratio(sdkResult.latency.p99Us, raw.latency.p99Us),
    };
    console.log(
      `K=${String(k).padStart(5)}  raw ${raw.stepsPerSecond} steps/s  sdk ${sdkResult.stepsPerSecond} steps/s ` +
        `(${row.throughputRatio}×)  sdk p50 ${sdkResult.latency.p50Us} µs  p99 ${sdkResult.latency.p99Us} µs ` +
        `(raw p99 ${raw.latency.p99Us} µs)`,
    );
    levels.push(row);
  }

  // Memory per in-flight execution: K handlers parked after their steps, leases held.
  const baseHeap = await gcHeap();
  let release;
  run.gate = new Promise((resolve) => (release = resolve));
  run.stepsDone = 0;
  run.target = MEMORY_K * STEPS;
  const parked = new Promise((resolve) => (run.onTarget = resolve));
  const inflightIds = await mapLimit(Array.from({ length: MEMORY_K }), CREATE_CONCURRENCY, () =>
    client.create(AGENT, null).then((e) => e.id),
  );
  await parked;
  const inflightHeap = await gcHeap();
  release();
  run.gate = undefined;
  await mapLimit(inflightIds, CREATE_CONCURRENCY, (id) =>
    client.waitForTerminal(id, { timeoutMs: 120_000, pollMs: 50 }),
  );

  // Memory per suspended execution: each execution's only step is held for approval.
  const suspendBase = await gcHeap();
  const heldIds = await mapLimit(Array.from({ length: MEMORY_K }), CREATE_CONCURRENCY, () =>
    client.create(HOLD_AGENT, null).then((e) => e.id),
  );
  for (;;) {
    const states = await mapLimit(heldIds, CREATE_CONCURRENCY, (id) => client.get(id));
    if (states.every((e) => e.status === "blocked")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await holdAgent.join();
  const suspendedHeap = await gcHeap();
  await mapLimit(heldIds, CREATE_CONCURRENCY, (id) => client.cancel(id).catch(() => undefined));

  const perInflightKiB = round((inflightHeap - baseHeap) / MEMORY_K / 1024);
  const perSuspendedKiB = round(Math.max(0, suspendedHeap - suspendBase) / MEMORY_K / 1024);
  const byK = Object.fromEntries(levels.map((l) => [l.k, l]));
  const p99At1 = byK[1]?.sdk.latency.p99Us;
  const bigK = LEVELS.includes(1000) ? 1000 : LEVELS.at(-1);
  const p99Big = byK[bigK]?.sdk.latency.p99Us;
  const result = {
    environment: environment(),
    steps: STEPS,
    levels,
    memory: { k: MEMORY_K, perInflightKiB, perSuspendedKiB },
    p99Ratio: p99At1 && p99Big ? ratio(p99Big, p99At1) : undefined,
    p99RatioAtK: bigK,
  };
  result.goals = [
    ...levels.map((l) => ({
      goal: `B5 K=${l.k} sdk ≥ 0.5 × raw steps/s`,
      value: l.throughputRatio,
      pass: l.throughputRatio >= 0.5,
    })),
    { goal: `B5 p99 at K=${bigK} ≤ 3 × p99 at K=1`, value: result.p99Ratio, pass: result.p99Ratio <= 3 },
    { goal: "B5 ≤ 50 KiB per in-flight execution", value: perInflightKiB, pass: perInflightKiB <= 50 },
    { goal: "B5 ≤ 10 KiB per suspended execution", value: perSuspendedKiB, pass: perSuspendedKiB <= 10 },
  ];
  report("B5", result);

  await agent.close();
  await holdAgent.close();
  await served.close?.();
  await holdServed.close?.();
  await rawPool.close();
  await kernel.stop();
  await receiver.close();
}

if (process.argv[2] === "--serve-kernel") {
  await serveDevKernel(process.argv[3], process.argv[4]);
} else {
  await main();
}
