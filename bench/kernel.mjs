// Benchmarks B7 and B8 of docs/benchmarks.md for the dev kernel.
//
//   pnpm tsc -b packages/dev-kernel && node --expose-gc bench/kernel.mjs [--quick] [--profile DIR] [--b8-sqlite] [--check]
//                                                                        [--baseline REF]
//
// B7 — steps/s for the agent's submit + complete pair (one step = two signed round trips) at
//   concurrency 1 and 50, for (a) the memory store and (b) SQLite WAL synchronous=NORMAL.
//   Baselines from the same run: (i) a bare node:http server doing the same HMAC verify +
//   JSON.parse (bench/lib/transport-harness.mjs), reached through the same undici Pool and the
//   same signing function; (ii) raw better-sqlite3 writes into the kernel's own tables, in this
//   process: the rows one step writes, in two transactions (the two requests' commits).
//   --baseline REF adds the SQLite store of git ref REF as subject `sqlite-base`, in the same rounds
//   (bench/lib/baseline.mjs), and reports sqlite's ratios to it.
//   Fairness: the kernel and the raw server both run in a child process over loopback, so the
//   client side (this process) is byte-for-byte the same code for both. Subjects are interleaved
//   in rounds (raw, memory, sqlite, raw, …) after a warm-up.
//   Goals: memory ≥ 0.5 × raw HTTP; SQLite ≥ 0.5 × min(raw HTTP, raw insert) (docs/benchmarks.md
//   B7 (b)); the ratio against the raw insert rate alone is reported too.
// B8 — heap growth of the kernel process over 10,000 steps in one execution (forced GC in the
//   child), compared with the bytes the API keeps by design: the steps and events JSON as served.
//   Goal: growth ≤ retained × 1.1.
//
// `--profile DIR` starts the kernel children with `--cpu-prof` (profiles land in DIR).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { baselineRef, baselineRoot } from "./lib/baseline.mjs";
import {
  plainRequest,
  serveDevKernel,
  signedPost,
  startDevKernelProcess,
  startWebhookReceiver,
} from "./lib/kernel-harness.mjs";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";
import { serveKernel, startKernelProcess } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const BASELINE = baselineRef();

function flag(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

// --quick (CI smoke via bench/run.mjs --quick): the same subjects with small counts.
const QUICK = process.argv.includes("--quick");
const ROUNDS = QUICK ? 1 : 3;
const SEQ_PAIRS = QUICK ? 100 : 400; // per round, concurrency 1
const CONC = 50;
const CONC_PAIRS = QUICK ? 4 : 20; // per worker per round
const B8_STEPS = QUICK ? 1_000 : 10_000;

// A realistic small tool call: ≈ 120 B of args, ≈ 60 B of result.
const argsText = (n) =>
  `{"to":"ops@example.com","subject":"weekly report","body":"All systems nominal.","n":${n}}`;
const resultText = (n) => `{"result":{"ok":true,"message_id":"m-${n}","n":${n}}}`;

/**
 * A B7 subject: a server URL plus how to get an execution and its lease. The raw server accepts
 * any ids, so it needs no setup; the kernel needs a real execution and its webhook lease.
 */
async function kernelSubject(name, storeSpec, receiver, execArgv, root = undefined) {
  const { Pool } = await import("undici");
  const proc = await startDevKernelProcess(SCRIPT, storeSpec, receiver.url, execArgv, root);
  const pool = new Pool(proc.url, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    name,
    proc,
    pool,
    async execution() {
      const { json } = await plainRequest(
        pool,
        "POST",
        "/v0/executions",
        '{"agent_id":"bench-agent","input":null}',
      );
      return { id: json.id, lease: await receiver.lease(json.id) };
    },
    async close() {
      await pool.close();
      await proc.stop();
    },
  };
}

async function rawSubject() {
  const { Pool } = await import("undici");
  const proc = await startKernelProcess(SCRIPT);
  const pool = new Pool(proc.url, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });
  let n = 0;
  return {
    name: "raw-http",
    pool,
    async execution() {
      n++;
      const id = `018f3a2b-4c5d-7e6f-8a9b-${String(n).padStart(12, "0")}`;
      return { id, lease: { dispatchId: "01920000-0000-7000-8000-000000000001", attempt: 1 } };
    },
    async close() {
      await pool.close();
      proc.stop();
    },
  };
}

