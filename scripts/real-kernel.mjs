#!/usr/bin/env node
// The real Rebuno kernel (Go) from the project: build it from source, run `rebuno dev` or
// `rebuno server` (with a throwaway PostgreSQL cluster) on loopback, and run the real-kernel suite.
//
//   node scripts/real-kernel.mjs build            # build (or reuse) the binary, print its path
//   node scripts/real-kernel.mjs dev [manifest]   # `rebuno dev` on a free loopback port until Ctrl-C
//   node scripts/real-kernel.mjs server [manifest]# PostgreSQL + `rebuno server` until Ctrl-C
//   node scripts/real-kernel.mjs test [filter]    # the real-kernel suite; last line `N passed, M failed`
//
// Env: REBUNO_KERNEL_SRC (a checkout of the Go kernel; default: DEFAULT_SRC below),
// GO (go binary, default `go` on PATH or /usr/local/go/bin/go), PG_BIN (folder with initdb and
// postgres, default `pg_config --bindir` or /usr/lib/postgresql/<newest>/bin).
//
// Also a library: the suite imports buildKernel, startGoDev, startPostgres and startGoServer.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@rebuno/test-kit";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Default kernel checkout: a sibling `shared/rebuno-kernel` folder of the repository. */
export const DEFAULT_SRC = path.resolve(ROOT, "..", "shared", "rebuno-kernel");
const CACHE = path.join(ROOT, ".tmp", "real-kernel");
const MIN_GO = [1, 26];

/** A failure the user can act on (missing Go, PostgreSQL or kernel source): printed without a stack. */
export class SetupError extends Error {
  name = "SetupError";
}

export function kernelSource() {
  const src = path.resolve(process.env.REBUNO_KERNEL_SRC || DEFAULT_SRC);
  if (!existsSync(path.join(src, "cmd", "rebuno"))) {
    throw new SetupError(
      `no Rebuno kernel source at ${src} (expected cmd/rebuno there). Point REBUNO_KERNEL_SRC at a ` +
        "checkout of the Go kernel (github.com/rebuno/rebuno), e.g. REBUNO_KERNEL_SRC=~/src/rebuno",
    );
  }
  return src;
}

function findGo() {
  // GO, when set, is the only candidate: a wrong path must fail loudly, not fall back.
  const candidates = process.env.GO ? [process.env.GO] : ["go", "/usr/local/go/bin/go"];
  for (const go of candidates) {
    const r = spawnSync(go, ["env", "GOVERSION"], { encoding: "utf8" });
    if (r.status !== 0) continue;
    const m = /go(\d+)\.(\d+)/.exec(r.stdout);
    if (!m) continue;
    const [maj, min] = [Number(m[1]), Number(m[2])];
    if (maj > MIN_GO[0] || (maj === MIN_GO[0] && min >= MIN_GO[1])) return go;
    throw new SetupError(`${go} is ${r.stdout.trim()}; the kernel needs Go >= ${MIN_GO.join(".")}`);
  }
  throw new SetupError(
    `Go >= ${MIN_GO.join(".")} not found (tried ${candidates.join(", ")}). Install it from https://go.dev/dl/ ` +
      "or set GO=/path/to/go",
  );
}

/** sha256 over every file's relative path and bytes (sorted), skipping VCS folders. */
export function sourceHash(src) {
  const hash = createHash("sha256");
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === ".git") continue;
      const full = path.join(dir, name);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) {
        hash.update(`${path.relative(src, full)}\0`);
        hash.update(readFileSync(full));
        hash.update("\0");
      }
    }
  };
  walk(src);
  return hash.digest("hex").slice(0, 16);
}

/**
 * Build `rebuno` from REBUNO_KERNEL_SRC (copied to a temp folder: the checkout may be read-only)
 * unless a binary built from the same source bytes is cached under .tmp/real-kernel/<hash>/.
 */
export function buildKernel({ log = (m) => console.error(m) } = {}) {
  const src = kernelSource();
  const hash = sourceHash(src);
  const bin = path.join(CACHE, hash, "rebuno");
  if (existsSync(bin)) return bin;
  const go = findGo();
  const tmp = mkdtempSync(path.join(os.tmpdir(), "rebuno-build-"));
  try {
    const copy = path.join(tmp, "src");
    cpSync(src, copy, { recursive: true, filter: (p) => path.basename(p) !== ".git" });
    // The copy keeps read-only modes from a read-only checkout; go writes nothing there, but make
    // the tree removable afterwards.
    chmodTree(copy);
    log(`real-kernel: building rebuno from ${src} (source ${hash}) with ${go}…`);
    const out = path.join(tmp, "rebuno");
    const r = spawnSync(go, ["build", "-o", out, "./cmd/rebuno"], {
      cwd: copy,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, CGO_ENABLED: process.env.CGO_ENABLED ?? "0" },
    });
    if (r.status !== 0) throw new SetupError(`go build failed (exit ${r.status}) for ${src}`);
    mkdirSync(path.dirname(bin), { recursive: true });
    // Rename is atomic: a concurrent build of the same source just overwrites an identical file.
    renameSync(out, bin);
    return bin;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function chmodTree(dir) {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const st = statSync(full);
    if (st.isDirectory()) chmodTree(full);
    else chmodSync(full, 0o644);
  }
}

