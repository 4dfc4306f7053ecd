#!/usr/bin/env node
// Packed-tarball smoke test: what a user installing our packages from npm gets.
//
//   node verify/pack/smoke.mjs [--node PATH] [--pm npm|pnpm|both] [--keep]
//
// 1. `pnpm pack` every public package into .tmp/pack and check each tarball (LICENSE, README,
//    no build caches or tests, every source map's sources shipped);
// 2. for each package manager: an empty project in a temp folder, the tarballs installed with it
//    (npm: without optional dependencies, so no better-sqlite3; pnpm 10: better-sqlite3 installed
//    but its build script not approved, so no native addon);
// 3. with `--node` (default: this Node): type-check and compile a consumer with `skipLibCheck:
//    false`, run examples/hello on the embedded dev kernel (memory store), a framework adapter,
//    @rebuno/testing's TestEnvironment, the SQLite store's missing-driver error, and
//    examples/legacy-decorators compiled with experimentalDecorators + emitDecoratorMetadata, and
//    @rebuno/policy run from its tarball without a kernel;
// 4. npm: @rebuno/dev-kernel installed alone brings no HTTP client (ky, undici, our transport or
//    client) and not the console.
// Needs a prior `tsc -b` (packs dist/). The last line is `N passed, M failed`.
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PACK_DIR = path.join(ROOT, ".tmp", "pack");

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const NODE = path.resolve(flag("--node") ?? process.execPath);
const PMS = (flag("--pm") ?? "both") === "both" ? ["npm", "pnpm"] : [flag("--pm")];
const KEEP = args.includes("--keep");
// Third-party versions the consumer installs: those the workspace builds and tests with.
const TYPESCRIPT = "5.9.3";
const TYPES_NODE = "20.19.8";
const THIRD_PARTY = { zod: "^4.2.0", ai: "^6.0.0", "reflect-metadata": "^0.2.2" };

let passed = 0;
let failed = 0;
function check(name, fn) {
  try {
    const note = fn();
    passed++;
    console.log(`ok   ${name}${note ? ` (${note})` : ""}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}\n${indent(String(error?.message ?? error))}`);
  }
}
const indent = (text) =>
  text
    .trim()
    .split("\n")
    .slice(0, 60)
    .map((l) => `     ${l}`)
    .join("\n");

