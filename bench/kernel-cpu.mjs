// Routing tool for B7 (not a goal bench): the server process's CPU per submit+complete pair, read
// from /proc/<pid>/stat (Linux), at c = 50 and c = 1, for the bare raw server, the memory kernel and
// the SQLite kernel. At c = 50 the throughput is ≈ 1 / max(client CPU, server CPU) on 2 cores, so
// server µs/pair is the number to cut.
//
//   pnpm tsc -b && node bench/kernel-cpu.mjs [raw,memory,sqlite] [pairsPerWorker=40] [--prof]
//   STRACE=1 node bench/kernel-cpu.mjs sqlite 100     # syscall counts of the kernel during c = 50
//
// --prof writes the kernel child's --cpu-prof to /tmp/kernel-cpu-prof.
import { fork } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { plainRequest, signedPost, startWebhookReceiver } from "./lib/kernel-harness.mjs";
import { sampleTree } from "./lib/proc.mjs";

const SCRIPT = new URL("./kernel.mjs", import.meta.url).pathname;
const cpuOf = (pid) => sampleTree([pid]).cpuUs;
async function start(args, execArgv = []) {
  const child = fork(SCRIPT, args, { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv });
  const m = await new Promise((r) => child.once("message", r));
  return { child, url: m.url ?? `http://127.0.0.1:${m.port}` };
}
const receiver = await startWebhookReceiver();
const dir = mkdtempSync(join(tmpdir(), "kcpu-"));
const which = (process.argv[2] ?? "raw,memory,sqlite").split(",");
const N = Number(process.argv[3] ?? 40);
const prof = process.argv.includes("--prof") ? ["--cpu-prof", "--cpu-prof-dir", "/tmp/kernel-cpu-prof"] : [];
let counter = 0;
const argsText = (n) =>
  `{"to":"ops@example.com","subject":"weekly report","body":"All systems nominal.","n":${n}}`;
for (const name of which) {
  const s =
    name === "raw"
      ? await start(["--serve"])
      : await start(
          ["--serve-kernel", name === "memory" ? "memory" : `sqlite:${join(dir, "k.db")}`, receiver.url],
          prof,
        );
  const pool = new Pool(s.url, { connections: 64, keepAliveTimeout: 60000 });
  let n = 0;
  const exec = async () => {
    if (name === "raw")
      return {
        id: `018f3a2b-4c5d-7e6f-8a9b-${String(++n).padStart(12, "0")}`,
        lease: { dispatchId: "01920000-0000-7000-8000-000000000001", attempt: 1 },
      };
    const { json } = await plainRequest(
      pool,
      "POST",
      "/v0/executions",
      '{"agent_id":"bench-agent","input":null}',
    );
    return { id: json.id, lease: await receiver.lease(json.id) };
  };
  const pair = async (e) => {
    const k = counter++;
    const t = `/v0/executions/${e.id}/steps`;
    const d = await signedPost(
      pool,
      t,
      e.lease,
      `{"kind":"tool_call","target":"send_email","args":${argsText(k)}}`,
    );
    await signedPost(
      pool,
      `${t}/${d.step_id}/complete`,
      e.lease,
      `{"result":{"result":{"ok":true,"n":${k}}}}`,
    );
  };
  const block = async (c, per) => {
    const es = await Promise.all(Array.from({ length: c }, exec));
    const c0 = cpuOf(s.child.pid),
      my0 = process.cpuUsage(),
      t0 = performance.now();
    await Promise.all(
      es.map(async (e) => {
        for (let i = 0; i < per; i++) await pair(e);
      }),
    );
    const dt = performance.now() - t0,
      my = process.cpuUsage(my0);
    return {
      rate: ((c * per) / dt) * 1000,
      srvUs: (cpuOf(s.child.pid) - c0) / (c * per),
      cliUs: (my.user + my.system) / (c * per),
    };
  };
  await block(50, 10);
  await block(1, 300);
  let st;
  if (process.env.STRACE) {
    const { spawn } = await import("node:child_process");
    st = spawn("strace", ["-c", "-f", "-p", String(s.child.pid)], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    await new Promise((r) => setTimeout(r, 500));
  }
  if (process.env.STRACE) {
    const r = await block(50, N);
    console.log("c50 under strace", r.rate.toFixed(0));
    st.kill("SIGINT");
    await new Promise((r) => st.once("exit", r));
  }
  const r50 = await block(50, N);
  const r1 = await block(1, 20 * N);
  console.log(
    name.padEnd(7),
    `c50 ${r50.rate.toFixed(0)}/s srv ${r50.srvUs.toFixed(0)}µs cli ${r50.cliUs.toFixed(0)}µs | c1 ${r1.rate.toFixed(0)}/s srv ${r1.srvUs.toFixed(0)}µs cli ${r1.cliUs.toFixed(0)}µs`,
  );
  await pool.close();
  s.child.disconnect();
  await new Promise((r) => s.child.once("exit", r));
}
await receiver.close();
