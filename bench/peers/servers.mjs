// The server process of each system, on loopback, started by bench/peers.mjs: our dev kernel as
// the real `rebuno-dev` command, the Restate server binary from npm, and PostgreSQL 15 (the
// throwaway cluster of scripts/real-kernel.mjs, here with fsync on) for DBOS.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, REBUNO_DEV_BIN, rebunoDevBinIn } from "@rebuno/test-kit";
import { PEERS_DIR } from "./install.mjs";

/** Resolve when `pattern` appears in the child's output; reject on exit or after `timeoutMs`. */
function waitForOutput(child, pattern, what, timeoutMs = 60_000) {
  let tail = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what} not ready in ${timeoutMs} ms:\n${tail}`)),
      timeoutMs,
    );
    const onData = (chunk) => {
      tail = (tail + chunk.toString()).slice(-8000);
      const m = pattern.exec(tail);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}):\n${tail}`));
    });
  });
}

function stopper(child, cleanup = () => {}) {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(t);
    }
    cleanup();
  };
}

/** `rebuno-dev` (built dist) with `--store memory` or a fresh SQLite file at `synchronous`. */
export async function startRebunoDev(store, synchronous, execArgv = [], root = undefined) {
  const dir = mkdtempSync(join(tmpdir(), "bench-b14-rebuno-"));
  // `root`: another checkout's rebuno-dev (a baseline, bench/lib/baseline.mjs).
  const bin = root === undefined ? REBUNO_DEV_BIN : rebunoDevBinIn(root);
  const args = [...execArgv, bin, "--listen", "127.0.0.1:0", "--quiet", "--no-console"];
  if (store === "sqlite")
    args.push("--store", `sqlite:${join(dir, "kernel.db")}`, "--sqlite-synchronous", synchronous);
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    // Retention is the default (24 h): nothing is deleted during the run.
    env: { ...process.env },
  });
  const stop = stopper(child, () => rmSync(dir, { recursive: true, force: true }));
  try {
    // With a SQLite store the line after the URL names the durability level that really runs.
    const pattern =
      store === "sqlite"
        ? new RegExp(`rebuno-dev listening on (http://\\S+)\n.*synchronous=${synchronous.toUpperCase()} `)
        : /rebuno-dev listening on (http:\/\/\S+)\n/;
    const [, url] = await waitForOutput(child, pattern, "rebuno-dev");
    return { pid: child.pid, config: { kernelUrl: url }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function restateBinary() {
  const require = createRequire(join(PEERS_DIR, "package.json"));
  const pkg = require.resolve("@restatedev/restate-server/package.json");
  const req = createRequire(pkg);
  return req.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

/** The Restate server (single node, default configuration = its default durability) on loopback. */
export async function startRestate() {
  const dir = mkdtempSync(join(tmpdir(), "bench-b14-restate-"));
  const [ingress, admin, fabric] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    restateBinary(),
    ["--no-logo", "--listen-mode", "tcp", "--base-dir", dir, "--node-name", "b14"],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}/`,
        RESTATE_DISABLE_TELEMETRY: "true",
        RESTATE_LOG_FILTER: "warn",
      },
    },
  );
  const stop = stopper(child, () => rmSync(dir, { recursive: true, force: true }));
  const adminUrl = `http://127.0.0.1:${admin}`;
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  try {
    const exited = new Promise((_, reject) =>
      child.once("exit", (c) => reject(new Error(`restate-server exited ${c}`))),
    );
    let out = "";
    child.stdout.on("data", (d) => (out = (out + d).slice(-4000)));
    child.stderr.on("data", (d) => (out = (out + d).slice(-4000)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await Promise.race([
        exited,
        Promise.all([
          fetch(`${adminUrl}/health`).then(
            (r) => r.ok,
            () => false,
          ),
          fetch(`${ingressUrl}/restate/health`).then(
            (r) => r.ok,
            () => false,
          ),
        ]).then((a) => a.every(Boolean)),
      ]);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`restate-server not healthy in 60 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { pid: child.pid, config: { ingressUrl, adminUrl }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** PostgreSQL with fsync on (its default durability) for DBOS's system database. */
export async function startPostgresForDbos() {
  const rk = await import("../../scripts/real-kernel.mjs");
  const pg = await rk.startPostgres({ durable: true });
  const postmaster = await findPostmaster(pg.port);
  return { pid: postmaster, config: { databaseUrl: pg.url.replace("/postgres?", "/b14?") }, stop: pg.stop };
}

/** startPostgres does not expose its child: find the postmaster listening on `port` by its argv. */
async function findPostmaster(port) {
  const { readdirSync, readFileSync } = await import("node:fs");
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (/\/postgres$/.test(argv[0]) && argv.includes("-p") && argv[argv.indexOf("-p") + 1] === String(port))
        return Number(name);
    } catch {}
  }
  throw new Error(`postmaster on port ${port} not found`);
}
