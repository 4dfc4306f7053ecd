// Shared plumbing for the interop scenarios: start rebuno-dev (or use REBUNO_URL), start agent
// processes on free loopback ports, and read results back through our @rebuno/client.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, REBUNO_DEV_BIN } from "@rebuno/test-kit";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const PY_DIR = path.join(ROOT, "verify/interop/python");
export const PYTHON = path.join(PY_DIR, ".venv/bin/python");
export const OUT_DIR = path.join(ROOT, "verify/interop/.out");
// Override to run another launcher with the same CLI (`--config`, `--listen`, `--store`).
const DEV_KERNEL_BIN = process.env.INTEROP_DEV_KERNEL_BIN ?? REBUNO_DEV_BIN;
// INTEROP_KERNEL=go runs the real Go kernel instead (`rebuno dev --listen-addr … --config …`, built
// from REBUNO_KERNEL_SRC by scripts/real-kernel.mjs). It is the older protocol generation: our
// client and TS agents are set to `legacy`; the Python SDK has no such setting and gets 401s.
const GO_KERNEL = process.env.INTEROP_KERNEL === "go";

/** The packages under test, loaded from their compiled output (`pnpm tsc -b`). */
export async function loadPackages() {
  const load = async (pkg) => {
    const file = path.join(ROOT, "packages", pkg, "dist/index.js");
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm tsc -b\` first`);
    return import(pathToFileURL(file).href);
  };
  return { client: await load("client"), protocol: await load("protocol") };
}

/** The Go kernel binary, built (or reused from the cache) from REBUNO_KERNEL_SRC. */
async function goKernelBin() {
  const { buildKernel } = await import(pathToFileURL(path.join(ROOT, "scripts/real-kernel.mjs")).href);
  return buildKernel();
}