let counter = 0;
/** One step: submit, then complete with the step id from the decision. */
async function pair(subject, exec) {
  const n = counter++;
  const target = `/v0/executions/${exec.id}/steps`;
  const d = await signedPost(
    subject.pool,
    target,
    exec.lease,
    `{"kind":"tool_call","target":"send_email","args":${argsText(n)}}`,
  );
  if (d.decision !== "proceed") throw new Error(`${subject.name}: unexpected decision ${JSON.stringify(d)}`);
  await signedPost(
    subject.pool,
    `${target}/${d.step_id}/complete`,
    exec.lease,
    `{"result":${resultText(n)}}`,
  );
}

/** Sequential block: returns { seconds, samples }. */
async function seqBlock(subject, pairs) {
  const exec = await subject.execution();
  const samples = new Array(pairs);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < pairs; i++) {
    const s = process.hrtime.bigint();
    await pair(subject, exec);
    samples[i] = Number(process.hrtime.bigint() - s);
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, samples };
}

/** Concurrent block: `CONC` workers, each on its own execution and lease. */
async function concBlock(subject, perWorker) {
  const execs = await Promise.all(Array.from({ length: CONC }, () => subject.execution()));
  const t0 = process.hrtime.bigint();
  await Promise.all(
    execs.map(async (exec) => {
      for (let i = 0; i < perWorker; i++) await pair(subject, exec);
    }),
  );
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/**
 * Raw insert baseline: the rows the kernel writes for one step, into its own tables (a file the
 * SqliteStore created), via better-sqlite3 (WAL, synchronous NORMAL, otherwise SQLite's defaults),
 * in this process. One step is two transactions, the two requests' commits: the submit's (lease
 * renewal, step insert, step.proposed / step.allowed events, step update to executing,
 * step.executing event, occurrence counter) and the complete's (step update to succeeded,
 * step.succeeded event).
 */
async function rawInsertRate(dir, steps) {
  const { SqliteStore } = await import("@rebuno/dev-kernel");
  const Database = (await import("better-sqlite3")).default;
  const path = join(dir, `raw-${counter}.db`);
  new SqliteStore(path).close(); // the kernel's own tables
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const exec = `018f3a2b-0000-7000-8000-${String(counter++).padStart(12, "0")}`;
  const dispatchId = `018f3a2b-0000-7000-9000-${String(counter).padStart(12, "0")}`;
  const hash = "3517a5b57c206bd412d8c27a39ffa822dc37f57c602d508f059dc5d85d1c2959";
  const now0 = Date.now();
  db.prepare(
    `INSERT INTO dispatches (id, execution_id, status, attempt, max_attempts, next_attempt_at, locked_by,
       locked_at, lease_ms, created_at) VALUES (?, ?, 'in_flight', 1, 5, ?, 'rebuno-dev-832ca662', ?, 600000, ?)`,
  ).run(dispatchId, exec, now0, now0, now0);
  const renew = db.prepare("UPDATE dispatches SET locked_at = ? WHERE id = ?");
  const insertStep = db.prepare(
    `INSERT INTO steps (execution_id, step_id, kind, target, args_hash, occurrence, status, idempotency, args,
       resources, created_at) VALUES (?, ?, 'tool_call', 'send_email', ?, 0, 'proposed', 'safe_to_retry', ?, '[]', ?)`,
  );
  const updateStep = db.prepare(
    "UPDATE steps SET status = ?, started_at = ?, result = ?, completed_at = ? WHERE execution_id = ? AND step_id = ?",
  );
  const lastSeq = db.prepare("SELECT coalesce(max(event_seq), 0) FROM events WHERE execution_id = ?").pluck();
  const insertEvent = db.prepare(
    "INSERT INTO events (execution_id, event_seq, type, payload, occurred_at) VALUES (?, ?, ?, ?, ?)",
  );
  const counterSet = db.prepare(
    "INSERT OR REPLACE INTO dispatch_step_counters (dispatch_id, kind, target, args_hash, consumed) VALUES (?, 'tool_call', 'send_email', ?, 0)",
  );
  const event = (s, type, now, extra = "") =>
    insertEvent.run(
      exec,
      lastSeq.get(exec) + 1,
      type,
      `{"step_id":"${s}","step_type":"tool_call","target":"send_email"${extra}}`,
      now,
    );
  const submit = db.transaction((s, i, now) => {
    renew.run(now, dispatchId);
    insertStep.run(exec, s, hash, argsText(i), now);
    event(s, "step.proposed", now);
    event(s, "step.allowed", now, ',"rule_id":"permissive"');
    updateStep.run("executing", now, null, null, exec, s);
    event(s, "step.executing", now);
    counterSet.run(dispatchId, hash);
  });
  const complete = db.transaction((s, i, now) => {
    updateStep.run("succeeded", now, resultText(i), now, exec, s);
    event(s, "step.succeeded", now);
  });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < steps; i++) {
    const s = i.toString(16).padStart(64, "0");
    const now = Date.now();
    submit(s, i, now);
    complete(s, i, now);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  db.close();
  return steps / seconds;
}

async function b7(dir, receiver, execArgv) {
  const raw = await rawSubject();
  const memory = await kernelSubject("memory", "memory", receiver, execArgv);
  const sqlite = await kernelSubject("sqlite", `sqlite:${join(dir, "b7.db")}`, receiver, execArgv);
  const subjects = [raw, memory, sqlite];
  const base = BASELINE === undefined ? undefined : baselineRoot(BASELINE);
  if (base !== undefined) {
    // The same store of the baseline ref, interleaved in the same rounds (bench/lib/baseline.mjs).
    subjects.push(
      await kernelSubject("sqlite-base", `sqlite:${join(dir, "b7-base.db")}`, receiver, execArgv, base),
    );
  }
  const acc = Object.fromEntries(
    subjects.map((s) => [s.name, { seqS: 0, seqN: 0, samples: [], concS: 0, concN: 0 }]),
  );
  // Warm-up: JIT, connection pools, SQLite page cache.
  for (const s of subjects) {
    await seqBlock(s, 200);
    await concBlock(s, 5);
  }
  let insertSteps = 0;
  let insertSeconds = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of subjects) {
      const a = acc[s.name];
      const seq = await seqBlock(s, SEQ_PAIRS);
      a.seqS += seq.seconds;
      a.seqN += SEQ_PAIRS;
      a.samples.push(...seq.samples);
      a.concS += await concBlock(s, CONC_PAIRS);
      a.concN += CONC * CONC_PAIRS;
    }
    const rate = await rawInsertRate(dir, 2000);
    insertSteps += 2000;
    insertSeconds += 2000 / rate;
  }
  for (const s of subjects) await s.close();

  const rates = Object.fromEntries(
    Object.entries(acc).map(([name, a]) => [
      name,
      { c1: a.seqN / a.seqS, c50: a.concN / a.concS, latency: summarize(a.samples) },
    ]),
  );
  const rawInsert = insertSteps / insertSeconds;
  report("B7.raw-insert", {
    stepsPerSec: round(rawInsert, 0),
    note: "better-sqlite3, WAL NORMAL, the store's rows of one step in its tables (2 tx)",
  });
  for (const name of ["raw-http", "memory", "sqlite", ...(base === undefined ? [] : ["sqlite-base"])]) {
    const x = rates[name];
    const out = {
      c1StepsPerSec: round(x.c1, 0),
      c50StepsPerSec: round(x.c50, 0),
      c1PairLatencyUs: x.latency,
    };
    if (name !== "raw-http") {
      out.c1VsRawHttp = ratio(x.c1, rates["raw-http"].c1);
      out.c50VsRawHttp = ratio(x.c50, rates["raw-http"].c50);
    }
    if (name === "sqlite") {
      out.c1VsRawInsert = ratio(x.c1, rawInsert);
      out.c50VsRawInsert = ratio(x.c50, rawInsert);
      out.c1VsMin = ratio(x.c1, Math.min(rates["raw-http"].c1, rawInsert));
      out.c50VsMin = ratio(x.c50, Math.min(rates["raw-http"].c50, rawInsert));
      if (base !== undefined) {
        out.baseline = BASELINE;
        out.c1VsBaseline = ratio(x.c1, rates["sqlite-base"].c1);
        out.c50VsBaseline = ratio(x.c50, rates["sqlite-base"].c50);
      }
    }
    report(`B7.${name}`, out);
  }
  const goals = {
    memoryC1: rates.memory.c1 >= 0.5 * rates["raw-http"].c1,
    memoryC50: rates.memory.c50 >= 0.5 * rates["raw-http"].c50,
    sqliteC1: rates.sqlite.c1 >= 0.5 * Math.min(rates["raw-http"].c1, rawInsert),
    sqliteC50: rates.sqlite.c50 >= 0.5 * Math.min(rates["raw-http"].c50, rawInsert),
  };
  report("B7.goals", goals);
  return Object.values(goals).every(Boolean);
}

