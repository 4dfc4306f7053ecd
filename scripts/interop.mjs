#!/usr/bin/env node
// Interop suite: the official Python SDK (and our TypeScript SDK) as agents of our dev kernel, or of
// any real kernel given by REBUNO_URL. Scenarios live in verify/interop/scenarios/*.mjs; each default-exports
// an array of { name, agents, timeoutMs, run(world, ctx) }.
//
//   pnpm test:interop                      # every scenario against a fresh rebuno-dev per scenario
//   pnpm test:interop -- python-tools      # only scenario files/names containing "python-tools"
//   REBUNO_URL=http://127.0.0.1:8080 [REBUNO_API_KEY=…] pnpm test:interop   # a real kernel
//
// Env: INTEROP_STORE (memory | sqlite, default memory), INTEROP_CONCURRENCY (default 3),
// INTEROP_PORT_BASE (fixed agent ports, needed with REBUNO_URL and no REBUNO_API_KEY),
// INTEROP_PRINT_PROVISIONING=1 (print the YAML for a real kernel and exit),
// INTEROP_DEV_KERNEL_BIN (another launcher with rebuno-dev's flags).
// Prints `N passed, M failed` last and exits 1 on any failure.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  loadPackages,
  OUT_DIR,
  PYTHON,
  provisioningYaml,
  ROOT,
  World,
} from "../verify/interop/lib/harness.mjs";

const filters = process.argv.slice(2).filter((a) => a !== "--");
const external = process.env.REBUNO_URL
  ? { url: process.env.REBUNO_URL.replace(/\/+$/, ""), apiKey: process.env.REBUNO_API_KEY || undefined }
  : undefined;
const concurrency = Math.max(1, Number(process.env.INTEROP_CONCURRENCY ?? 3));
const portBase = Number(process.env.INTEROP_PORT_BASE ?? 0);

function fail(message) {
  console.error(message);
  console.log("0 passed, 1 failed");
  process.exit(1);
}

if (!existsSync(PYTHON))
  fail(`missing ${path.relative(ROOT, PYTHON)}: run \`bash verify/interop/python/setup.sh\` first`);

const scenarioDir = path.join(ROOT, "verify/interop/scenarios");
const everyScenario = [];
for (const file of readdirSync(scenarioDir)
  .filter((f) => f.endsWith(".mjs"))
  .sort()) {
  const mod = await import(pathToFileURL(path.join(scenarioDir, file)).href);
  for (const s of mod.default)
    everyScenario.push({ ...s, id: `${file.replace(/\.mjs$/, "")}: ${s.name}`, file });
}

// With a real kernel and no admin token the user provisions the agents: ports (assigned over every
// scenario in file order, so a filtered run matches the printed YAML) and secrets are fixed.
const fixedPorts =
  Boolean(process.env.INTEROP_PRINT_PROVISIONING) || (external !== undefined && !external.apiKey);
if (fixedPorts) {
  let next = portBase || 5100;
  for (const s of everyScenario)
    for (const a of s.agents) Object.assign(a, { port: next++, secret: `${a.id}-secret` });
}
if (process.env.INTEROP_PRINT_PROVISIONING) {
  const all = everyScenario.flatMap((s) => s.agents);
  const yaml = provisioningYaml(all.map((a) => ({ ...a, webhookUrl: `http://127.0.0.1:${a.port}/webhook` })));
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(path.join(OUT_DIR, "provisioning.yaml"), yaml);
  console.log(yaml);
  console.log(
    `# written to ${path.relative(ROOT, path.join(OUT_DIR, "provisioning.yaml"))}; run with INTEROP_PORT_BASE=${portBase || 5100}`,
  );
  process.exit(0);
}

const scenarios = everyScenario.filter((s) => !filters.length || filters.some((f) => s.id.includes(f)));
if (!scenarios.length) fail(`no scenario matches ${filters.join(" ")}`);

let packages;
try {
  packages = await loadPackages();
} catch (err) {
  fail(String(err?.message ?? err));
}

console.log(
  `interop: ${scenarios.length} scenario(s) against ${external ? `${external.url} (external kernel)` : `rebuno-dev (one per scenario, store ${process.env.INTEROP_STORE ?? "memory"})`}, concurrency ${concurrency}`,
);

const results = [];
async function runOne(s) {
  const started = Date.now();
  const world = new World({ name: s.id, packages, external });
  let error;
  let timer;
  try {
    await world.setup(s.agents.map((a) => ({ ...a, env: { ...a.env } })));
    await Promise.race([
      s.run(world, { ...packages, external }),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`scenario timed out after ${s.timeoutMs ?? 60_000} ms`)),
          s.timeoutMs ?? 60_000,
        );
      }),
    ]);
  } catch (err) {
    error = err;
  } finally {
    clearTimeout(timer);
    await world.teardown().catch(() => {});
  }
  const ms = Date.now() - started;
  if (error) {
    console.log(`not ok - ${s.id} (${(ms / 1000).toFixed(1)} s)`);
    console.log(
      `  ${String(error?.stack ?? error)
        .split("\n")
        .slice(0, 12)
        .join("\n  ")}`,
    );
    console.log(world.logs().replace(/^/gm, "  | "));
  } else {
    console.log(`ok - ${s.id} (${(ms / 1000).toFixed(1)} s)`);
  }
  results.push({ id: s.id, ok: !error, ms });
}

// Longest first, so the 15-25 s lease scenarios overlap the short ones.
const queue = [...scenarios].sort((a, b) => (b.timeoutMs ?? 60_000) - (a.timeoutMs ?? 60_000));
const suiteStart = Date.now();
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    while (queue.length) await runOne(queue.shift());
  }),
);
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`interop finished in ${((Date.now() - suiteStart) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
