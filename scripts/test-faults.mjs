#!/usr/bin/env node
// `pnpm test:faults`: run the fault suite (the `faults` project of verify/vitest.config.ts:
// verify/faults/** plus the fault tests that live beside the code), then write docs/reliability.md from the rows the tests recorded
// (.tmp/faults/*.json) and the per-file pass counts of the vitest JSON report. Closes with the plain
// "N passed, M failed" line that CI reads. Extra arguments go to vitest (e.g. a path filter).
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const FAULTS_DIR = ".tmp/faults";
const DOC = "docs/reliability.md";

// What each fault test beside the code proves (the verify/faults/** tests record their own rows).
const BESIDE = {
  "packages/sdk/test/crash-redelivery.test.ts": [
    "Crashes",
    "agent SIGKILLed mid-tool (child process), redelivered after lease expiry",
    "safe_to_retry re-runs and completes; at_most_once becomes indeterminate and never runs twice",
  ],
  "packages/sdk/test/delivery.test.ts": [
    "Delivery",
    "duplicated webhook (also after completion); superseded run",
    "a duplicate runs once; a superseded run aborts and none of its writes land",
  ],
  "packages/dev-kernel/test/restart.test.ts": [
    "Crashes",
    "dev kernel (SQLite) SIGKILLed mid-dispatch, restarted on the same file and port",
    "every acknowledged write survives; the in-flight dispatch is reclaimed and replayed",
  ],
  "packages/sdk/test/integration/kernel-outage.test.ts": [
    "Outages",
    "kernel unreachable for 1, 3 and 5 s during a run (SIGKILL, restart on SQLite)",
    "every execution completes; every body ran exactly once; recorded results are the ones returned",
  ],
  "packages/dev-kernel/test/sqlite-failures.test.ts": [
    "Hostile input",
    "SQLite commit failures, a second kernel on one file, unreadable files",
    "a failed commit is never acknowledged; the second kernel is refused; a typed error at start",
  ],
  "packages/dev-kernel/test/sqlite-damage.test.ts": [
    "Hostile input",
    "damaged, empty, read-only and foreign SQLite files; flipped bytes inside stored values (in the file, in a WAL frame)",
    "start refuses with a typed error naming the file (no silent start) and leaves it unchanged, or opens read-only as documented; a row whose JSON no longer parses is answered with the `store_corrupt` envelope naming it while everything else is served; a flip that stays valid JSON is served (not detectable, documented)",
  ],
  "packages/dev-kernel/test/bad-input.test.ts": [
    "Hostile input",
    "malformed requests to the dev kernel (headers, bodies, ids)",
    "a JSON error envelope, no crash, state untouched",
  ],
  "packages/dev-kernel/test/http-rejections.test.ts": [
    "Hostile input",
    "malformed request lines and headers at the socket level, slow and oversized bodies",
    "a JSON error answer (or a clean close), the kernel keeps serving",
  ],
  "packages/policy/test/regex.test.ts": [
    "Hostile input",
    "pathological policy patterns (catastrophic backtracking in other engines)",
    "evaluation in linear time; Go's syntax accepted and refused as Go does",
  ],
  "packages/sdk/test/webhook-fuzz.test.ts": [
    "Hostile input",
    "raw-socket fuzz of the agent's webhook server (seeded, FUZZ_SEED)",
    "a JSON error answer to every request, each refusal logged, the process keeps serving",
  ],
};
const GROUPS = ["Crashes", "Outages", "Network", "Delivery", "Time", "Hostile input", "Load"];