/** B8: heap of the kernel child around 10,000 steps of one execution. */
async function b8(dir, receiver, storeName, execArgv) {
  const storeSpec = storeName === "memory" ? "memory" : `sqlite:${join(dir, "b8.db")}`;
  const s = await kernelSubject(`b8-${storeName}`, storeSpec, receiver, ["--expose-gc", ...execArgv]);
  // Warm the code paths on a throwaway execution so JIT code and caches are not counted.
  await seqBlock(s, 300);
  const exec = await s.execution();
  const heap0 = await s.proc.heapUsed();
  const workers = 10; // parallel requests on the one execution (the kernel serializes them)
  const run = (steps) =>
    Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < steps / workers; i++) await pair(s, exec);
      }),
    );
  await run(B8_STEPS / 2);
  const heap5k = await s.proc.heapUsed();
  await run(B8_STEPS / 2);
  const heap10k = await s.proc.heapUsed();
  // What the API keeps for this execution, as served.
  let retained = Buffer.byteLength(
    (await plainRequest(s.pool, "GET", `/v0/executions/${exec.id}/steps`)).text,
  );
  let after = 0;
  for (;;) {
    const page = await plainRequest(
      s.pool,
      "GET",
      `/v0/executions/${exec.id}/events?limit=1000&after_seq=${after}`,
    );
    if (page.json.length === 0) break;
    retained += Buffer.byteLength(page.text);
    after = page.json.at(-1).event_seq;
  }
  await signedPost(s.pool, `/v0/executions/${exec.id}/complete`, exec.lease, '{"output":"done"}');
  const heapDone = await s.proc.heapUsed();
  await s.close();
  const growth = heap10k - heap0;
  const out = {
    steps: B8_STEPS,
    heap0MiB: round(heap0 / 2 ** 20),
    growth5kMiB: round((heap5k - heap0) / 2 ** 20),
    growth10kMiB: round(growth / 2 ** 20),
    afterCompletionMiB: round((heapDone - heap0) / 2 ** 20),
    retainedMiB: round(retained / 2 ** 20),
    growthVsRetained: ratio(growth, retained),
    goal: growth <= retained * 1.1,
  };
  report(`B8.${storeName}`, out);
  return out.goal;
}