export async function waitForPort(port, { timeoutMs = 20_000, proc } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc && proc.exitCode !== null)
      throw new Error(`process exited (${proc.exitCode}) before listening on ${port}`);
    const ok = await new Promise((resolve) => {
      const s = connect({ host: "127.0.0.1", port }, () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listening on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

/** Polls `fn` until it returns a truthy value. */
export async function waitFor(fn, { timeoutMs = 20_000, intervalMs = 100, what = "condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await sleep(intervalMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? "" : ` (last: ${JSON.stringify(last)})`}`,
  );
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

export async function waitForStatus(client, id, wanted, { timeoutMs = 60_000 } = {}) {
  const want = new Set([wanted].flat());
  let ex;
  await waitFor(
    async () => {
      ex = await client.get(id);
      if (!want.has(ex.status) && TERMINAL.has(ex.status)) {
        throw new Error(
          `execution ${id} reached ${ex.status} (${ex.failureReason ?? ""}) instead of ${[...want].join("|")}`,
        );
      }
      return want.has(ex.status);
    },
    { timeoutMs, intervalMs: 100, what: `execution ${id} → ${[...want].join("|")}` },
  );
  return ex;
}

/** Every event of an execution, paging with after_seq. */
export async function allEvents(client, id) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await client.events(id, { afterSeq: after, limit: 1000 });
    if (!page.length) return out;
    out.push(...page);
    after = page[page.length - 1].eventSeq;
    if (page.length < 1000) return out;
  }
}

/** JSON value of a model field that our client may hand back as RawJson. */
export function plain(v) {
  if (v && typeof v === "object" && typeof v.text === "string" && v.constructor?.name === "RawJson")
    return JSON.parse(v.text);
  return v;
}

function yamlString(s) {
  return JSON.stringify(String(s));
}

export function provisioningYaml(agents) {
  const lines = ["agents:"];
  for (const a of agents) {
    lines.push(`  - id: ${yamlString(a.id)}`);
    lines.push(`    webhook_url: ${yamlString(a.webhookUrl)}`);
    lines.push(`    secret: ${yamlString(a.secret)}`);
    if (a.leaseTimeoutSeconds !== undefined)
      lines.push(`    lease_timeout_seconds: ${a.leaseTimeoutSeconds}`);
    if (a.policy) {
      lines.push("    policy: |");
      for (const l of a.policy.trimEnd().split("\n")) lines.push(`      ${l}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * One scenario's world: a kernel, agent processes, a client, a temp dir, logs and cleanup.
 * `agents` entries: { id, kind, lang: "py" | "ts", leaseTimeoutSeconds?, policy?, env? }.
 */
export class World {
  constructor({ name, packages, external }) {
    this.name = name;
    this.pkgs = packages;
    this.external = external; // { url, apiKey } when REBUNO_URL is set
    this.dir = path.join(OUT_DIR, name.replace(/[^a-z0-9_-]+/gi, "_").slice(0, 80));
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    this.procs = [];
    this.cleanups = [];
    this.logFiles = [];
    this.agents = new Map();
    this.runId = Date.now().toString(36);
  }

  log(file) {
    const p = path.join(this.dir, file);
    this.logFiles.push(p);
    return p;
  }

  async setup(agentSpecs) {
    for (const spec of agentSpecs) {
      const port = spec.port ?? (await freePort());
      this.agents.set(spec.id, {
        ...spec,
        port,
        secret: spec.secret ?? `${spec.id}-secret-${this.runId}`,
        webhookUrl: `http://127.0.0.1:${port}/webhook`,
      });
    }
    const provision = [...this.agents.values()];
    writeFileSync(path.join(this.dir, "provisioning.yaml"), provisioningYaml(provision));
    if (this.external) {
      this.url = this.external.url;
      this.client = new this.pkgs.client.Client({ baseUrl: this.url, apiKey: this.external.apiKey });
      if (this.external.apiKey) {
        for (const a of provision) {
          await this.client.registerAgent({
            id: a.id,
            webhookUrl: a.webhookUrl,
            secret: a.secret,
            ...(a.leaseTimeoutSeconds ? { leaseTimeoutSeconds: a.leaseTimeoutSeconds } : {}),
          });
          if (a.policy) await this.client.setPolicy(a.id, a.policy);
        }
      }
    } else {
      await this.startDevKernel();
      this.client = new this.pkgs.client.Client({
        baseUrl: this.url,
        ...(GO_KERNEL ? { protocol: "legacy" } : {}),
      });
    }
  }

  async startDevKernel(extraEnv = {}) {
    const port = await freePort();
    const logPath = this.log("kernel.log");
    const out = createWriteStream(logPath, { flags: "a" });
    const config = path.join(this.dir, "provisioning.yaml");
    const [cmd, args] = GO_KERNEL
      ? [await goKernelBin(), ["dev", "--listen-addr", `127.0.0.1:${port}`, "--config", config]]
      : [
          process.execPath,
          [DEV_KERNEL_BIN, "--config", config, "--listen", `127.0.0.1:${port}`, "--store", this.storeArg()],
        ];
    const proc = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc.stdout.pipe(out);
    proc.stderr.pipe(out);
    this.procs.push(proc);
    this.kernelProc = proc;
    this.url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (proc.exitCode !== null)
          throw new Error(`rebuno-dev exited with ${proc.exitCode}: ${tail(logPath)}`);
        try {
          const r = await fetch(`${this.url}/v0/health`);
          return r.ok;
        } catch {
          return false;
        }
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "rebuno-dev /v0/health" },
    );
  }

  /** `INTEROP_STORE=sqlite` runs each scenario's rebuno-dev on a fresh SQLite file instead of memory. */
  storeArg() {
    const store = process.env.INTEROP_STORE ?? "memory";
    if (store === "memory") return "memory";
    if (store === "sqlite") return `sqlite:${path.join(this.dir, "kernel.db")}`;
    throw new Error(`INTEROP_STORE must be memory or sqlite, got ${store}`);
  }

  agent(id) {
    const a = this.agents.get(id);
    if (!a) throw new Error(`unknown agent ${id}`);
    return a;
  }

  /** Starts (or restarts) an agent process; resolves once its port accepts connections. */
  async startAgent(id, extraEnv = {}) {
    const proc = this.spawnAgent(id, extraEnv);
    await waitForPort(this.agent(id).port, { proc, timeoutMs: 30_000 });
    return proc;
  }

  /** Spawns an agent process without waiting for its port (a standby that binds later). */
  spawnAgent(id, extraEnv = {}) {
    const a = this.agent(id);
    const env = {
      ...process.env,
      REBUNO_URL: this.url,
      REBUNO_AGENT_SECRET: a.secret,
      ...(GO_KERNEL ? { REBUNO_PROTOCOL: "legacy" } : {}),
      ...(this.external?.apiKey ? { REBUNO_API_KEY: this.external.apiKey } : {}),
      ...a.env,
      ...extraEnv,
    };
    const logPath = this.log(`${id}.log`);
    const out = createWriteStream(logPath, { flags: "a" });
    let proc;
    if (a.lang === "ts") {
      proc = spawn(
        process.execPath,
        [path.join(ROOT, "verify/interop/ts/agents.mjs"), a.kind, "--agent-id", id, "--port", String(a.port)],
        {
          cwd: ROOT,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
    } else {
      proc = spawn(
        PYTHON,
        [
          path.join(PY_DIR, "agents.py"),
          a.kind,
          "--agent-id",
          id,
          "--port",
          String(a.port),
          ...(a.args ?? []),
        ],
        {
          cwd: PY_DIR,
          env: { ...env, PYTHONUNBUFFERED: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
    }
    proc.stdout.pipe(out);
    proc.stderr.pipe(out);
    this.procs.push(proc);
    a.proc = proc;
    a.logPath = logPath;
    return proc;
  }

  async killAgent(id, signal = "SIGKILL") {
    const a = this.agent(id);
    const proc = a.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, "exit");
    proc.kill(signal);
    await exited;
  }

  agentLog(id) {
    const a = this.agent(id);
    return a.logPath && existsSync(a.logPath) ? readFileSync(a.logPath, "utf8") : "";
  }

  /** Runs the official Python bearer client (verify/interop/python/pyclient.py). */
  async pyClient(args) {
    const proc = spawn(PYTHON, [path.join(PY_DIR, "pyclient.py"), ...args], {
      cwd: PY_DIR,
      env: {
        ...process.env,
        REBUNO_URL: this.url,
        ...(this.external?.apiKey ? { REBUNO_API_KEY: this.external.apiKey } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d) => {
      stdout += d;
    });
    proc.stderr.on("data", (d) => {
      stderr += d;
    });
    const [code] = await once(proc, "exit");
    if (code !== 0) throw new Error(`official Python client \`${args.join(" ")}\` failed: ${stderr.trim()}`);
    return JSON.parse(stdout);
  }

  async teardown() {
    for (const fn of this.cleanups.reverse()) await fn().catch(() => {});
    await Promise.all(
      this.procs.map(async (p) => {
        if (p.exitCode !== null || p.signalCode !== null) return;
        const exited = once(p, "exit");
        p.kill("SIGTERM");
        const t = setTimeout(() => p.kill("SIGKILL"), 3000);
        await exited;
        clearTimeout(t);
      }),
    );
  }

  logs() {
    return this.logFiles
      .filter((f, i, all) => all.indexOf(f) === i && existsSync(f))
      .map((f) => `--- ${path.relative(ROOT, f)} (tail)\n${tail(f)}`)
      .join("\n");
  }
}

export function tail(file, lines = 40) {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** The event types, in order, with consecutive-seq validation. */
export function eventTypes(events) {
  return events.map((e) => e.type);
}

/** Asserts `needles` appear in `haystack` in this relative order (other items may sit between). */
export function inOrder(haystack, needles) {
  let i = 0;
  for (const h of haystack) if (i < needles.length && h === needles[i]) i++;
  return i === needles.length;
}