/**
 * A provisioning manifest for `--config`: agents with id, webhook_url, secret and an inline policy
 * bundle (YAML text). Values are JSON-quoted, which YAML reads as double-quoted scalars.
 */
export function manifestYaml(agents) {
  const lines = ["agents:"];
  for (const a of agents) {
    lines.push(`  - id: ${JSON.stringify(a.id)}`);
    lines.push(`    webhook_url: ${JSON.stringify(a.webhookUrl)}`);
    lines.push(`    secret: ${JSON.stringify(a.secret)}`);
    if (a.policy) {
      lines.push("    policy: |");
      for (const l of a.policy.replace(/\n+$/, "").split("\n")) lines.push(`      ${l}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

async function waitHealthy(url, proc, logs, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(`rebuno exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${logs()}`);
    try {
      const res = await fetch(`${url}/v0/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`rebuno did not answer /v0/health at ${url} within ${timeoutMs} ms:\n${logs()}`);
}

/** Spawn `rebuno <mode> …`, keep its last output for error messages, resolve once healthy. */
async function spawnKernel(bin, args, env, url) {
  let tail = "";
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-8000);
  };
  const proc = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  proc.stdout.on("data", keep);
  proc.stderr.on("data", keep);
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  await waitHealthy(url, proc, () => tail).catch(async (err) => {
    proc.kill("SIGKILL");
    await exited;
    throw err;
  });
  return {
    url,
    proc,
    logs: () => tail,
    /** SIGKILL: the crash of a replica. */
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

/** `stop()` and `kill()` also delete the generated manifest. */
function withManifestCleanup(k, manifest) {
  return {
    ...k,
    async stop() {
      await k.stop();
      manifest.remove();
    },
    async kill() {
      await k.kill();
      manifest.remove();
    },
  };
}

function writeManifest(agents) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rebuno-manifest-"));
  const file = path.join(dir, "rebuno.yaml");
  writeFileSync(file, manifestYaml(agents ?? []));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `rebuno dev` (in memory, no bearer auth) on a free loopback port, agents provisioned from a
 * generated manifest. `env` adds kernel settings (REBUNO_DISPATCH_TIMEOUT, …).
 */
export async function startGoDev({ agents = [], env = {}, bin = buildKernel() } = {}) {
  const port = await freePort();
  const manifest = writeManifest(agents);
  const url = `http://127.0.0.1:${port}`;
  try {
    const k = await spawnKernel(
      bin,
      ["dev", "--listen-addr", `127.0.0.1:${port}`, "--config", manifest.file, "--log-level", "warn"],
      env,
      url,
    );
    return withManifestCleanup(k, manifest);
  } catch (err) {
    manifest.remove();
    throw err;
  }
}

/**
 * `rebuno server` against `dbUrl` with bearer token `token`. Several replicas may share one
 * database; `port` pins the port (a restarted replica keeps its address behind a proxy).
 */
export async function startGoServer({ dbUrl, token, agents = [], env = {}, port, bin = buildKernel() }) {
  const p = port ?? (await freePort());
  const manifest = writeManifest(agents);
  const url = `http://127.0.0.1:${p}`;
  const args = ["server", "--listen-addr", `127.0.0.1:${p}`, "--db-url", dbUrl, "--bearer-token", token];
  try {
    const k = await spawnKernel(bin, [...args, "--config", manifest.file, "--log-level", "warn"], env, url);
    return { ...withManifestCleanup(k, manifest), port: p };
  } catch (err) {
    manifest.remove();
    throw err;
  }
}

function findPgBin() {
  const has = (dir) => dir && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "postgres"));
  if (process.env.PG_BIN) {
    if (has(process.env.PG_BIN)) return process.env.PG_BIN;
    throw new SetupError(`PG_BIN=${process.env.PG_BIN} holds no initdb and postgres`);
  }
  const cfg = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (cfg.status === 0 && has(cfg.stdout.trim())) return cfg.stdout.trim();
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => has(path.join(base, v, "bin")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(base, versions[0], "bin");
  }
  throw new SetupError(
    "PostgreSQL server binaries (initdb, postgres) not found. Install them (Debian/Ubuntu: " +
      "`apt-get install -y postgresql`) or set PG_BIN to the folder holding initdb",
  );
}

