// Create → result latency of a 20-step execution: `Client.waitForTerminal` (follows the
// execution's SSE stream; the dev kernel announces the terminal status) against the status poll
// every 500 ms it used before (the same loop, written out here as the baseline).
//
//   pnpm tsc -b && node --expose-gc bench/wait-terminal.mjs [--quick] [--runs 30]
//
// Wiring: the dev kernel (memory store) in a child process, the SDK agent and the client here.
// Subjects alternate (stream, poll, stream, …) after a warm-up. Besides create → result, each run
// records the delay from the handler's return to the caller holding the result (the agent's
// completion call plus however the caller learns of it): the part the wait itself controls.
// Goal: that delay's median ≤ 5 ms with the stream (the result arrives "on the call"); the 500 ms
// poll is reported next to it (it adds ~250 ms on average).
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { serveDevKernel, startDevKernelProcess } from "./lib/kernel-harness.mjs";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : QUICK ? 6 : 30;
const STEPS = 20;
const SECRET = "bench-wait-secret-0123456789";
const AGENT = "bench-wait";
const OLD_POLL_MS = 500;
const quietLogger = { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") };

/** The pre-stream `waitForTerminal`: read the status, sleep 500 ms, repeat. */
async function pollUntilTerminal(client, id) {
  for (;;) {
    const e = await client.get(id);
    if (["completed", "failed", "cancelled"].includes(e.status)) return e;
    await new Promise((r) => setTimeout(r, OLD_POLL_MS));
  }
}

async function main() {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const kernel = await startDevKernelProcess(SCRIPT, "memory", "http://127.0.0.1:9/unused");
  const noop = sdk.defineTool({
    name: "noop",
    description: "does nothing",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: async (args) => ({ ok: true, n: args.n }),
  });
  let handlerReturnedAt = 0;
  const agent = new sdk.Agent(
    AGENT,
    async () => {
      for (let i = 0; i < STEPS; i++) await noop({ n: i });
      handlerReturnedAt = performance.now();
      return { ok: true };
    },
    { secret: SECRET, baseUrl: kernel.url, logger: quietLogger },
  );
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  try {
    const client = new Client({ baseUrl: kernel.url, env: {} });
    await client.registerAgent({ id: AGENT, webhookUrl: served.url, secret: SECRET });
    /** One execution; pushes create → result and handler return → result, in ns. */
    const once = async (wait, total, delay) => {
      const t0 = performance.now();
      const e = await client.create(AGENT, null);
      const done = await wait(e.id);
      const t1 = performance.now();
      if (done.status !== "completed") throw new Error(`execution ended ${done.status}`);
      total.push((t1 - t0) * 1e6);
      delay.push((t1 - handlerReturnedAt) * 1e6);
    };
    const stream = (id) => client.waitForTerminal(id, { timeoutMs: 60_000 });
    const poll = (id) => pollUntilTerminal(client, id);
    for (let i = 0; i < 3; i++) await once(stream, [], []); // warm-up
    const streamNs = [];
    const pollNs = [];
    const streamDelayNs = [];
    const pollDelayNs = [];
    for (let i = 0; i < RUNS; i++) {
      await once(stream, streamNs, streamDelayNs);
      await once(poll, pollNs, pollDelayNs);
    }
    const s = summarize(streamNs);
    const p = summarize(pollNs);
    const sd = summarize(streamDelayNs);
    const pd = summarize(pollDelayNs);
    const toMs = (us) => round(us / 1000, 2);
    console.log(
      `create → result, ${STEPS} steps, ${RUNS} runs each: stream p50 ${toMs(s.p50Us)} ms (p99 ${toMs(s.p99Us)}), ` +
        `poll 500 ms p50 ${toMs(p.p50Us)} ms (p99 ${toMs(p.p99Us)}); handler return → result: stream p50 ` +
        `${toMs(sd.p50Us)} ms, poll p50 ${toMs(pd.p50Us)} ms`,
    );
    report("wait", {
      environment: environment(),
      date: new Date().toISOString(),
      steps: STEPS,
      runs: RUNS,
      streamMs: { p50: toMs(s.p50Us), p99: toMs(s.p99Us) },
      pollMs: { p50: toMs(p.p50Us), p99: toMs(p.p99Us) },
      handlerReturnToResultMs: {
        stream: { p50: toMs(sd.p50Us), p99: toMs(sd.p99Us) },
        poll: { p50: toMs(pd.p50Us), p99: toMs(pd.p99Us) },
      },
      pollOverStream: ratio(p.p50Us, s.p50Us),
      goals: [
        {
          goal: "stream: handler return → result p50 ≤ 5 ms",
          value: toMs(sd.p50Us),
          pass: sd.p50Us <= 5000,
        },
      ],
    });
  } finally {
    await served.close();
    await kernel.stop();
  }
}

if (process.argv[2] === "--serve-kernel") {
  await serveDevKernel(process.argv[3], process.argv[4]);
} else {
  await main();
}
