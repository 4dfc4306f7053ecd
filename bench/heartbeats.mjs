// B6 of docs/benchmarks.md: lease renewal lateness under load and event-loop blocks.
//
//   pnpm tsc -b && node bench/heartbeats.mjs [--quick] [--executions 1000] [--blocks 0,10,50,100,500]
//
// Wiring: the dev kernel (memory store, 10 s leases: one heartbeat every 3.3 s) in one child
// process; a recording proxy in another child process between the agent and the kernel, which
// timestamps every `POST …/heartbeat` as it arrives (its clock is not blocked by the agent's
// loop); this process hosts one SDK agent with N executions in flight, each handler parked while
// its lease is kept alive. A timer in this process busy-waits B ms once a second (the injected
// event-loop block).
// Lateness of one renewal = (arrival − previous arrival of the same execution) − interval.
// Goals per block length B: p99 lateness ≤ B + 5 ms, and no lease lost (every execution's handler
// ran exactly once and its execution completed).
import { fork } from "node:child_process";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { environment, report, round } from "./lib/stats.mjs";
import { SECRET } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EXECUTIONS = Number(arg("--executions", QUICK ? 100 : 1000));
const BLOCKS = arg("--blocks", QUICK ? "0,100" : "0,10,50,100,500")
  .split(",")
  .map(Number);
const LEASE_SECONDS = 10; // the kernel's minimum: heartbeats every 3.33 s
const INTERVAL_MS = (LEASE_SECONDS * 1000) / 3;
const OBSERVE_MS = QUICK ? 8_000 : 12_000; // per block length: ≥ 2 renewals per execution
const AGENT = "bench-b6";

// ---------------------------------------------------------------------------------------------
// Children: the kernel, and the recording proxy.

async function serveKernel() {
  const { startDevKernel } = await import("@rebuno/dev-kernel");
  const kernel = await startDevKernel({
    store: "memory",
    dispatch: { leaseTimeoutSeconds: LEASE_SECONDS, concurrency: 64, pollMs: 20 },
    retentionMs: 0,
  });
  const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  process.on("disconnect", () => kernel.close().then(() => process.exit(0)));
  process.send({ url });
}

async function serveProxy(kernelUrl) {
  const { Pool } = await import("undici");
  const pool = new Pool(kernelUrl, { connections: 128 });
  let arrivals = new Map(); // execution id → arrival times (ms, this process's clock)
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      if (req.method === "POST" && req.url.endsWith("/heartbeat")) {
        const id = req.url.split("/")[3];
        const list = arrivals.get(id);
        if (list) list.push(at);
        else arrivals.set(id, [at]);
      }
      try {
        const headers = { ...req.headers };
        delete headers.host;
        delete headers.connection;
        const upstream = await pool.request({
          method: req.method,
          path: req.url,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const body = Buffer.from(await upstream.body.arrayBuffer());
        const out = { ...upstream.headers };
        delete out["transfer-encoding"];
        delete out.connection;
        res.writeHead(upstream.statusCode, out);
        res.end(body);
      } catch (error) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "bad_gateway", message: String(error) }));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  process.on("message", (m) => {
    if (m === "take") {
      process.send({ arrivals: Object.fromEntries(arrivals) });
      arrivals = new Map();
    }
  });
  process.on("disconnect", () => process.exit(0));
  server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
}

function forkChild(args) {
  const child = fork(SCRIPT, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", ({ url }) => resolve({ url, child }));
    child.once("exit", (code) => reject(new Error(`${args[0]} child exited ${code}`)));
  });
}

// ---------------------------------------------------------------------------------------------

function busyWait(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the injected block: nothing else runs on this loop meanwhile
  }
}

function lateness(arrivals) {
  const late = [];
  for (const times of Object.values(arrivals)) {
    for (let i = 1; i < times.length; i++) late.push(times[i] - times[i - 1] - INTERVAL_MS);
  }
  late.sort((a, b) => a - b);
  const at = (q) => (late.length ? late[Math.min(late.length - 1, Math.floor(q * late.length))] : Number.NaN);
  return { renewals: late.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(at(1)) };
}

async function main() {
  const sdk = await import("@rebuno/sdk");
  const { Client } = await import("@rebuno/client");
  const kernel = await forkChild(["--serve-kernel"]);
  const proxy = await forkChild(["--serve-proxy", kernel.url]);
  const client = new Client({ baseUrl: kernel.url });
  const takeArrivals = () =>
    new Promise((resolve) => {
      proxy.child.once("message", (m) => resolve(m.arrivals));
      proxy.child.send("take");
    });

  const runs = new Map(); // execution id → handler invocations
  let release;
  let gate;
  let parked = 0;
  let onAllParked;
  const agent = new sdk.Agent(
    AGENT,
    async () => {
      const id = sdk.execution().id;
      runs.set(id, (runs.get(id) ?? 0) + 1);
      if (++parked === EXECUTIONS) onAllParked?.();
      await gate;
      return { ok: true };
    },
    {
      secret: SECRET,
      baseUrl: proxy.url,
      logger: { warn: () => {}, error: (m, f) => console.error(`rebuno: ${m}`, f ?? "") },
    },
  );
  const served = await agent.serve({ host: "127.0.0.1", port: 0 });
  await client.registerAgent({ id: AGENT, webhookUrl: served.url, secret: SECRET });

  const rows = [];
  for (const block of BLOCKS) {
    runs.clear();
    parked = 0;
    gate = new Promise((resolve) => (release = resolve));
    const allParked = new Promise((resolve) => (onAllParked = resolve));
    const ids = [];
    for (let i = 0; i < EXECUTIONS; i += 100) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(100, EXECUTIONS - i) }, () => client.create(AGENT, null)),
      );
      ids.push(...batch.map((e) => e.id));
    }
    await allParked;
    await takeArrivals(); // start counting with every lease held
    const blocker = block > 0 ? setInterval(() => busyWait(block), 1000) : undefined;
    await new Promise((r) => setTimeout(r, OBSERVE_MS));
    if (blocker) clearInterval(blocker);
    const stats = lateness(await takeArrivals());
    release();
    const finals = await Promise.all(
      ids.map((id) => client.waitForTerminal(id, { timeoutMs: 120_000, pollMs: 100 })),
    );
    const completed = finals.filter((e) => e.status === "completed").length;
    const reruns = [...runs.values()].filter((n) => n > 1).length;
    const row = { blockMs: block, executions: EXECUTIONS, ...stats, completed, reruns };
    row.pass = stats.p99Ms <= block + 5 && completed === EXECUTIONS && reruns === 0;
    console.log(
      `block ${String(block).padStart(3)} ms: ${stats.renewals} renewals, lateness p50 ${stats.p50Ms} ms, ` +
        `p99 ${stats.p99Ms} ms, max ${stats.maxMs} ms; completed ${completed}/${EXECUTIONS}, reruns ${reruns}`,
    );
    rows.push(row);
  }

  report("B6", {
    environment: environment(),
    leaseSeconds: LEASE_SECONDS,
    intervalMs: round(INTERVAL_MS),
    rows,
    goals: rows.map((r) => ({
      goal: `B6 block ${r.blockMs} ms: p99 lateness ≤ ${r.blockMs + 5} ms, no lease lost`,
      value: r.p99Ms,
      pass: r.pass,
    })),
  });

  await agent.close();
  await served.close?.();
  proxy.child.disconnect();
  kernel.child.disconnect();
}

if (process.argv[2] === "--serve-kernel") await serveKernel();
else if (process.argv[2] === "--serve-proxy") await serveProxy(process.argv[3]);
else await main();