/** initdb refuses to run as root: use (and create if needed) the unprivileged user `rebuno-pg`. */
function pgUser() {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const name = "rebuno-pg";
  const lookup = () => spawnSync("id", ["-u", name], { encoding: "utf8" });
  let r = lookup();
  if (r.status !== 0) {
    const add = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], {
      encoding: "utf8",
    });
    r = lookup();
    if (r.status !== 0)
      throw new SetupError(`running as root and cannot create the user ${name} for initdb: ${add.stderr}`);
  }
  const uid = Number(r.stdout.trim());
  const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/**
 * A throwaway PostgreSQL cluster: initdb in a temp folder (as an unprivileged user when run as
 * root), `postgres` on a free 127.0.0.1 port with trust auth for loopback. `stop()` ends it and
 * deletes the folder. `fsync=off` unless `durable` (benchmarks comparing durable systems need
 * PostgreSQL's own default: fsync on, synchronous_commit on).
 */
export async function startPostgres({ durable = false } = {}) {
  const bin = findPgBin();
  const user = pgUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), "rebuno-pg-"));
  const data = path.join(dir, "data");
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  if (user) {
    chmodSync(dir, 0o755);
    chownSync(dir, user.uid, user.gid);
  }
  const init = spawnSync(
    path.join(bin, "initdb"),
    ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"],
    { encoding: "utf8", cwd: dir, ...as },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new SetupError(`initdb failed: ${init.stderr || init.stdout || init.error}`);
  }
  const port = await freePort();
  let tail = "";
  const proc = spawn(
    path.join(bin, "postgres"),
    [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      ...(durable ? [] : ["-c", "fsync=off"]),
      "-c",
      "max_connections=200",
    ],
    { stdio: ["ignore", "pipe", "pipe"], cwd: dir, ...as },
  );
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const ready = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      tail = (tail + chunk.toString()).slice(-8000);
      if (tail.includes("ready to accept connections")) resolve();
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`postgres exited (${code}):\n${tail}`)));
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGINT"); // fast shutdown
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const timer = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`postgres not ready in 30 s:\n${tail}`)), 30_000).unref(),
  );
  try {
    await Promise.race([ready, timer]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`, port, stop };
}

// ----------------------------------------------------------------------------------------------
// CLI
// ----------------------------------------------------------------------------------------------

function readManifestAgents(file) {
  // The CLI passes a manifest file straight through; a generated one has no agents.
  return file ? { file } : undefined;
}

async function runTest(filters) {
  buildKernel(); // fail early, with a clear message, before vitest starts
  mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
  const report = path.join(ROOT, ".tmp", "real-kernel-report.json");
  rmSync(report, { force: true });
  const status =
    spawnSync(
      process.execPath,
      [
        path.join(ROOT, "node_modules/vitest/vitest.mjs"),
        "run",
        "--config",
        path.join(ROOT, "verify/vitest.config.ts"),
        "--project",
        "real-kernel",
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${report}`,
        ...filters,
      ],
      { stdio: "inherit", cwd: ROOT },
    ).status ?? 1;
  let passed = 0;
  let failed = 0;
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    passed = json.numPassedTests;
    failed = json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0);
  } catch {
    failed += 1;
  }
  if (status !== 0 && failed === 0) failed = 1;
  console.log(`${passed} passed, ${failed} failed`);
  return status === 0 && failed === 0 ? 0 : 1;
}

async function holdUntilSignal(stops) {
  await new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  for (const stop of stops) await stop();
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2).filter((a) => a !== "--");
  if (cmd === "build") {
    console.log(buildKernel());
    return 0;
  }
  if (cmd === "test") return runTest(rest);
  if (cmd === "dev" || cmd === "server") {
    const bin = buildKernel();
    const given = readManifestAgents(rest[0]);
    const port = await freePort();
    const args = [cmd, "--listen-addr", `127.0.0.1:${port}`];
    if (given) args.push("--config", path.resolve(given.file));
    const stops = [];
    const env = {};
    if (cmd === "server") {
      const pg = await startPostgres();
      stops.push(pg.stop);
      env.REBUNO_DB_URL = pg.url;
      env.REBUNO_BEARER_TOKEN = process.env.REBUNO_BEARER_TOKEN || "dev-token";
      console.log(`postgres  ${pg.url}\nbearer    ${env.REBUNO_BEARER_TOKEN}`);
    }
    const k = await spawnKernel(bin, args, env, `http://127.0.0.1:${port}`);
    stops.unshift(k.stop);
    console.log(`rebuno ${cmd} at ${k.url} (Ctrl-C stops it)`);
    await holdUntilSignal(stops);
    return 0;
  }
  console.error(
    "usage: node scripts/real-kernel.mjs build | dev [manifest.yaml] | server [manifest.yaml] | test [filter]",
  );
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof SetupError ? `real-kernel: ${err.message}` : err);
      if (process.argv[2] === "test") console.log("0 passed, 1 failed");
      process.exit(1);
    },
  );
}
