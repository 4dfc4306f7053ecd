import { existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_WAIT_MS, LineProcess, type ProcessGroup } from "./line-process.js";
import { REPO_ROOT } from "./repository.js";

/** The package that holds the `rebuno-dev` command: the one place its location is written. */
export const REBUNO_DEV_PACKAGE = "packages/dev";
/** The command's TypeScript source, run through tsx (no build needed, never stale). */
export const REBUNO_DEV_SOURCE = join(REPO_ROOT, REBUNO_DEV_PACKAGE, "src/cli.ts");
/** The command as installed (`bin`), which runs the package's compiled dist/. */
export const REBUNO_DEV_BIN = join(REPO_ROOT, REBUNO_DEV_PACKAGE, "bin/rebuno-dev.js");
/**
 * tsx's tsconfig for the source run: the packages the command imports (dev kernel, policy, console,
 * protocol) from their sources too, so a test of the command never runs against a stale build.
 */
const SOURCE_TSCONFIG = join(REPO_ROOT, "verify/kit/rebuno-dev.tsconfig.json");

/**
 * The command's bin in another checkout of the repository (a benchmark baseline): where it is now,
 * or in packages/dev-kernel, where it lived before it became its own package.
 */
export function rebunoDevBinIn(checkout: string): string {
  const current = join(checkout, REBUNO_DEV_PACKAGE, "bin/rebuno-dev.js");
  return existsSync(current) ? current : join(checkout, "packages/dev-kernel/bin/rebuno-dev.js");
}

/** `source` runs src/cli.ts through tsx; `built` runs the package's bin (needs `pnpm build`). */
export type RebunoDevFrom = "source" | "built";

/** The command line (for `spawn` or `spawnSync`) that runs `rebuno-dev` with `args`. */
export function rebunoDevCommand(
  args: readonly string[],
  from: RebunoDevFrom = "source",
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (from === "built") return { command: process.execPath, args: [REBUNO_DEV_BIN, ...args], env: {} };
  return {
    command: process.execPath,
    args: ["--import", "tsx", REBUNO_DEV_SOURCE, ...args],
    env: { TSX_TSCONFIG_PATH: SOURCE_TSCONFIG },
  };
}

export interface RebunoDevOptions {
  /** `--listen` address (default `127.0.0.1:0`, a port the kernel picks). */
  readonly listen?: string;
  /** `--store`: `memory` or `sqlite:<path>` (omitted: the command's default, memory). */
  readonly store?: string;
  /** `--config`: a provisioning manifest. */
  readonly config?: string;
  /** Further arguments, after the ones above. */
  readonly args?: readonly string[];
  /** Added to this process's environment (e.g. `REBUNO_DISPATCH_LEASE_TIMEOUT`). */
  readonly env?: NodeJS.ProcessEnv;
  readonly from?: RebunoDevFrom;
  /** The group that kills the process in the suite's teardown. */
  readonly group?: ProcessGroup;
  /** Bound of the wait for the listening line. */
  readonly timeoutMs?: number;
}

/** `rebuno-dev` as a child process, without waiting for anything (for `--version`, refused flags). */
export function spawnRebunoDev(args: readonly string[], options: RebunoDevOptions = {}): LineProcess {
  const command = rebunoDevCommand(args, options.from);
  const process_ = new LineProcess(command.command, command.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...command.env, ...options.env },
    timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS,
  });
  options.group?.add(process_);
  return process_;
}

export interface RebunoDev {
  /** The base URL it printed (`rebuno-dev listening on <url>`). */
  readonly url: string;
  readonly process: LineProcess;
}

/** Start `rebuno-dev` and resolve once it listens; a failed start rejects with `ChildProcessFailed`. */
export async function startRebunoDev(options: RebunoDevOptions = {}): Promise<RebunoDev> {
  const args = [
    ...(options.config === undefined ? [] : ["--config", options.config]),
    "--listen",
    options.listen ?? "127.0.0.1:0",
    ...(options.store === undefined ? [] : ["--store", options.store]),
    ...(options.args ?? []),
  ];
  const process_ = spawnRebunoDev(args, options);
  try {
    const match = await process_.waitForOutput(/rebuno-dev listening on (http:\/\/\S+)/);
    return { url: match[1]!, process: process_ };
  } catch (error) {
    await process_.kill();
    throw error;
  }
}
