// The first step of an execution against the later ones: per-index step latency through the SDK
// and through raw signed requests on the same dev kernel (memory store, child process), so a
// first-step surcharge can be routed to the SDK or to the kernel.
//
//   pnpm tsc -b && node --expose-gc bench/first-step.mjs [--quick] [--executions 300]
//
// Each execution makes STEPS no-op tool calls; the SDK's are timed in the handler around each call,
// the raw ones around each signed submit + complete pair under a lease taken from the webhook.
// Goal: SDK step 1 p50 ≤ 1.5 × the p50 of steps 2…STEPS (the issue measured 2–3×).
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import {
  serveDevKernel,
  signedPost,
  startDevKernelProcess,
  startWebhookReceiver,
} from "./lib/kernel-harness.mjs";
import { environment, ratio, report, summarize } from "./lib/stats.mjs";
import { SECRET } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const execArg = process.argv.indexOf("--executions");
const EXECUTIONS = execArg > 0 ? Number(process.argv[execArg + 1]) : QUICK ? 40 : 300;
const STEPS = 5;
// --settle-ms N: wait N ms between taking the lease and the raw path's first step (diagnostic: a
// surcharge that disappears then is the kernel finishing the webhook delivery, not step-1 work).
const settleArg = process.argv.indexOf("--settle-ms");
const SETTLE_MS = settleArg > 0 ? Number(process.argv[settleArg + 1]) : 0;
// --gap-ms N: also wait N ms before every later raw step (diagnostic: if later steps then cost as
// much as the first, the surcharge is the idle→busy wake-up of the processes, not step-1 work).
const gapArg = process.argv.indexOf("--gap-ms");
const GAP_MS = gapArg > 0 ? Number(process.argv[gapArg + 1]) : 0;
const AGENT = "bench-first-step";
const quietLogger = { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") };

async function main() {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const receiver = await startWebhookReceiver();
  const kernel = await startDevKernelProcess(SCRIPT, "memory", receiver.url);
  const noop = sdk.defineTool({
    name: "noop",
    description: "does nothing",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: async (args) => ({ ok: true, n: args.n }),
  });
  const sdkByIndex = Array.from({ length: STEPS }, () => []);
  const agent = new sdk.Agent(
    AGENT,
    async () => {
      for (let i = 0; i < STEPS; i++) {
        const t0 = performance.now();
        await noop({ n: i });
        sdkByIndex[i].push((performance.now() - t0) * 1e6);
      }
      return { ok: true };
    },
    { secret: SECRET, baseUrl: kernel.url, logger: quietLogger },
  );
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  const pool = new Pool(kernel.url, { connections: 8, pipelining: 1 });
  try {
    const client = new Client({ baseUrl: kernel.url, env: {} });
    await client.registerAgent({ id: AGENT, webhookUrl: served.url, secret: SECRET });
    const rawByIndex = Array.from({ length: STEPS }, () => []);
    const rawExecution = async (into) => {
      const e = await client.create("bench-agent", null);
      const lease = await receiver.lease(e.id);
      if (SETTLE_MS > 0) await new Promise((r) => setTimeout(r, SETTLE_MS));
      const target = `/v0/executions/${e.id}/steps`;
      for (let i = 0; i < STEPS; i++) {
        if (i > 0 && GAP_MS > 0) await new Promise((r) => setTimeout(r, GAP_MS));
        const t0 = performance.now();
        const d = await signedPost(
          pool,
          target,
          lease,
          `{"kind":"tool_call","target":"noop","args":{"n":${i}},"idempotency":"safe_to_retry","resources":[]}`,
        );
        await signedPost(pool, `${target}/${d.step_id}/complete`, lease, `{"result":{"ok":true,"n":${i}}}`);
        into?.[i].push((performance.now() - t0) * 1e6);
      }
      await client.cancel(e.id);
    };
    const sdkExecution = async () => {
      const e = await client.create(AGENT, null);
      await client.waitForTerminal(e.id, { timeoutMs: 60_000 });
    };
    for (let i = 0; i < 20; i++) {
      await sdkExecution();
      await rawExecution(undefined);
    }
    for (const list of sdkByIndex) list.length = 0;
    for (let i = 0; i < EXECUTIONS; i++) {
      await sdkExecution();
      await rawExecution(rawByIndex);
    }
    const later = (byIndex) => summarize(byIndex.slice(1).flat());
    const sdkFirst = summarize(sdkByIndex[0]);
    const sdkLater = later(sdkByIndex);
    const rawFirst = summarize(rawByIndex[0]);
    const rawLater = later(rawByIndex);
    const sdkRatio = ratio(sdkFirst.p50Us, sdkLater.p50Us);
    const rawRatio = ratio(rawFirst.p50Us, rawLater.p50Us);
    console.log(
      `step 1 vs steps 2…${STEPS} (p50): SDK ${sdkFirst.p50Us} vs ${sdkLater.p50Us} µs (${sdkRatio}×), ` +
        `raw ${rawFirst.p50Us} vs ${rawLater.p50Us} µs (${rawRatio}×)`,
    );
    report("first-step", {
      environment: environment(),
      date: new Date().toISOString(),
      executions: EXECUTIONS,
      sdk: { firstP50Us: sdkFirst.p50Us, laterP50Us: sdkLater.p50Us, ratio: sdkRatio },
      raw: { firstP50Us: rawFirst.p50Us, laterP50Us: rawLater.p50Us, ratio: rawRatio },
      goals: [{ goal: "SDK step 1 p50 ≤ 1.5 × later steps' p50", value: sdkRatio, pass: sdkRatio <= 1.5 }],
    });
  } finally {
    await pool.close();
    await served.close();
    await kernel.stop();
    await receiver.close?.();
  }
}

if (process.argv[2] === "--serve-kernel") {
  await serveDevKernel(process.argv[3], process.argv[4]);
} else {
  await main();
}
