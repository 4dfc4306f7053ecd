// `--baseline REF` for the store benches (B7 in bench/kernel.mjs, B14 in bench/peers.mjs): the dev
// kernel of git ref REF runs beside today's, interleaved in the same rounds, so that ratios against
// it come from one run on one machine. REF is built once into a git worktree outside the repository
// (os.tmpdir()/rebuno-bench-baseline-<commit>): `git worktree add --detach`, `pnpm install
// --frozen-lockfile` (offline first) and `tsc -b packages/dev-kernel`. Remove it with
// `git worktree remove <dir>` when done.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The ref given with `--baseline`, or undefined. */
export function baselineRef() {
  const i = process.argv.indexOf("--baseline");
  return i > 0 ? process.argv[i + 1] : undefined;
}

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "ignore", "inherit"] });

/** The root of a built checkout of `ref` (built on first use, see the module comment). */
export function baselineRoot(ref) {
  const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: ROOT })
    .toString()
    .trim();
  const dir = join(tmpdir(), `rebuno-bench-baseline-${commit.slice(0, 12)}`);
  if (existsSync(join(dir, "packages", "dev-kernel", "dist", "index.js"))) return dir;
  if (!existsSync(dir)) run("git", ["worktree", "add", "--detach", dir, commit], ROOT);
  try {
    run("pnpm", ["install", "--frozen-lockfile", "--offline"], dir);
  } catch {
    run("pnpm", ["install", "--frozen-lockfile"], dir);
  }
  run(join(dir, "node_modules", ".bin", "tsc"), ["-b", "packages/dev-kernel"], dir);
  return dir;
}
