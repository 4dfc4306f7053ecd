/**
 * `rebuno-dev` (packages/dev) as a single file that any user can read, for the tests that run it as `nobody` when
 * they run as root (root may write any file, so a read-only store is only read-only for another
 * user). `nobody` cannot read a checkout inside a private folder (`/root/app`, any 0700 directory),
 * so it cannot load tsx or the sources there. The CLI is therefore bundled with esbuild into a
 * world-readable temporary folder, with a copy of better-sqlite3 (a native addon, loaded at run
 * time) and the package.json the CLI reads its version from. Built once per test file, removed
 * after it.
 */
import { chmodSync, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll } from "vitest";

const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
/** The `rebuno-dev` command's package (packages/dev). */
const COMMAND = fileURLToPath(new URL("../../dev/", import.meta.url));
const PACKAGES = fileURLToPath(new URL("../../", import.meta.url));

let built: Promise<string> | undefined;
let folder: string | undefined;
afterAll(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

/** The root folder of an installed package, as `from` resolves it (symlinks followed). */
function packageRoot(name: string, from: string): string {
  return dirname(realpathSync(createRequire(from).resolve(`${name}/package.json`)));
}

/** Copy what better-sqlite3 loads at run time (its code, its addon and `bindings`) into `modules`. */
function copySqlite(modules: string): void {
  const sqlite = packageRoot("better-sqlite3", join(PACKAGE, "package.json"));
  const bindings = packageRoot("bindings", join(sqlite, "package.json"));
  const fileUri = packageRoot("file-uri-to-path", join(bindings, "package.json"));
  const into = join(modules, "better-sqlite3");
  for (const part of ["package.json", "lib", "build/Release/better_sqlite3.node"]) {
    cpSync(join(sqlite, part), join(into, part), { recursive: true });
  }
  cpSync(bindings, join(modules, "bindings"), { recursive: true, dereference: true });
  cpSync(fileUri, join(modules, "file-uri-to-path"), { recursive: true, dereference: true });
}

async function bundle(): Promise<string> {
  folder = mkdtempSync(join(tmpdir(), "rebuno-dev-cli-"));
  // dist/cli.mjs one level below the folder, like the package's own dist/cli.js: the CLI reads
  // `../package.json`, and better-sqlite3 resolves from `../node_modules`.
  const path = join(folder, "dist", "cli.mjs");
  await build({
    entryPoints: [join(COMMAND, "src", "cli.ts")],
    outfile: path,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "silent",
    external: ["better-sqlite3"],
    // The working tree's sources, as the tests that run the command with tsx use (not a stale dist/).
    plugins: [
      {
        name: "workspace-sources",
        setup(b) {
          b.onResolve({ filter: /^@rebuno\/[a-z-]+$/ }, (args) => ({
            path: join(PACKAGES, args.path.slice("@rebuno/".length), "src", "index.ts"),
          }));
          b.onResolve({ filter: /^#crypto$/ }, () => ({
            path: join(PACKAGES, "protocol", "src", "crypto-node.ts"),
          }));
        },
      },
    ],
    // Bundled CommonJS (yaml) calls require() for Node built-ins.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
  });
  cpSync(join(COMMAND, "package.json"), join(folder, "package.json"));
  mkdirSync(join(folder, "node_modules"));
  copySqlite(join(folder, "node_modules"));
  // mkdtemp makes the folder 0700; everything below it is already readable by all.
  chmodSync(folder, 0o755);
  return path;
}

/** The path of the bundled `rebuno-dev` entry point (run it with `node <path> …`). */
export function unprivilegedCli(): Promise<string> {
  built ??= bundle();
  return built;
}