async function main() {
  const started = Date.now();
  const profileDir = flag("--profile");
  const execArgv = profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profileDir];
  const dir = mkdtempSync(join(tmpdir(), "rebuno-bench-kernel-"));
  const receiver = await startWebhookReceiver();
  console.log(`kernel bench: ${JSON.stringify(environment())}; kernel and raw server in child processes`);
  try {
    const ok7 = await b7(dir, receiver, execArgv);
    const ok8m = await b8(dir, receiver, "memory", execArgv);
    // SQLite keeps rows on disk, so its heap is not the question B8 asks; opt in with --b8-sqlite.
    const ok8s = process.argv.includes("--b8-sqlite") ? await b8(dir, receiver, "sqlite", execArgv) : true;
    console.log(`kernel bench done in ${round((Date.now() - started) / 1000, 1)} s`);
    if (process.argv.includes("--check") && !(ok7 && ok8m && ok8s)) process.exitCode = 1;
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Entry last: the module's top-level bindings above must be initialized before main() runs.
if (process.argv.includes("--serve")) {
  serveKernel();
} else if (process.argv.includes("--serve-kernel")) {
  const i = process.argv.indexOf("--serve-kernel");
  await serveDevKernel(process.argv[i + 1], process.argv[i + 2]);
} else {
  await main();
}
