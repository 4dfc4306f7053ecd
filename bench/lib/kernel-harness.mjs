// Helpers for bench/kernel.mjs: the dev kernel served from a child process (the same position as
// the raw baseline server of transport-harness.mjs), a webhook receiver that hands out leases, and
// the one signed-request function every subject shares, so the client side is identical.
import { fork } from "node:child_process";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AGENT_ID, SECRET } from "./transport-harness.mjs";

/**
 * Child-process entry: start the dev kernel (built dist) on loopback with the bench agent and
 * report its URL. Messages: `{ heap: true }` → heap after two forced GCs (needs `--expose-gc`).
 * With `REBUNO_BENCH_KERNEL_ROOT` set, the dev kernel of that checkout runs (bench/lib/baseline.mjs).
 */
export async function serveDevKernel(storeSpec, webhookUrl) {
  const root = process.env.REBUNO_BENCH_KERNEL_ROOT;
  const { startDevKernel } = await import(
    root === undefined
      ? "@rebuno/dev-kernel"
      : pathToFileURL(join(root, "packages", "dev-kernel", "dist", "index.js")).href
  );
  const store = storeSpec === "memory" ? "memory" : { sqlite: storeSpec.slice("sqlite:".length) };
  const kernel = await startDevKernel({
    store,
    agents: [{ id: AGENT_ID, webhookUrl, secret: SECRET }],
    // The bench finishes long before this; no lease may expire mid-measurement.
    dispatch: { leaseTimeoutSeconds: 600 },
    // Retention and sweeps must not delete or touch what B8 measures.
    retentionMs: 0,
  });
  const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  process.on("message", (m) => {
    if (m?.heap) {
      globalThis.gc?.();
      globalThis.gc?.();
      process.send({ heapUsed: process.memoryUsage().heapUsed });
    }
  });
  process.on("disconnect", () => {
    kernel.close().then(() => process.exit(0));
  });
  process.send({ url });
}

/**
 * Fork `script --serve-kernel <store> <webhookUrl>`; resolves with the URL and controls. `root`:
 * a checkout whose dev kernel to run instead of this one's (a baseline).
 */
export async function startDevKernelProcess(script, storeSpec, webhookUrl, execArgv = [], root = undefined) {
  const child = fork(script, ["--serve-kernel", storeSpec, webhookUrl], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv,
    env: root === undefined ? process.env : { ...process.env, REBUNO_BENCH_KERNEL_ROOT: root },
  });
  const { url } = await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`kernel child exited ${code}`)));
  });
  return {
    url,
    heapUsed: () =>
      new Promise((resolve) => {
        child.once("message", (m) => resolve(m.heapUsed));
        child.send({ heap: true });
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.disconnect();
      }),
  };
}

/** A loopback webhook receiver: answers 200 and resolves `lease(executionId)` waiters. */
export async function startWebhookReceiver() {
  const leases = new Map();
  const waiters = new Map();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(200).end();
      const w = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const lease = { dispatchId: w.dispatch_id, attempt: w.dispatch_attempt };
      leases.set(w.execution_id, lease);
      waiters.get(w.execution_id)?.(lease);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhook`,
    lease: (executionId) =>
      leases.has(executionId)
        ? Promise.resolve(leases.get(executionId))
        : new Promise((resolve) => waiters.set(executionId, resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * POST a v1-signed agent request through an undici Pool and return the parsed JSON answer (or
 * undefined for 204). Used for the kernel and the raw baseline alike.
 */
export async function signedPost(pool, target, lease, body) {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac("sha256", SECRET)
    .update(`rebuno-request-v1\nPOST\n${target}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
    .update(body)
    .digest("hex");
  const res = await pool.request({
    method: "POST",
    path: target,
    body,
    headers: {
      "content-type": "application/json",
      "rebuno-agent-id": AGENT_ID,
      "rebuno-timestamp": ts,
      "rebuno-dispatch-id": lease.dispatchId,
      "rebuno-dispatch-attempt": String(lease.attempt),
      "rebuno-signature": `v1=${sig}`,
    },
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`POST ${target}: ${res.statusCode} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

/** Bearer-side JSON request (dev mode: anonymous). */
export async function plainRequest(pool, method, path, body) {
  const res = await pool.request({
    method,
    path,
    body,
    headers: body === undefined ? {} : { "content-type": "application/json" },
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return { text, json: text === "" ? undefined : JSON.parse(text) };
}
