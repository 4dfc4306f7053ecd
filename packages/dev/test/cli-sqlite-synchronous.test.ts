// `rebuno-dev --sqlite-synchronous normal|full` (env REBUNO_SQLITE_SYNCHRONOUS): the SQLite store's
// durability level from the command line. The real CLI is spawned; whether the store really runs
// with FULL is observed from outside, by counting the kernel process's fsync calls (strace) while it
// acknowledges executions: one or more per commit under FULL, none under NORMAL (WAL appends only).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigurationError } from "@rebuno/protocol";
import { ProcessGroup, rebunoDevCommand, startRebunoDev, TempDirs } from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";
import { parseCliArgs, USAGE } from "../src/cli-options.js";

const CREATES = 20;
const dirs = new TempDirs("rebuno-cli-sync");
const children = new ProcessGroup();
/** strace processes (not line-read: their output goes to a file). */
const tracers: ChildProcess[] = [];
afterEach(async () => {
  for (const t of tracers.splice(0)) if (t.exitCode === null && t.signalCode === null) t.kill("SIGKILL");
  await children.killAll();
  dirs.removeAll();
});
const tempDir = () => dirs.make();

/** strace must exist and be allowed to attach (ptrace) for the fsync observation. */
const straceMissing = ((): string | undefined => {
  const r = spawnSync("strace", ["-qq", "-e", "trace=none", "true"], { encoding: "utf8" });
  if (r.error !== undefined) return `strace not installed (${r.error.message})`;
  return r.status === 0 ? undefined : `strace cannot trace here: ${r.stderr.trim()}`;
})();
if (straceMissing !== undefined)
  console.warn(`cli-sqlite-synchronous: fsync tests skipped: ${straceMissing}`);

