#!/usr/bin/env node
import { spawnSync } from "node:child_process";
// The real Rebuno kernel (Go) from the command line: build it from source, run `rebuno dev` or
// `rebuno server` (with a throwaway PostgreSQL cluster) on loopback, and run the real-kernel suite.
//
//   node scripts/real-kernel.mjs build            # build (or reuse) the binary, print its path
//   node scripts/real-kernel.mjs dev [manifest]   # `rebuno dev` on a free loopback port until Ctrl-C
//   node scripts/real-kernel.mjs server [manifest]# PostgreSQL + `rebuno server` until Ctrl-C
//   node scripts/real-kernel.mjs test [filter]    # the real-kernel suite; last line `N passed, M failed`
//
// The library (building, starting `rebuno dev`/`rebuno server`, PostgreSQL; its environment
// variables) is verify/real-kernel/lib/go-kernel.mjs, which the suites and benches import.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@rebuno/test-kit";
import {
  buildKernel,
  ROOT,
  SetupError,
  spawnKernel,
  startPostgres,
} from "../verify/real-kernel/lib/go-kernel.mjs";

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
