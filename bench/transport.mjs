// Benchmark: a signed kernel round trip through @rebuno/kernel-transport vs a raw signed
// undici.request to the same loopback server (docs/benchmarks.md B1/B3/B9, for the transport).
//
//   pnpm tsc -b packages/kernel-transport && node bench/transport.mjs [--iterations 5000] [--check]
//
// Subjects run interleaved in blocks (A, B, C, A, B, C…) after a warm-up; the server is a child
// process so `process.cpuUsage()` here is client CPU only. Goals (ratios, same run):
//   transport submitStep mean ≤ 1.5 × raw mean; client CPU/request ≤ 1.5 × raw; signing ≤ 5 % of
//   a transport round trip. `--check` exits 1 when a goal is missed.
import { createHmac } from "node:crypto";
import os from "node:os";
import { fileURLToPath } from "node:url";
import {
  AGENT_ID,
  measure,
  round,
  SECRET,
  serveKernel,
  startKernelProcess,
  summarize,
} from "./lib/transport-harness.mjs";

if (process.argv.includes("--serve")) {
  serveKernel();
} else {
  await main();
}

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

async function main() {
  const { Pool, request } = await import("undici");
  const { createAgentSigner, createAgentTransport } = await import("@rebuno/kernel-transport");
  const iterations = arg("--iterations", 5000);
  const warmup = arg("--warmup", 2000);
  const blocks = 50; // small blocks: every subject sees the same bursts of machine noise
  const kernel = await startKernelProcess(fileURLToPath(import.meta.url));

  const execId = "018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b";
  const lease = { dispatchId: "01920000-0000-7000-8000-000000000001", attempt: 1, timeoutMs: 120_000 };
  const args = {
    to: "ops@example.com",
    subject: "weekly report",
    body: "All systems nominal.",
    cc: ["a@b.c"],
  };
  const stepInput = { kind: "tool_call", target: "send_email", args, idempotency: "safe_to_retry" };

  // (1) Raw: the same signed bytes a minimal hand-written client would send.
  const rawTarget = `/v0/executions/${execId}/steps`;
  const rawUrl = kernel.url + rawTarget;
  const raw = async () => {
    const body = JSON.stringify(stepInput);
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", SECRET)
      .update(`rebuno-request-v1\nPOST\n${rawTarget}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
      .update(body)
      .digest("hex");
    const res = await request(rawUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "rebuno-agent-id": AGENT_ID,
        "rebuno-timestamp": ts,
        "rebuno-dispatch-id": lease.dispatchId,
        "rebuno-dispatch-attempt": String(lease.attempt),
        "rebuno-signature": `v1=${sig}`,
      },
      body,
    });
    const decision = await res.body.json();
    if (res.statusCode !== 200 || decision.decision !== "proceed") throw new Error(`raw: ${res.statusCode}`);
  };

  // (1b) The floor for any client on a dedicated keep-alive pool (what the transport builds on).
  const pool = new Pool(kernel.url, { connections: 64, pipelining: 1 });
  const rawPool = async () => {
    const body = JSON.stringify(stepInput);
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", SECRET)
      .update(`rebuno-request-v1\nPOST\n${rawTarget}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
      .update(body)
      .digest("hex");
    const res = await pool.request({
      path: rawTarget,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "rebuno-agent-id": AGENT_ID,
        "rebuno-timestamp": ts,
        "rebuno-dispatch-id": lease.dispatchId,
        "rebuno-dispatch-attempt": String(lease.attempt),
        "rebuno-signature": `v1=${sig}`,
      },
      body,
    });
    const decision = JSON.parse(await res.body.text());
    if (res.statusCode !== 200 || decision.decision !== "proceed")
      throw new Error(`rawPool: ${res.statusCode}`);
  };

  // (1c) The floor below that: the same pool through `dispatch` with a minimal handler that
  // collects the body Buffers and settles one promise, which is what the transport's undici engine
  // does (no Readable, no AsyncResource). Informational: the goals stay against (1).
  const rawDispatch = () =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(stepInput);
      const ts = String(Math.floor(Date.now() / 1000));
      const sig = createHmac("sha256", SECRET)
        .update(`rebuno-request-v1\nPOST\n${rawTarget}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
        .update(body)
        .digest("hex");
      const chunks = [];
      let status = 0;
      pool.dispatch(
        {
          path: rawTarget,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "rebuno-agent-id": AGENT_ID,
            "rebuno-timestamp": ts,
            "rebuno-dispatch-id": lease.dispatchId,
            "rebuno-dispatch-attempt": String(lease.attempt),
            "rebuno-signature": `v1=${sig}`,
          },
          body,
        },
        {
          onRequestStart() {},
          onResponseStart(_c, statusCode) {
            status = statusCode;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            const decision = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            if (status !== 200 || decision.decision !== "proceed")
              reject(new Error(`rawDispatch: ${status}`));
            else resolve();
          },
          onResponseError(_c, err) {
            reject(err);
          },
        },
      );
    });

  // (2) The transport (undici engine) and (3) the same transport over ky + global fetch.
  const lean = createAgentTransport({ baseUrl: kernel.url, agentId: AGENT_ID, secret: SECRET });
  const viaFetch = createAgentTransport({
    baseUrl: kernel.url,
    agentId: AGENT_ID,
    secret: SECRET,
    fetch: (r) => fetch(r),
  });
  const submit = (t) => async () => {
    const d = await t.submitStep(execId, lease, stepInput);
    if (d.decision !== "proceed") throw new Error("transport: unexpected decision");
  };
  const subjects = {
    raw: { run: raw },
    rawPool: { run: rawPool },
    rawDispatch: { run: rawDispatch },
    transport: { run: submit(lean) },
    transportComplete: {
      run: () => lean.completeStep(execId, lease, "9a3f0c", { result: { ok: true, id: 42 } }),
    },
    transportHeartbeat: { run: () => lean.heartbeat(execId, lease) },
    kyFetch: { run: submit(viaFetch), perBlock: 0.2 }, // slow and informational: fewer samples
  };
  for (const s of Object.values(subjects)) Object.assign(s, { lat: [], cpuUs: 0, calls: 0 });

  for (const s of Object.values(subjects))
    await measure(s.run, Math.ceil(warmup * (s.perBlock ?? 1)), { lat: [], cpuUs: 0, calls: 0 });
  const perBlock = Math.ceil(iterations / blocks);
  for (let b = 0; b < blocks; b++) {
    for (const s of Object.values(subjects)) await measure(s.run, Math.ceil(perBlock * (s.perBlock ?? 1)), s);
  }

  // (4) Signing cost: the transport's own signer over the same body, per call.
  const sign = createAgentSigner({ agentId: AGENT_ID, secret: SECRET });
  const ctx = { method: "POST", target: rawTarget, body: Buffer.from(JSON.stringify(stepInput)), attempt: 1 };
  for (let i = 0; i < 20_000; i++) sign(ctx, lease);
  const n = 100_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sign(ctx, lease);
  const signUs = Number(process.hrtime.bigint() - t0) / n / 1000;

  const bad = await kernel.badSignatures();
  kernel.stop();
  await lean.close();
  await pool.close();

  const result = { node: process.version, cpus: os.cpus().length, iterations, signUs: round(signUs, 2) };
  for (const [name, s] of Object.entries(subjects)) {
    result[name] = { ...summarize(s.lat), cpuUsPerReq: s.cpuUs / s.calls };
    for (const k of ["meanUs", "p50Us", "p99Us", "cpuUsPerReq"]) result[name][k] = round(result[name][k]);
  }
  const r = result.raw;
  const t = result.transport;
  const ratios = {
    meanRatio: round(t.meanUs / r.meanUs, 2),
    p50Ratio: round(t.p50Us / r.p50Us, 2),
    p99Ratio: round(t.p99Us / r.p99Us, 2),
    cpuRatio: round(t.cpuUsPerReq / r.cpuUsPerReq, 2),
    signShare: round(signUs / t.meanUs, 3),
    completeMeanRatio: round(result.transportComplete.meanUs / r.meanUs, 2),
    heartbeatMeanRatio: round(result.transportHeartbeat.meanUs / r.meanUs, 2),
    kyFetchMeanRatio: round(result.kyFetch.meanUs / r.meanUs, 2),
    vsPoolFloorMeanRatio: round(t.meanUs / result.rawPool.meanUs, 2),
    vsPoolFloorCpuRatio: round(t.cpuUsPerReq / result.rawPool.cpuUsPerReq, 2),
    vsDispatchFloorMeanRatio: round(t.meanUs / result.rawDispatch.meanUs, 2),
    vsDispatchFloorCpuRatio: round(t.cpuUsPerReq / result.rawDispatch.cpuUsPerReq, 2),
  };
  const goals = {
    "mean ≤ 1.5× raw": ratios.meanRatio <= 1.5,
    "client CPU ≤ 1.5× raw": ratios.cpuRatio <= 1.5,
    "signing ≤ 5% of a round trip": ratios.signShare <= 0.05,
    "no signature rejected": bad === 0,
  };

  const row = (name, s) =>
    `${name.padEnd(22)} mean ${String(s.meanUs).padStart(7)} µs  p50 ${String(s.p50Us).padStart(7)}  p99 ${String(
      s.p99Us,
    ).padStart(7)}  cpu/req ${String(s.cpuUsPerReq).padStart(6)} µs  (n=${s.n})`;
  console.log(
    `Node ${process.version}, ${result.cpus} CPUs, ${iterations} iterations per subject after ${warmup} warm-up`,
  );
  console.log(row("raw undici.request", r));
  console.log(row("raw Pool.request", result.rawPool));
  console.log(row("raw Pool.dispatch", result.rawDispatch));
  console.log(row("transport submitStep", t));
  console.log(row("transport completeStep", result.transportComplete));
  console.log(row("transport heartbeat", result.transportHeartbeat));
  console.log(row("ky + fetch submitStep", result.kyFetch));
  console.log(`signing (createAgentSigner) ${result.signUs} µs/request`);
  console.log(
    `ratios vs raw: mean ${ratios.meanRatio}×, p50 ${ratios.p50Ratio}×, p99 ${ratios.p99Ratio}×, CPU ${ratios.cpuRatio}×, ` +
      `signing ${round(ratios.signShare * 100, 1)}% of a round trip; ky+fetch ${ratios.kyFetchMeanRatio}×; ` +
      `vs the Pool.request floor: mean ${ratios.vsPoolFloorMeanRatio}×, CPU ${ratios.vsPoolFloorCpuRatio}×; ` +
      `vs the Pool.dispatch floor: mean ${ratios.vsDispatchFloorMeanRatio}×, CPU ${ratios.vsDispatchFloorCpuRatio}×`,
  );
  for (const [goal, ok] of Object.entries(goals)) console.log(`${ok ? "PASS" : "FAIL"}  ${goal}`);
  console.log(JSON.stringify({ bench: "transport", ...result, ratios, goals }));
  if (process.argv.includes("--check") && Object.values(goals).includes(false)) process.exitCode = 1;
}
