// Retained-execution memory of the dev kernel (issue: "with the SQLite store, history lives on disk
// and memory stays bounded").
//
//   pnpm tsc -b packages/dev-kernel && node bench/retained-memory.mjs [--quick] [--n N]
//
// Each subject is a child process (`--expose-gc`) running `startDevKernel` with rebuno-dev's
// defaults and one agent, filled with N retained executions of 20 tool steps each; its RSS and heap
// are read after two forced GCs at N/4, N/2, 3N/4 and N.
//
// How executions are made: the first one runs through the kernel's HTTP core in process
// (`kernel.fetch`: create, webhook, 20 × signed submit + complete, complete). The other N − 1 are
// copies of its rows (execution, events, steps, dispatch; fresh ids and times, same payload sizes)
// written through the kernel's store in the transactions the engine uses, because 100,000
// executions × 42 signed requests is over 4 million requests: more than 20 minutes on a 2-core
// machine, where this bench is about memory, not speed (B7/B8 in bench/kernel.mjs measure that).
//
// Subjects: `sqlite` (SqliteStore: its tables on disk, nothing per execution in memory);
// `memory-cap` (MemoryStore with maxRetainedExecutions = CAP: the retention sweep
// deletes the oldest beyond it); `memory` (MemoryStore, no cap, at a small N: the cost of a retained
// execution in memory, which docs/dev-kernel.md states).
// Goals: SQLite RSS at N ≤ 150 MiB (N = 100,000 by default); memory-cap RSS stays bounded (RSS at N
// ≤ 1.1 × RSS at 3N/4, both beyond the cap when N ≥ 4/3 × CAP).
//
// Start-up (issue: "start-up time does not grow with the number of stored executions, apart from
// SQLite's own quick_check, which can be turned off"): the `sqlite` child keeps its file at N/4,
// N/2 and 3N/4 (a copy taken between two store calls: what a SIGKILL would leave) and at N (closed);
// then `rebuno-dev --store sqlite:FILE` is timed from spawn to its "listening" line on each file,
// with `--sqlite-quick-check on` and `off`, in interleaved rounds (each file opened once before,
// untimed: the copies' WAL recovery, and the page cache warm for every timed start). Reported as
// medians and as ratios start-up at N ÷ start-up at N/4. Goal: with quick_check off, ≤ 1.25 (no
// step grows with N; the rest is Node's start). `--no-startup` skips it (the copies take ≈ 2.5 × the
// final file's size on disk while they exist).
import { fork, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { rebunoDevCommand } from "@rebuno/test-kit";
import { environment, report, round } from "./lib/stats.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const nFlag = process.argv.indexOf("--n");
const N = nFlag > 0 ? Number(process.argv[nFlag + 1]) : QUICK ? 3_000 : 100_000;
const UNCAPPED_N = QUICK ? 1_000 : 5_000;
const CAP = 2_000;
const STEPS = 20;
const MIB = 1024 * 1024;
const AGENT = "bench-agent";
// Executions written per event-loop turn: each turn's writes are one group-commit batch (≈ 35 KB of
// ops per execution), about what a kernel under HTTP load commits per turn.
const FILL_PER_TURN = 10;
const SECRET = "bench-secret";
const STARTUP = !process.argv.includes("--no-startup");
const STARTUP_ROUNDS = QUICK ? 3 : 7;
/** `--sqlite-only`: the `sqlite` subject (and its start-up timing) alone. */
const SQLITE_ONLY = process.argv.includes("--sqlite-only");
const SIDES = ["", "-wal", "-seal"];

// ---------------------------------------------------------------------------------------------
// Child: one kernel, filled and measured.

async function child(subject, n, keepDir) {
  const { startDevKernel } = await import("@rebuno/dev-kernel");
  const dir = mkdtempSync(join(tmpdir(), "rebuno-retained-"));
  const path = join(dir, "kernel.db");
  let lease;
  const kernel = await startDevKernel({
    store: subject === "sqlite" ? { sqlite: path } : "memory",
    maxRetainedExecutions: subject === "memory-cap" ? CAP : undefined,
    agents: [{ id: AGENT, webhookUrl: "http://agent.invalid/webhook", secret: SECRET }],
    // Webhooks delivered in process: the agent side only needs the lease.
    dispatch: {
      fetch: async (request) => {
        const w = JSON.parse(await request.text());
        lease = { dispatchId: w.dispatch_id, attempt: w.dispatch_attempt };
        return new Response(null, { status: 200 });
      },
    },
  });
  try {
    const template = await runTemplate(kernel, () => lease);
    const measure = async (filled) => {
      await settle(kernel, subject);
      globalThis.gc();
      globalThis.gc();
      const m = process.memoryUsage();
      // The SQLite store (format 5) keeps no execution in memory: every read is a query.
      const hot = subject === "sqlite" ? 0 : kernel.store.countExecutions();
      const file = subject === "sqlite" ? fileBytes(path) : 0;
      return {
        n: filled,
        rssMiB: round(m.rss / MIB, 1),
        heapMiB: round(m.heapUsed / MIB, 1),
        // Where the rest of the RSS is: V8's reserved heap, and anonymous vs file-backed pages (the
        // node binary and shared libraries are file-backed).
        heapTotalMiB: round(m.heapTotal / MIB, 1),
        ...procStatus(),
        retained: kernel.store.countExecutions(),
        inMemory: hot,
        fileMiB: round(file / MIB, 1),
      };
    };
    const points = [await measure(1)];
    let filled = 1;
    for (const quarter of [1, 2, 3, 4]) {
      const target = Math.round((n * quarter) / 4);
      while (filled < target) {
        const batch = Math.min(FILL_PER_TURN, target - filled);
        for (let i = 0; i < batch; i++) copyExecution(kernel.store, template, filled + i);
        filled += batch;
        await kernel.store.whenDurable();
        await new Promise((r) => setImmediate(r)); // let the sweeps and group commit run
      }
      points.push(await measure(filled));
      // A crash copy for the start-up timing (after the measurement; the last file is kept closed).
      if (keepDir !== undefined && quarter < 4) copyStore(path, join(keepDir, `q${quarter}.db`));
    }
    if (process.env.RETAINED_HEAP_SNAPSHOT)
      (await import("node:v8")).writeHeapSnapshot(process.env.RETAINED_HEAP_SNAPSHOT);
    if (process.send) process.send({ points });
    else console.log(JSON.stringify(points));
  } finally {
    await kernel.close();
    if (keepDir !== undefined)
      for (const side of SIDES)
        if (existsSync(path + side)) renameSync(path + side, join(keepDir, `q4.db${side}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Copy the store file with its WAL and seal, between two synchronous store calls. */
function copyStore(from, to) {
  for (const side of SIDES) if (existsSync(from + side)) copyFileSync(from + side, to + side);
}

/** RssAnon and RssFile of this process from /proc (Linux), in MiB. */
function procStatus() {
  try {
    const text = readFileSync("/proc/self/status", "utf8");
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN);
    return { rssAnonMiB: round(kb("RssAnon") / 1024, 1), rssFileMiB: round(kb("RssFile") / 1024, 1) };
  } catch {
    return {};
  }
}

function fileBytes(path) {
  let total = 0;
  for (const side of ["", "-wal"]) total += statSync(path + side, { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

/**
 * Wait (bounded) until the background work caught up with the fill: the kernel at rest. For the
 * capped memory store that is the retention sweep; the SQLite store keeps nothing in memory.
 */
async function settle(kernel, subject) {
  const deadline = Date.now() + 180_000;
  const done = () => (subject === "memory-cap" ? kernel.store.countExecutions() <= CAP : true);
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await kernel.store.whenDurable();
  await new Promise((r) => setTimeout(r, 1000)); // V8's memory reducer
}

async function request(kernel, method, target, body, lease) {
  const headers = { "content-type": "application/json" };
  if (lease !== undefined) {
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", SECRET)
      .update(`rebuno-request-v1\n${method}\n${target}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
      .update(body ?? "")
      .digest("hex");
    Object.assign(headers, {
      "rebuno-agent-id": AGENT,
      "rebuno-timestamp": ts,
      "rebuno-dispatch-id": lease.dispatchId,
      "rebuno-dispatch-attempt": String(lease.attempt),
      "rebuno-signature": `v1=${sig}`,
    });
  }
  const res = await kernel.fetch(new Request(`http://kernel.local${target}`, { method, headers, body }));
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${target}: ${res.status} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

/** One real 20-step execution through the HTTP core; returns its rows as the store holds them. */
async function runTemplate(kernel, currentLease) {
  const e = await request(kernel, "POST", "/v0/executions", '{"agent_id":"bench-agent","input":{"n":1}}');
  const deadline = Date.now() + 30_000;
  while (currentLease() === undefined && Date.now() < deadline) {
    await kernel.tick();
    await new Promise((r) => setTimeout(r, 10));
  }
  const lease = currentLease();
  const base = `/v0/executions/${e.id}/steps`;
  for (let i = 0; i < STEPS; i++) {
    const args = `{"to":"ops@example.com","subject":"weekly report","body":"All systems nominal.","n":${i}}`;
    const d = await request(
      kernel,
      "POST",
      base,
      `{"kind":"tool_call","target":"send_email","args":${args}}`,
      lease,
    );
    await request(
      kernel,
      "POST",
      `${base}/${d.step_id}/complete`,
      `{"result":{"ok":true,"message_id":"m-${i}","n":${i}}}`,
      lease,
    );
  }
  await request(kernel, "POST", `/v0/executions/${e.id}/complete`, '{"output":{"sent":20}}', lease);
  await kernel.store.whenDurable();
  const s = kernel.store;
  const events = s.listEvents(e.id, 0, 1_000);
  const dispatchIds = [...new Set(events.map((x) => JSON.parse(x.payloadJson).dispatch_id).filter(Boolean))];
  return {
    execution: s.getExecution(e.id),
    events,
    steps: s.listSteps(e.id),
    dispatches: dispatchIds.map((id) => s.getDispatch(id)).filter(Boolean),
  };
}

/** A copy of the template with a fresh id (same length), written as the engine writes it. */
function copyExecution(store, t, n) {
  const old = t.execution.id;
  const id = `${old.slice(0, 24)}${String(n).padStart(12, "0")}`;
  const now = Date.now();
  const swap = (text) => text.replaceAll(old, id);
  const firstStep = t.events.findIndex((x) => x.type.startsWith("step."));
  const dispatches = t.dispatches.map((d, i) => ({
    ...d,
    id: `${d.id.slice(0, 24)}${String(n * 4 + i).padStart(12, "0")}`,
    executionId: id,
  }));
  const swapDispatch = (text) =>
    dispatches.reduce((acc, d, i) => acc.replaceAll(t.dispatches[i].id, d.id), swap(text));
  store.transaction(() => {
    store.insertExecution({
      ...t.execution,
      id,
      status: "running",
      outputJson: undefined,
      createdAt: now,
      updatedAt: now,
    });
    for (const ev of t.events.slice(0, firstStep))
      store.appendEvent(id, ev.type, swapDispatch(ev.payloadJson), now);
    for (const d of dispatches) store.insertDispatch({ ...d, status: "pending" });
  });
  store.transaction(() => {
    for (const st of t.steps) store.insertStep({ ...st, executionId: id });
    for (const ev of t.events.slice(firstStep))
      store.appendEvent(id, ev.type, swapDispatch(ev.payloadJson), now);
    for (const d of dispatches) store.updateDispatch(d);
    store.updateExecution({ ...t.execution, id, createdAt: now, updatedAt: now });
  });
}

// ---------------------------------------------------------------------------------------------
// Parent: run each subject in its own process and report.

function runChild(subject, n, keepDir) {
  return new Promise((resolve, reject) => {
    const c = fork(SCRIPT, ["--child", subject, String(n), ...(keepDir ? [keepDir] : [])], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: ["--expose-gc"],
    });
    let result;
    c.on("message", (m) => (result = m));
    c.once("error", reject);
    c.once("exit", (code) =>
      code === 0 && result ? resolve(result.points) : reject(new Error(`${subject} child exited ${code}`)),
    );
  });
}

/** Milliseconds from spawning `rebuno-dev` on `file` to its "listening" line; then it is stopped. */
async function timeStart(file, quickCheck) {
  // The built command (the bench measures dist/, like the kernel it filled).
  const command = rebunoDevCommand(
    ["--quiet", "--no-console", "--listen", "127.0.0.1:0", "--store", `sqlite:${file}`].concat([
      "--sqlite-quick-check",
      quickCheck ? "on" : "off",
    ]),
    "built",
  );
  const t0 = performance.now();
  const c = spawn(command.command, command.args, {
    env: { ...process.env, ...command.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  c.stderr.on("data", (d) => (err += d));
  const exited = new Promise((resolve) => c.once("exit", resolve));
  const ms = await new Promise((resolve, reject) => {
    c.stdout.on("data", (d) => {
      out += d;
      if (out.includes("rebuno-dev listening on")) resolve(performance.now() - t0);
    });
    c.once("error", reject);
    exited.then((code) => reject(new Error(`rebuno-dev on ${file} exited ${code}: ${err}`)));
  });
  // rebuno-dev installs its SIGTERM handler just after that line: a signal sooner kills it outright.
  await sleep(300);
  c.kill("SIGTERM");
  const code = await exited;
  if (code !== 0) throw new Error(`rebuno-dev on ${file} stopped with ${code}: ${err}`);
  return ms;
}

/** Start-up of rebuno-dev on the kept files (q1…q4 = N/4…N), quick_check on and off. */
async function startupTimes(keepDir, n) {
  const files = [1, 2, 3, 4].map((q) => ({ q, n: Math.round((n * q) / 4), path: join(keepDir, `q${q}.db`) }));
  for (const f of files) await timeStart(f.path, false); // WAL recovery of the copies; page cache warm
  const samples = new Map(files.flatMap((f) => [true, false].map((on) => [`${f.q}/${on}`, []])));
  for (let round = 0; round < STARTUP_ROUNDS; round++) {
    // Interleaved, the order turned each round so no file is always first.
    const order = round % 2 === 0 ? files : [...files].reverse();
    for (const f of order)
      for (const on of [true, false]) {
        await sleep(200);
        samples.get(`${f.q}/${on}`).push(await timeStart(f.path, on));
      }
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const rows = files.map((f) => ({
    n: f.n,
    fileMiB: round(
      SIDES.reduce((t, side) => t + (statSync(f.path + side, { throwIfNoEntry: false })?.size ?? 0), 0) / MIB,
      1,
    ),
    quickCheckOnMs: round(median(samples.get(`${f.q}/true`)), 0),
    quickCheckOffMs: round(median(samples.get(`${f.q}/false`)), 0),
    rangeOnMs: [
      round(Math.min(...samples.get(`${f.q}/true`)), 0),
      round(Math.max(...samples.get(`${f.q}/true`)), 0),
    ],
    rangeOffMs: [
      round(Math.min(...samples.get(`${f.q}/false`)), 0),
      round(Math.max(...samples.get(`${f.q}/false`)), 0),
    ],
  }));
  return {
    rounds: STARTUP_ROUNDS,
    rows,
    ratioOn: round(rows[3].quickCheckOnMs / rows[0].quickCheckOnMs, 2),
    ratioOff: round(rows[3].quickCheckOffMs / rows[0].quickCheckOffMs, 2),
  };
}

async function main() {
  const t0 = Date.now();
  const keepDir = STARTUP ? mkdtempSync(join(tmpdir(), "rebuno-retained-startup-")) : undefined;
  let sqlite;
  let startup;
  try {
    sqlite = await runChild("sqlite", N, keepDir);
    if (keepDir !== undefined) startup = await startupTimes(keepDir, N);
  } finally {
    if (keepDir !== undefined) rmSync(keepDir, { recursive: true, force: true });
  }
  if (SQLITE_ONLY) {
    const last = sqlite.at(-1);
    report("retained-memory", {
      ...environment(),
      quick: QUICK,
      steps: STEPS,
      seconds: Math.round((Date.now() - t0) / 1000),
      sqlite,
      startup,
    });
    console.log(`SQLite at N = ${N}: RSS ${last.rssMiB} MiB, file ${last.fileMiB} MiB`);
    return;
  }
  const capped = await runChild("memory-cap", N);
  const uncapped = await runChild("memory", UNCAPPED_N);
  const last = (points) => points.at(-1);
  const perExecutionKiB = round(
    ((last(uncapped).heapMiB - uncapped[0].heapMiB) * 1024) / (UNCAPPED_N - 1),
    1,
  );
  const sqliteSlopeKiB = round(((last(sqlite).rssMiB - sqlite[1].rssMiB) * 1024) / (N - sqlite[1].n), 3);
  report("retained-memory", {
    ...environment(),
    quick: QUICK,
    steps: STEPS,
    seconds: Math.round((Date.now() - t0) / 1000),
    filling: "first execution through kernel.fetch, the rest as store-level copies of its rows (see header)",
    sqlite,
    memoryCap: { cap: CAP, points: capped },
    memoryUncapped: { points: uncapped, heapKiBPerExecution: perExecutionKiB },
    startup,
    goals: [
      {
        goal: `SQLite store: RSS ≤ 150 MiB with ${N.toLocaleString("en")} retained executions of ${STEPS} steps`,
        value: `${last(sqlite).rssMiB} MiB (${last(sqlite).inMemory} in memory, file ${last(sqlite).fileMiB} MiB; RSS slope ${sqliteSlopeKiB} KiB per execution after N/4)`,
        pass: last(sqlite).rssMiB <= 150,
      },
      {
        goal: `memory store with maxRetainedExecutions = ${CAP}: RSS bounded (RSS at N ≤ 1.1 × RSS at 3N/4)`,
        value: `${capped.at(-2).rssMiB} → ${last(capped).rssMiB} MiB (${last(capped).retained} retained)`,
        pass: last(capped).rssMiB <= 1.1 * capped.at(-2).rssMiB,
      },
      {
        goal: "memory store without a cap: heap per retained execution (stated in docs/dev-kernel.md)",
        value: `${perExecutionKiB} KiB`,
        pass: true,
      },
      ...(startup === undefined
        ? []
        : [
            {
              goal: `SQLite store: rebuno-dev start-up at N ÷ at N/4 ≤ 1.25 with quick_check off (N = ${N.toLocaleString("en")})`,
              value: `${startup.ratioOff} (${startup.rows[0].quickCheckOffMs} → ${startup.rows[3].quickCheckOffMs} ms); quick_check on: ${startup.ratioOn} (${startup.rows[0].quickCheckOnMs} → ${startup.rows[3].quickCheckOnMs} ms)`,
              pass: startup.ratioOff <= 1.25,
            },
          ]),
    ],
  });
}

if (process.argv[2] === "--child") await child(process.argv[3], Number(process.argv[4]), process.argv[5]);
else await main();