/** Run the CLI to completion (for arguments it refuses or `--help`). */
function runCli(args: string[], env: Record<string, string> = {}) {
  const command = rebunoDevCommand(args);
  const r = spawnSync(command.command, command.args, {
    encoding: "utf8",
    env: { ...process.env, ...command.env, ...env },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Start the CLI on a free port; resolves with its URL and everything it printed so far. */
async function startCli(args: string[], env: Record<string, string> = {}) {
  const kernel = await startRebunoDev({ args: ["--quiet", "--no-console", ...args], env, group: children });
  // The store line follows the listening line; wait for both.
  await kernel.process.waitForOutput(/rebuno-dev listening on (http:\/\/\S+)\n(?:.*\n)/);
  return { child: kernel.process.child, url: kernel.url, stdout: () => kernel.process.stdout() };
}

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

/**
 * Attach strace to the running kernel, acknowledge CREATES executions one after another, detach,
 * and return the number of fsync/fdatasync calls the kernel made in between.
 */
async function fsyncsWhileCreating(
  kernel: { child: ChildProcess; url: string },
  dir: string,
): Promise<number> {
  expect(
    await post(`${kernel.url}/v0/agents`, {
      id: "sync",
      webhook_url: "http://127.0.0.1:9/webhook",
      secret: "s".repeat(32),
    }),
  ).toBe(201);
  const log = join(dir, "strace.log");
  const strace = spawn(
    "strace",
    ["-f", "-e", "trace=fsync,fdatasync", "-o", log, "-p", String(kernel.child.pid)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  tracers.push(strace);
  let straceErr = "";
  await new Promise<void>((resolve, reject) => {
    strace.stderr!.on("data", (d: Buffer) => {
      straceErr += d.toString();
      if (straceErr.includes("attached")) resolve();
    });
    strace.once("exit", (code) => reject(new Error(`strace exited ${code}: ${straceErr}`)));
  });
  for (let i = 0; i < CREATES; i++)
    expect(await post(`${kernel.url}/v0/executions`, { agent_id: "sync", input: { i } })).toBe(201);
  const detached = new Promise((resolve) => strace.once("exit", resolve));
  strace.kill("SIGINT"); // detaches from the kernel, which keeps running
  await detached;
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => /\bf(?:data)?sync\(/.test(line)).length;
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  return exited;
}

describe("--sqlite-synchronous: parsing", () => {
  test("full and normal (any case) reach the SQLite store options", () => {
    expect(
      parseCliArgs(["--store", "sqlite:/tmp/k.db", "--sqlite-synchronous", "full"], {}).kernel.store,
    ).toEqual({
      sqlite: "/tmp/k.db",
      synchronous: "FULL",
    });
    expect(
      parseCliArgs(["--store=sqlite:/tmp/k.db", "--sqlite-synchronous=NORMAL"], {}).kernel.store,
    ).toEqual({
      sqlite: "/tmp/k.db",
      synchronous: "NORMAL",
    });
  });

  test("without the flag the store keeps its default (NORMAL)", () => {
    expect(parseCliArgs(["--store", "sqlite:/tmp/k.db"], {}).kernel.store).toEqual({ sqlite: "/tmp/k.db" });
  });

  test("REBUNO_SQLITE_SYNCHRONOUS mirrors the flag, and the flag wins over it", () => {
    const env = { REBUNO_SQLITE_SYNCHRONOUS: "full" };
    expect(parseCliArgs(["--store", "sqlite:/tmp/k.db"], env).kernel.store).toEqual({
      sqlite: "/tmp/k.db",
      synchronous: "FULL",
    });
    expect(
      parseCliArgs(["--store", "sqlite:/tmp/k.db", "--sqlite-synchronous", "normal"], env).kernel.store,
    ).toEqual({ sqlite: "/tmp/k.db", synchronous: "NORMAL" });
  });

  test("a bad level is a ConfigurationError naming the flag, the value and the choices", () => {
    const bad = () => parseCliArgs(["--store", "sqlite:/tmp/k.db", "--sqlite-synchronous", "extra"], {});
    expect(bad).toThrow(ConfigurationError);
    expect(bad).toThrow('--sqlite-synchronous must be normal or full, got "extra"');
    expect(() => parseCliArgs(["--store", "sqlite:/tmp/k.db"], { REBUNO_SQLITE_SYNCHRONOUS: "off" })).toThrow(
      'REBUNO_SQLITE_SYNCHRONOUS must be normal or full, got "off"',
    );
    expect(() => parseCliArgs(["--store", "sqlite:/tmp/k.db", "--sqlite-synchronous"], {})).toThrow(
      "--sqlite-synchronous needs a value",
    );
  });

  test("a level with the memory store is refused, not ignored", () => {
    const withMemory = () => parseCliArgs(["--sqlite-synchronous", "full"], {});
    expect(withMemory).toThrow(ConfigurationError);
    expect(withMemory).toThrow(/applies only to --store sqlite:PATH/);
    expect(() => parseCliArgs(["--store", "memory"], { REBUNO_SQLITE_SYNCHRONOUS: "full" })).toThrow(
      /REBUNO_SQLITE_SYNCHRONOUS applies only to --store sqlite:PATH/,
    );
  });

  test("--help documents the flag and its environment mirror", () => {
    expect(USAGE).toContain("--sqlite-synchronous");
    expect(USAGE).toContain("REBUNO_SQLITE_SYNCHRONOUS");
  });
});

describe("--sqlite-synchronous: the real rebuno-dev process", () => {
  test("--help prints the flag and exits 0", () => {
    const r = runCli(["--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/--sqlite-synchronous\s+durability of the SQLite store/);
  }, 60_000);

  test("a bad level exits 1 with the message, before binding anything", () => {
    const dir = tempDir();
    const r = runCli(["--store", `sqlite:${join(dir, "k.db")}`, "--sqlite-synchronous", "sometimes"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('rebuno-dev: --sqlite-synchronous must be normal or full, got "sometimes"');
    expect(r.stdout).not.toContain("listening");
  }, 60_000);

  test("a level with the memory store exits 1", () => {
    const r = runCli(["--store", "memory"], { REBUNO_SQLITE_SYNCHRONOUS: "full" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("REBUNO_SQLITE_SYNCHRONOUS applies only to --store sqlite:PATH");
  }, 60_000);

  test.skipIf(straceMissing !== undefined)(
    "full: the kernel fsyncs at least once per acknowledged execution",
    async () => {
      const dir = tempDir();
      const kernel = await startCli([
        "--store",
        `sqlite:${join(dir, "k.db")}`,
        "--sqlite-synchronous",
        "full",
      ]);
      expect(kernel.stdout()).toContain("synchronous=FULL (fsync per commit, survives power loss)");
      expect(await fsyncsWhileCreating(kernel, dir)).toBeGreaterThanOrEqual(CREATES);
      expect(await stop(kernel.child)).toBe(0);
    },
    60_000,
  );

  test.skipIf(straceMissing !== undefined)(
    "normal (the default, here through the environment): no fsync per commit",
    async () => {
      const dir = tempDir();
      const kernel = await startCli(["--store", `sqlite:${join(dir, "k.db")}`], {
        REBUNO_SQLITE_SYNCHRONOUS: "normal",
      });
      expect(kernel.stdout()).toContain("synchronous=NORMAL (survives a killed process)");
      // A WAL checkpoint may fsync once in a while, never once per commit.
      expect(await fsyncsWhileCreating(kernel, dir)).toBeLessThan(CREATES / 4);
      expect(await stop(kernel.child)).toBe(0);
    },
    60_000,
  );

  test.skipIf(straceMissing !== undefined)(
    "full through the environment reaches the store too",
    async () => {
      const dir = tempDir();
      const kernel = await startCli(["--store", `sqlite:${join(dir, "k.db")}`], {
        REBUNO_SQLITE_SYNCHRONOUS: "FULL",
      });
      expect(await fsyncsWhileCreating(kernel, dir)).toBeGreaterThanOrEqual(CREATES);
      expect(await stop(kernel.child)).toBe(0);
    },
    60_000,
  );
});