const started = Date.now();
rmSync(FAULTS_DIR, { recursive: true, force: true });
mkdirSync(FAULTS_DIR, { recursive: true });
const report = `.tmp/vitest-faults-${process.versions.node}.json`;
// Vitest's output is passed through as it comes; the seeds randomized tests print are collected.
const printedSeeds = new Set();
const status = await new Promise((resolve) => {
  const child = spawn(
    process.execPath,
    [
      "node_modules/vitest/vitest.mjs",
      "run",
      "--config",
      "verify/vitest.config.ts",
      "--project",
      "faults",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${report}`,
      ...process.argv.slice(2),
    ],
    { stdio: ["inherit", "pipe", "inherit"] },
  );
  child.stdout.on("data", (chunk) => {
    process.stdout.write(chunk);
    for (const m of chunk.toString().matchAll(/\b(FAULT_SEED|FUZZ_SEED)=(\d+)/g))
      printedSeeds.add(`${m[1]}=${m[2]}`);
  });
  child.on("close", (code) => resolve(code ?? 1));
});
const seconds = Math.round((Date.now() - started) / 1000);

let json;
try {
  json = JSON.parse(readFileSync(report, "utf8"));
} catch {
  json = undefined; // no report means vitest itself failed to run
}
const passed = json?.numPassedTests ?? 0;
let failed = json === undefined ? 1 : json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0);
if (status !== 0 && failed === 0) failed = 1;

/** Per test file: passed and failed counts, keyed by the repository-relative path. */
const perFile = new Map();
for (const file of json?.testResults ?? []) {
  const path = relative(process.cwd(), file.name).split("\\").join("/");
  const counts = { passed: 0, failed: 0 };
  for (const a of file.assertionResults ?? []) {
    if (a.status === "passed") counts.passed++;
    else if (a.status === "failed") counts.failed++;
  }
  if (file.status === "failed" && counts.failed === 0) counts.failed = 1; // the file did not load
  perFile.set(path, counts);
}
const resultOf = (test) => {
  const c = perFile.get(test);
  if (c === undefined) return "not run";
  const tests = `${c.passed} test${c.passed === 1 ? "" : "s"}`;
  return c.failed === 0 ? `pass (${tests})` : `**FAIL** (${c.failed} failed, ${tests} passed)`;
};

const rows = [];
for (const name of readdirSync(FAULTS_DIR)
  .filter((n) => n.endsWith(".json"))
  .sort()) {
  const row = JSON.parse(readFileSync(`${FAULTS_DIR}/${name}`, "utf8"));
  const counts = Object.entries(row.counts ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  rows.push({
    group: row.group,
    fault: row.fault,
    promise: row.promise,
    test: row.test,
    result: `${resultOf(row.test)}: ${counts}`,
    seed: row.seed,
  });
}
for (const [test, [group, fault, promise]] of Object.entries(BESIDE)) {
  rows.push({ group, fault, promise, test, result: resultOf(test) });
}
// Test files of the verify/faults/ folder that ran but recorded no row (a failure before the record).
for (const [test] of perFile) {
  if (!rows.some((r) => r.test === test)) {
    rows.push({ group: "Other", fault: test, promise: "(no row recorded)", test, result: resultOf(test) });
  }
}
const order = (g) => (GROUPS.includes(g) ? GROUPS.indexOf(g) : GROUPS.length);
rows.sort((a, b) => order(a.group) - order(b.group));

const cell = (s) => String(s).replaceAll("|", "\\|").replaceAll("\n", " ");
// Rows carry their FAULT_SEED; the webhook fuzz (a beside-the-code test) prints its FUZZ_SEED.
const seeds = [
  ...rows.filter((r) => r.seed !== undefined).map((r) => `\`${cell(r.test)}\` FAULT_SEED=${r.seed}`),
  ...[...printedSeeds]
    .filter((s) => s.startsWith("FUZZ_SEED="))
    .map((s) => `\`packages/sdk/test/webhook-fuzz.test.ts\` ${s}`),
];
const doc = `# Reliability: the fault suite

\`pnpm test:faults\` injects the faults a durable runtime must survive (crashes, outages, network
faults, delivery anomalies, clock skew, hostile input, load) against the real dev kernel and real SDK
agents, and checks what the protocol promises under each. Every randomized test prints its seed;
\`FAULT_SEED=<seed>\` (\`FUZZ_SEED\` for the webhook fuzz) replays the same plan. CI runs it in
\`.ci/run\`; this page is written by \`scripts/test-faults.mjs\` from its last run.

Last run: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${process.versions.node}, ${process.platform}/${process.arch}, ${seconds} s, **${passed} passed, ${failed} failed**.

Seeds printed by the randomized tests (replay by setting the variable): ${seeds.length > 0 ? seeds.join("; ") : "none"}.

| Group | Fault | Promise | Test | Last result |
| --- | --- | --- | --- | --- |
${rows.map((r) => `| ${cell(r.group)} | ${cell(r.fault)} | ${cell(r.promise)} | \`${cell(r.test)}\` | ${cell(r.result)} |`).join("\n")}
`;
writeFileSync(DOC, doc);
console.log(`wrote ${DOC} (${rows.length} rows, ${seconds} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(status === 0 && failed === 0 ? 0 : 1);