/** Run a command; throws with its output when it fails. Bounded by `timeout`. */
function run(cmd, argv, options = {}) {
  const r = spawnSync(cmd, argv, {
    cwd: options.cwd,
    env: { ...cleanEnv(), ...options.env },
    encoding: "utf8",
    timeout: options.timeout ?? 300_000,
    killSignal: "SIGKILL",
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.error) throw new Error(`${cmd} ${argv.join(" ")}: ${r.error.message}\n${out}`);
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} exited ${r.status}\n${out}`);
  return out;
}

/** The environment without what pnpm sets for scripts (NODE_PATH reaches the workspace's store). */
function cleanEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k === "NODE_PATH" || k.startsWith("npm_") || k.startsWith("PNPM_") || k === "INIT_CWD") delete env[k];
  }
  // The chosen Node first on PATH: npm/pnpm lifecycle scripts and `tsc` run on it too.
  env.PATH = `${path.dirname(NODE)}${path.delimiter}${env.PATH}`;
  return env;
}

// --- 1. pack -------------------------------------------------------------------------------------

const packages = readdirSync(path.join(ROOT, "packages"))
  .map((dir) => ({
    dir: path.join(ROOT, "packages", dir),
    pkg: readJson(path.join(ROOT, "packages", dir, "package.json")),
  }))
  .filter(({ pkg }) => pkg && !pkg.private);
function readJson(file) {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

// `tsc -b` never deletes the outputs of a deleted source; a local tree may hold some, which a
// clean checkout does not. Remove them (found by their source maps) so that they are not packed.
function removeStaleOutputs(distDir) {
  const removed = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(".map")) {
        const { sources = [] } = JSON.parse(readFileSync(file, "utf8"));
        if (sources.length > 0 && sources.every((src) => !existsSync(path.resolve(dir, src)))) {
          rmSync(file.slice(0, -".map".length), { force: true });
          rmSync(file, { force: true });
          removed.push(path.relative(ROOT, file.slice(0, -".map".length)));
        }
      }
    }
  };
  if (existsSync(distDir)) walk(distDir);
  return removed;
}
for (const { dir } of packages) {
  for (const file of removeStaleOutputs(path.join(dir, "dist"))) console.log(`note removed stale ${file}`);
}

rmSync(PACK_DIR, { recursive: true, force: true });
mkdirSync(PACK_DIR, { recursive: true });
const tarballs = new Map();
check(`pnpm pack ${packages.length} public packages`, () => {
  for (const { dir, pkg } of packages) {
    run("pnpm", ["pack", "--pack-destination", PACK_DIR], { cwd: dir });
    const file = path.join(PACK_DIR, `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`);
    if (!existsSync(file)) throw new Error(`${pkg.name}: ${file} not written`);
    tarballs.set(pkg.name, file);
  }
  return [...tarballs.keys()].join(", ");
});

for (const [name, file] of tarballs) {
  check(`${name} tarball contents`, () => {
    const list = execFileSync("tar", ["-tzf", file], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ""));
    const problems = [];
    // The console ships its built page (`pnpm build` makes it), not only the module that finds it.
    const extra = name === "@rebuno/console" ? ["dist/assets/index.html", "dist/assets/console.js"] : [];
    for (const required of ["LICENSE", "README.md", "package.json", ...extra]) {
      if (!list.includes(required)) problems.push(`missing ${required}`);
    }
    for (const f of list) {
      if (f.endsWith(".tsbuildinfo")) problems.push(`build cache ${f}`);
      if (/(^|\/)(test|tests|__tests__)\//.test(f) || /\.test\.[cm]?[jt]s$/.test(f))
        problems.push(`test file ${f}`);
    }
    // Every map's sources must ship, or debuggers and "go to source" point at nothing.
    const maps = list.filter((f) => f.endsWith(".map"));
    if (maps.length > 0) {
      const text = execFileSync("tar", ["-xzOf", file, ...maps.map((m) => `package/${m}`)], {
        encoding: "utf8",
        maxBuffer: 256 << 20,
      });
      const shipped = new Set(list);
      // Maps are concatenated by tar -O: read each {"version":3,...} object's sources in order.
      for (const [i, json] of text.split(/(?<=\})(?=\{"version")/).entries()) {
        const map = JSON.parse(json);
        for (const source of map.sources ?? []) {
          const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(maps[i]), source));
          if (!shipped.has(resolved)) problems.push(`${maps[i]} points at ${resolved}, not in the tarball`);
        }
      }
    }
    if (problems.length > 0) throw new Error(problems.slice(0, 20).join("\n"));
    return `${list.length} files`;
  });
}

// --- 2./3. install and run per package manager ---------------------------------------------------

const CONSUMER = `// Type-checks the public surface from the tarballs with skipLibCheck: false.
import { Client, type Event, NotFoundError, RebunoError } from "@rebuno/client";
import { startDevKernel, SqliteUnavailableError } from "@rebuno/dev-kernel";
import { createHttpCore } from "@rebuno/kernel-transport";
import { consoleAssetsDir } from "@rebuno/console";
import { parseCliArgs } from "@rebuno/dev";
import { compilePolicyBundle, evaluatePolicyStep } from "@rebuno/policy";
import { canonicalJson, ToolError } from "@rebuno/protocol";
import { Agent, step, Toolbox, tool, toOpenAITools } from "@rebuno/sdk";
import { TestEnvironment, withToolContext } from "@rebuno/testing";

// The policy engine from its own tarball, without a kernel (what \`rebuno policy test\` runs).
const verdict = evaluatePolicyStep(compilePolicyBundle("default_action: deny\\n"), { target: "x" });
if (verdict.decision !== "deny") throw new Error(\`policy: \${JSON.stringify(verdict)}\`);
console.log("policy ok", verdict.decision);

export function stepIds(events: readonly Event[]): string[] {
  return events.flatMap((e) => (e.type === "step.succeeded" ? [e.payload.step_id] : []));
}
export const surface = [Client, NotFoundError, RebunoError, startDevKernel, SqliteUnavailableError, createHttpCore,
  canonicalJson, ToolError, Agent, step, Toolbox, tool, toOpenAITools, TestEnvironment, withToolContext,
  consoleAssetsDir, parseCliArgs];
`;

const ADAPTER = `// A framework adapter from the tarball: Vercel AI SDK tools (with ai's jsonSchema) and OpenAI
// tool definitions, run in @rebuno/testing's tool context.
import { Toolbox, tool, toOpenAITools, toVercelTools } from "@rebuno/sdk";
import { withToolContext } from "@rebuno/testing";
import { jsonSchema } from "ai";
import { z } from "zod";

class Shop extends Toolbox {
  @tool("check_stock", { input: z.object({ sku: z.string() }), description: "Units in stock" })
  async checkStock(args: { sku: string }) {
    return { sku: args.sku, available: args.sku === "tea" ? 12 : 0 };
  }
}
const shop = new Shop();
const openai = toOpenAITools(shop);
if (openai[0]?.function.name !== "check_stock" || openai[0].function.strict !== true) {
  throw new Error(\`toOpenAITools: \${JSON.stringify(openai)}\`);
}
const tools = toVercelTools(shop, { jsonSchema });
const result = await withToolContext(() =>
  tools.check_stock?.execute?.({ sku: "tea" }, { toolCallId: "call-1" }),
);
if (JSON.stringify(result) !== JSON.stringify({ sku: "tea", available: 12 })) {
  throw new Error(\`toVercelTools execute: \${JSON.stringify(result)}\`);
}
console.log("adapter ok", JSON.stringify(result));
`;

const TESTING = `// @rebuno/testing's TestEnvironment: dev kernel in process, memory store, no native modules.
import { Agent, step, Toolbox, tool } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";

class Greeter extends Toolbox {
  @tool({ input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } })
  async greet(args: { name: string }) {
    return \`hello \${args.name}\`;
  }
}
class Hello extends Agent<{ name: string }, string> {
  static override id = "hello";
  readonly greeter = new Greeter();
  override async run(input: { name: string }) {
    const n = await step("n", () => 1);
    return \`\${await this.greeter.greet({ name: input.name })} #\${n}\`;
  }
}
const env = await TestEnvironment.create({ agents: [Hello] });
try {
  const result = await env.run(Hello, { name: "Ada" });
  if (result.execution.status !== "completed" || result.output !== "hello Ada #1") {
    throw new Error(\`TestEnvironment: \${result.execution.status} \${JSON.stringify(result.output)}\`);
  }
  console.log("testing ok", result.output);
} finally {
  await env.teardown();
}
`;

const SQLITE = `// The SQLite store without a usable better-sqlite3: one typed error that says how to fix it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevKernel, SqliteUnavailableError } from "@rebuno/dev-kernel";

const expected = process.argv[2];
try {
  const kernel = await startDevKernel({ store: { sqlite: join(mkdtempSync(join(tmpdir(), "smoke-")), "k.db") } });
  await kernel.close();
  console.log("sqlite opened");
  if (expected !== "opens") process.exit(1);
} catch (error) {
  if (!(error instanceof SqliteUnavailableError)) throw error;
  console.log(\`\${error.reason}: \${error.message}\`);
  if (error.reason !== expected || error.message.includes("\\n") || !error.message.includes("approve-builds")) {
    process.exit(1);
  }
}
`;

/** Installed package names under `dir`/node_modules (scoped ones as @scope/name). */
function installedNames(dir) {
  const nm = path.join(dir, "node_modules");
  return readdirSync(nm).flatMap((name) =>
    name.startsWith("@") ? readdirSync(path.join(nm, name)).map((n) => `${name}/${n}`) : [name],
  );
}

const TSCONFIG = (extra) => ({
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    types: ["node"],
    outDir: "dist",
    rootDir: ".",
    ...extra.compilerOptions,
  },
  include: extra.include,
});

/** The hello example's source, its workspace imports unchanged (they resolve to the tarballs). */
function copyExample(name, to) {
  const from = path.join(ROOT, "examples", name);
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from).filter((f) => f.endsWith(".ts")))
    cpSync(path.join(from, f), path.join(to, f));
}

