#!/usr/bin/env node
// The README's test command: build (tsc -b typechecks every package), run vitest, and close with the
// plain "N passed, M failed" line that CI reads. Extra arguments go to vitest (e.g. a path filter).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";

const run = (cmd, args) => spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1;

if (run(process.execPath, ["node_modules/typescript/bin/tsc", "-b"]) !== 0) {
  console.log("0 passed, 1 failed: typecheck");
  process.exit(1);
}
// The web console's browser bundle is part of the build (`rebuno-dev` serves it at `/`).
if (run(process.execPath, ["packages/console/scripts/build.mjs"]) !== 0) {
  console.log("0 passed, 1 failed: console bundle");
  process.exit(1);
}
mkdirSync(".tmp", { recursive: true });
// One report per suite and Node version (`--project browser` → vitest-browser-<v>.json).
const projectArg = process.argv.indexOf("--project");
const suite = projectArg > 0 ? `${process.argv[projectArg + 1] ?? ""}-` : "";
const report = `.tmp/vitest-${suite}${process.versions.node}.json`;
const status = run(process.execPath, [
  "node_modules/vitest/vitest.mjs",
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
let passed = 0;
let failed = 0;
try {
  const json = JSON.parse(readFileSync(report, "utf8"));
  passed = json.numPassedTests;
  failed = json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0);
} catch {
  failed += 1; // no report means vitest itself failed to run
}
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(status === 0 && failed === 0 ? 0 : 1);
