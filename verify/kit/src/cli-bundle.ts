/**
 * The `rebuno` entry point (packages/cli/src/main.ts) compiled once per test file with esbuild (what tsx uses
 * too), so each of the many command runs starts a plain `node` process in a fraction of the time
 * tsx needs to transpile every source file again. Workspace packages resolve to their sources, as
 * in vitest; third-party code is bundled too.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { REPO_ROOT as root } from "./repository.js";

const SOURCES: Record<string, string> = {
  "@rebuno/protocol": "packages/protocol/src/index.ts",
  "@rebuno/kernel-transport": "packages/kernel-transport/src/index.ts",
  "@rebuno/client": "packages/client/src/index.ts",
  "@rebuno/policy": "packages/policy/src/index.ts",
  "#crypto": "packages/protocol/src/crypto-node.ts",
  "#engine": "packages/kernel-transport/src/engine-node.ts",
};

export interface Bundle {
  /** The compiled entry point: run it with `node <path> …`. */
  readonly path: string;
  dispose(): void;
}

export async function bundleCli(): Promise<Bundle> {
  // One level below packages/cli, like dist/main.js: `createRequire(import.meta.url)("../package.json")`
  // then reads the CLI's own package.json (its version). `.tmp/` is git-ignored.
  const dir = join(root, "packages/cli/.tmp");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `rebuno-${randomBytes(4).toString("hex")}.mjs`);
  await build({
    entryPoints: [join(root, "packages/cli/src/main.ts")],
    outfile: path,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "silent",
    // Bundled CommonJS (commander, undici) calls require() for Node built-ins.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    plugins: [
      {
        name: "workspace-sources",
        setup(b) {
          b.onResolve({ filter: /^(@rebuno\/[a-z-]+|#crypto|#engine)$/ }, (args) => {
            const source = SOURCES[args.path];
            return source === undefined ? undefined : { path: join(root, source) };
          });
        },
      },
    ],
  });
  return { path, dispose: () => rmSync(path, { force: true }) };
}

/** What one run of a bundled command printed, and how it exited. */
export interface BundleRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run a bundle (`node <path> …args`) to its end with `env` over this process's environment and
 * `stdin` as its whole input; killed after 60 s so a command that hangs fails its test instead.
 */
export function runBundle(
  bundle: Bundle,
  args: readonly string[],
  options: { readonly env?: Record<string, string>; readonly stdin?: string | undefined } = {},
): Promise<BundleRun> {
  const child = spawn(process.execPath, [bundle.path, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(options.stdin ?? "");
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