const work = mkdtempSync(path.join(os.tmpdir(), "rebuno-pack-smoke-"));
let nodeVersion;
check(`node to run the consumer: ${NODE}`, () => {
  nodeVersion = run(NODE, ["--version"]).trim();
  return nodeVersion;
});
console.log(`projects in ${work}`);

// `npm install @rebuno/dev-kernel` alone: the kernel library brings no HTTP client (no ky, no
// undici, neither our transport nor our client) and not the console.
if (PMS.includes("npm") && tarballs.has("@rebuno/dev-kernel")) {
  check("npm: @rebuno/dev-kernel alone installs no HTTP client and no console", () => {
    const dir = path.join(work, "dev-kernel-alone");
    mkdirSync(dir, { recursive: true });
    const ours = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
    const manifest = {
      name: "rebuno-dev-kernel-alone",
      private: true,
      dependencies: { "@rebuno/dev-kernel": ours["@rebuno/dev-kernel"] },
      overrides: ours,
    };
    writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    run("npm", ["install", "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir });
    const names = installedNames(dir).filter((n) => !n.startsWith("."));
    const unwanted = ["ky", "undici", "@rebuno/kernel-transport", "@rebuno/client", "@rebuno/console"];
    const found = unwanted.filter((n) => names.includes(n));
    if (found.length > 0) throw new Error(`installed ${found.join(", ")}: ${names.join(" ")}`);
    return names.join(" ");
  });
}

for (const pm of PMS) {
  if (tarballs.size !== packages.length || nodeVersion === undefined) break;
  const dir = path.join(work, pm);
  mkdirSync(dir, { recursive: true });
  const deps = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify(
      {
        name: "rebuno-smoke-consumer",
        private: true,
        type: "module",
        dependencies: { ...deps, ...THIRD_PARTY },
        devDependencies: { typescript: TYPESCRIPT, "@types/node": TYPES_NODE },
        // Each @rebuno package's own @rebuno/* dependency resolves to the tarball, never the registry.
        ...(pm === "npm" ? { overrides: deps } : { pnpm: { overrides: deps } }),
      },
      null,
      2,
    )}\n`,
  );

  const installed = (() => {
    let ok = false;
    check(`${pm}: install the tarballs into an empty project`, () => {
      if (pm === "npm") {
        // Without optional dependencies: better-sqlite3 is one, and must not be needed.
        run("npm", ["install", "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"], {
          cwd: dir,
        });
      } else {
        // pnpm 10 does not run better-sqlite3's build script unless approved: no native addon.
        run(
          "pnpm",
          ["install", "--no-frozen-lockfile", "--config.node-linker=isolated", "--reporter=append-only"],
          { cwd: dir },
        );
      }
      ok = true;
      const bs3 = existsSync(path.join(dir, "node_modules", ".pnpm"))
        ? readdirSync(path.join(dir, "node_modules", ".pnpm")).some((d) => d.startsWith("better-sqlite3@"))
        : existsSync(path.join(dir, "node_modules", "better-sqlite3"));
      if (pm === "npm" && bs3) throw new Error("better-sqlite3 was installed despite --omit=optional");
      return pm === "npm"
        ? "no better-sqlite3"
        : `better-sqlite3 ${bs3 ? "installed, build not approved" : "absent"}`;
    });
    return ok;
  })();
  if (!installed) continue;

  writeFileSync(path.join(dir, "consumer.ts"), CONSUMER);
  writeFileSync(path.join(dir, "adapter.ts"), ADAPTER);
  writeFileSync(path.join(dir, "testing.ts"), TESTING);
  writeFileSync(path.join(dir, "sqlite.ts"), SQLITE);
  copyExample("hello", path.join(dir, "hello"));
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify(TSCONFIG({ include: ["consumer.ts", "testing.ts", "sqlite.ts", "hello/*.ts"] }), null, 2),
  );
  // The adapter program includes the `ai` package, whose own declarations do not pass
  // skipLibCheck: false under exactOptionalPropertyTypes: ours are checked by the program above.
  writeFileSync(
    path.join(dir, "tsconfig.adapter.json"),
    JSON.stringify(TSCONFIG({ compilerOptions: { skipLibCheck: true }, include: ["adapter.ts"] }), null, 2),
  );
  const tsc = path.join(dir, "node_modules", "typescript", "bin", "tsc");
  const compiled = (() => {
    let ok = false;
    check(
      `${pm}: type-check and compile a consumer, examples/hello and a test (skipLibCheck: false, strict)`,
      () => {
        run(NODE, [tsc, "-p", "tsconfig.json"], { cwd: dir });
        run(NODE, [tsc, "-p", "tsconfig.adapter.json"], { cwd: dir });
        ok = true;
      },
    );
    return ok;
  })();

  if (compiled) {
    check(`${pm}: examples/hello from the tarballs (embedded dev kernel, memory store)`, () => {
      const out = run(NODE, ["dist/hello/main.js"], { cwd: dir, timeout: 120_000 });
      if ((out.match(/: completed$/gm) ?? []).length !== 2)
        throw new Error(`expected two completed executions\n${out}`);
      return "2 executions completed";
    });
    check(`${pm}: the consumer runs: @rebuno/policy evaluates a bundle without a kernel`, () => {
      const out = run(NODE, ["dist/consumer.js"], { cwd: dir, timeout: 120_000 });
      if (!out.includes("policy ok deny")) throw new Error(`no policy verdict\n${out}`);
    });
    check(`${pm}: framework adapter (toVercelTools with ai's jsonSchema, toOpenAITools)`, () => {
      run(NODE, ["dist/adapter.js"], { cwd: dir, timeout: 120_000 });
    });
    check(`${pm}: @rebuno/testing TestEnvironment without better-sqlite3's addon`, () => {
      run(NODE, ["dist/testing.js"], { cwd: dir, timeout: 120_000 });
    });
    const reason = pm === "npm" ? "not_installed" : "native_addon";
    check(`${pm}: SQLite store asked for: SqliteUnavailableError '${reason}' with install steps`, () => {
      const out = run(NODE, ["dist/sqlite.js", reason], { cwd: dir, timeout: 120_000 });
      return out.trim().split(":")[0];
    });
  }

  check(
    `${pm}: bins from the tarballs: rebuno --help, rebuno-dev --store sqlite: exits 7 with the fix`,
    () => {
      run(NODE, [path.join(dir, "node_modules", "@rebuno", "cli", "bin", "rebuno.js"), "--help"], {
        cwd: dir,
      });
      const db = path.join(dir, "cli-store.db");
      const bin = path.join(dir, "node_modules", "@rebuno", "dev", "bin", "rebuno-dev.js");
      const r = spawnSync(NODE, [bin, "--store", `sqlite:${db}`, "--listen", "127.0.0.1:0"], {
        cwd: dir,
        env: cleanEnv(),
        encoding: "utf8",
        timeout: 60_000,
        killSignal: "SIGKILL",
      });
      const err = `${r.stdout}${r.stderr}`;
      if (r.status !== 7 || !err.includes("better-sqlite3") || err.includes("Tried:")) {
        throw new Error(`rebuno-dev exited ${r.status}\n${err}`);
      }
    },
  );

  const legacy = path.join(dir, "legacy");
  if (existsSync(path.join(ROOT, "examples", "legacy-decorators", "main.ts"))) {
    copyExample("legacy-decorators", legacy);
    writeFileSync(
      path.join(legacy, "tsconfig.json"),
      JSON.stringify(
        TSCONFIG({
          compilerOptions: { experimentalDecorators: true, emitDecoratorMetadata: true },
          include: ["*.ts"],
        }),
        null,
        2,
      ),
    );
    check(
      `${pm}: examples/legacy-decorators compiled (experimentalDecorators + emitDecoratorMetadata) and run`,
      () => {
        run(NODE, [tsc, "-p", "tsconfig.json"], { cwd: legacy });
        const out = run(NODE, ["dist/main.js"], { cwd: legacy, timeout: 120_000 });
        if (!/execution completed/.test(out)) throw new Error(`no completed execution\n${out}`);
      },
    );
  }
}

if (!KEEP) rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
