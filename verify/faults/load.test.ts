/**
 * Load: 200 concurrent keep-alive connections against the dev kernel for a bounded time (~5 s),
 * each looping over a mix of reads (execution get, health) and writes (execution create, one in
 * eight). Promise: no error and no non-2xx answer; the p50/p99 latencies and the request rate are
 * recorded in the row (figures, not assertions: the machine is shared). Kernel and load generator
 * share this process and its two cores, so the figures are a floor.
 */
import { Agent as HttpAgent, request } from "node:http";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordFault } from "./lib/results.js";

const CONNECTIONS = 200;
const DURATION_MS = Number(process.env.FAULT_LOAD_MS ?? 5000);
const TOKEN = "load-bearer-token";

let kernel: DevKernel;
let port: number;
const pool = new HttpAgent({ keepAlive: true, maxSockets: CONNECTIONS });
beforeAll(async () => {
  kernel = await startDevKernel({
    devMode: false,
    bootstrapToken: TOKEN,
    agents: [
      { id: "load", webhookUrl: "http://127.0.0.1:9/unused", secret: "load-secret-0123456789abcdef0123" },
    ],
    dispatch: { pollMs: 100, maxAttempts: 1 },
  });
  port = Number(new URL(await kernel.listen({ host: "127.0.0.1", port: 0 })).port);
});
afterAll(async () => {
  pool.destroy();
  await kernel?.close();
});

function call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const req = request(
      { host: "127.0.0.1", port, method, path, headers, agent: pool, timeout: 30_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

describe("load", () => {
  it(`${CONNECTIONS} concurrent connections for ${DURATION_MS} ms: no error, no non-2xx`, async () => {
    const created = await call("POST", "/v0/executions", JSON.stringify({ agent_id: "load", input: {} }));
    expect(created.status, created.text).toBe(201);
    const id = (JSON.parse(created.text) as { id: string }).id;
    const latencies: number[] = [];
    const failures: string[] = [];
    let writes = 0;
    const deadline = Date.now() + DURATION_MS;
    const worker = async (w: number) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const start = performance.now();
        try {
          const write = (i + w) % 8 === 0;
          const answer = write
            ? await call("POST", "/v0/executions", JSON.stringify({ agent_id: "load", input: { w, i } }))
            : i % 2 === 0
              ? await call("GET", `/v0/executions/${id}`)
              : await call("GET", "/v0/health");
          if (write) writes++;
          if (answer.status < 200 || answer.status >= 300)
            failures.push(`${answer.status} ${answer.text.slice(0, 120)}`);
        } catch (error) {
          failures.push(String(error));
        }
        latencies.push(performance.now() - start);
      }
    };
    const began = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, w) => worker(w)));
    const seconds = (performance.now() - began) / 1000;
    latencies.sort((a, b) => a - b);
    const health = await call("GET", "/v0/health");
    recordFault({
      id: "load-200-connections",
      group: "Load",
      fault: `${CONNECTIONS} concurrent keep-alive connections for ${DURATION_MS / 1000} s (reads, health, 1/8 creates; kernel in-process)`,
      promise: "no error, no non-2xx; p99 recorded",
      test: "verify/faults/load.test.ts",
      counts: {
        requests: latencies.length,
        writes,
        errors: failures.length,
        perSecond: Math.round(latencies.length / seconds),
        p50ms: Number(percentile(latencies, 50).toFixed(1)),
        p99ms: Number(percentile(latencies, 99).toFixed(1)),
        node: process.versions.node,
      },
    });
    console.log(
      `load: ${latencies.length} requests in ${seconds.toFixed(1)} s, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ${failures.length} failures`,
    );
    expect(failures.slice(0, 5)).toEqual([]);
    expect(health.status).toBe(200);
  });
});
