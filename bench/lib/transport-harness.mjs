// Helpers for bench/transport.mjs: a loopback kernel stand-in that runs in a child process and
// verifies v1 signatures on its own (node:crypto), plus small statistics utilities.
import { fork } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

export const SECRET = "bench-secret";
export const AGENT_ID = "bench-agent";
export const STEP_ID = "9a3f0c5e2b1d4f6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a";
const DECISION = `${JSON.stringify({ decision: "proceed", step_id: STEP_ID })}\n`;
const RECORDED = `${JSON.stringify({ decision: "recorded" })}\n`;

function verify(req, body) {
  const ts = req.headers["rebuno-timestamp"];
  const sig = req.headers["rebuno-signature"];
  if (typeof ts !== "string" || typeof sig !== "string") return false;
  const mac = createHmac("sha256", SECRET);
  mac.update(
    `rebuno-request-v1\n${req.method}\n${req.url}\n${ts}\n${req.headers["rebuno-dispatch-id"] ?? ""}\n` +
      `${req.headers["rebuno-dispatch-attempt"] ?? ""}\n`,
  );
  mac.update(body);
  const want = Buffer.from(`v1=${mac.digest("hex")}`);
  const got = Buffer.from(sig);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Child-process entry: serve until the parent disconnects. */
export function serveKernel() {
  let bad = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!verify(req, body)) {
        bad++;
        res.writeHead(401, { "content-type": "application/json" });
        res.end('{"code":"unauthorized","message":"invalid signature"}\n');
        return;
      }
      if (body.length > 0) JSON.parse(body.toString("utf8")); // the kernel decodes every body
      const url = req.url;
      if (url.endsWith("/heartbeat")) {
        res.writeHead(204);
        res.end();
        return;
      }
      const out = url.endsWith("/complete") ? RECORDED : DECISION;
      res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(out),
      });
      res.end(out);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
  process.on("message", (m) => {
    if (m === "stats") process.send({ bad });
  });
  process.on("disconnect", () => process.exit(0));
}

/** Fork `script` with `--serve`; resolves with the base URL and a stop function. */
export async function startKernelProcess(script) {
  const child = fork(script, ["--serve"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { port } = await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    badSignatures: () =>
      new Promise((resolve) => {
        child.once("message", (m) => resolve(m.bad));
        child.send("stats");
      }),
    stop: () => child.disconnect(),
  };
}

/** Mean, p50 and p99 of nanosecond samples, in µs. */
export function summarize(samplesNs) {
  const s = Float64Array.from(samplesNs).sort();
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] / 1000;
  let sum = 0;
  for (const v of s) sum += v;
  return { n: s.length, meanUs: sum / s.length / 1000, p50Us: at(0.5), p99Us: at(0.99) };
}

/** Run `fn` `n` times sequentially, recording per-call latency and the process CPU spent. */
export async function measure(fn, n, into) {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    into.lat.push(Number(process.hrtime.bigint() - t0));
  }
  const cpu = process.cpuUsage(cpu0);
  into.cpuUs += cpu.user + cpu.system;
  into.calls += n;
}

export const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
