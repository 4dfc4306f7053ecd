/**
 * `rebuno-dev` as a single file that any user can read, for the tests that run it as `nobody` when
 * they run as root (root may write any file, so a read-only store is only read-only for another
 * user). `nobody` cannot read a checkout inside a private folder (`/root/app`, any 0700 directory),
 * so it cannot load tsx or the sources there. The command is therefore bundled with esbuild into a
 * world-readable temporary folder, with a copy of better-sqlite3 (a native addon, loaded at run
 * time) and the package.json the command reads its version from.
 */
import {
  chmodSync,
  copyFileSync,
  cpSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import type { Bundle } from "./cli-bundle.js";
import { REBUNO_DEV_PACKAGE } from "./rebuno-dev.js";
import { REPO_ROOT } from "./repository.js";

/** The command's package, and the dev kernel's (whose install has better-sqlite3). */
const COMMAND = join(REPO_ROOT, REBUNO_DEV_PACKAGE);
const DEV_KERNEL = join(REPO_ROOT, "packages/dev-kernel");
const PACKAGES = join(REPO_ROOT, "packages");

/** The root folder of an installed package, as `from` resolves it (symlinks followed). */
function packageRoot(name: string, from: string): string {
  return dirname(realpathSync(createRequire(from).resolve(`${name}/package.json`)));
}

/** Copy what better-sqlite3 loads at run time (its code, its addon and `bindings`) into `modules`. */
function copySqlite(modules: string): void {
  const sqlite = packageRoot("better-sqlite3", join(DEV_KERNEL, "package.json"));
  const bindings = packageRoot("bindings", join(sqlite, "package.json"));
  const fileUri = packageRoot("file-uri-to-path", join(bindings, "package.json"));
  const into = join(modules, "better-sqlite3");
  for (const part of ["package.json", "lib", "build/Release/better_sqlite3.node"]) {
    cpSync(join(sqlite, part), join(into, part), { recursive: true });
  }
  cpSync(bindings, join(modules, "bindings"), { recursive: true, dereference: true });
  cpSync(fileUri, join(modules, "file-uri-to-path"), { recursive: true, dereference: true });
}

/** The bundled command, and a Node binary any user may run (the running one, linked or copied). */
export interface RebunoDevBundle extends Bundle {
  readonly node: string;
}

/**
 * The running Node binary inside `folder`: it may itself sit in a private folder (CI's Node 24 is
 * unpacked under the checkout), which another user cannot traverse. A hard link costs nothing; a
 * copy when the link crosses file systems.
 */
function linkNode(folder: string): string {
  const node = join(folder, "bin", "node");
  mkdirSync(dirname(node), { recursive: true });
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
  }
  chmodSync(node, 0o755);
  chmodSync(dirname(node), 0o755);
  return node;
}

/** Bundle the command; `dispose()` removes the folder. */
export async function bundleRebunoDev(): Promise<RebunoDevBundle> {
  const folder = mkdtempSync(join(tmpdir(), "rebuno-dev-cli-"));
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
  const node = linkNode(folder);
  chmodSync(folder, 0o755);
  return { path, node, dispose: () => rmSync(folder, { recursive: true, force: true }) };
}
