// The kit's own promises: a wait on a child's output resolves on the line or pattern, and every way
// a child can fail to deliver it (exit first, never print, cannot start) rejects with one typed
// error carrying the command and the output.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RebunoError } from "@rebuno/protocol";
import {
  ChildProcessFailed,
  freePort,
  freePorts,
  LineProcess,
  loadVector,
  ProcessGroup,
  spawnRebunoDev,
  startRebunoDev,
  TempDirs,
} from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";

const group = new ProcessGroup();
afterEach(() => group.killAll());

/** A node child running `script` (inline), read as lines. */
const node = (script: string, timeoutMs?: number) =>
  group.spawn(process.execPath, ["-e", script], timeoutMs === undefined ? {} : { timeoutMs });

describe("LineProcess", () => {
  test("waits for a line by prefix and for a pattern across lines", async () => {
    const p = node('console.log("one"); setTimeout(() => console.log("LISTENING http://x\\nmore"), 50)');
    expect(await p.waitForLine("LISTENING ")).toBe("LISTENING http://x");
    expect((await p.waitForOutput(/x\nmore/))[0]).toBe("x\nmore");
    expect(p.lines).toEqual(["one", "LISTENING http://x", "more"]);
    expect((await p.exited).code).toBe(0);
  });

  test("a process that exits first: ChildProcessFailed with its exit code and stderr", async () => {
    const p = node('console.error("boom"); process.exit(3)');
    const error = await p.waitForLine("NEVER").catch((e: unknown) => e);
    expect(ChildProcessFailed.isInstance(error)).toBe(true);
    expect(RebunoError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "child_process_failed",
      awaited: 'line "NEVER…"',
      exit: { code: 3, signal: null },
      output: { stdout: "", stderr: "boom\n" },
    });
    expect((error as Error).message).toContain("it exited first (code 3");
  });

  test("a process that never prints it: ChildProcessFailed without an exit, after the bound", async () => {
    const p = node("setInterval(() => {}, 1000)", 200);
    const error = await p.waitForOutput(/never/).catch((e: unknown) => e);
    expect(ChildProcessFailed.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ awaited: "output /never/", exit: undefined });
    expect(p.running).toBe(true);
    expect((await p.kill()).signal).toBe("SIGKILL");
    expect(p.running).toBe(false);
  });

  test("a command that cannot start: ChildProcessFailed, not an unhandled error", async () => {
    const p = group.add(new LineProcess("/nonexistent/rebuno-test-kit-command", []));
    const error = await p.waitForLine("x").catch((e: unknown) => e);
    expect(ChildProcessFailed.isInstance(error)).toBe(true);
    expect((error as ChildProcessFailed).output.stderr).toContain("ENOENT");
  });

  test("ProcessGroup.killAll ends every running member", async () => {
    const a = node("setInterval(() => {}, 1000)");
    const b = node("setInterval(() => {}, 1000)");
    await group.killAll();
    expect([a.running, b.running]).toEqual([false, false]);
  });
});

describe("rebuno-dev", () => {
  test("from source: listens, serves, and stops", async () => {
    const kernel = await startRebunoDev({ store: "memory", args: ["--quiet", "--no-console"], group });
    expect(kernel.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${kernel.url}/v0/health`)).status).toBe(200);
    expect((await kernel.process.kill("SIGTERM")).code).toBe(0);
  });

  // `pnpm test` builds first (tsc -b), as the built command needs.
  test("built (the package's bin): listens on the SQLite store it was given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-kit-"));
    try {
      const kernel = await startRebunoDev({ from: "built", store: `sqlite:${join(dir, "k.db")}`, group });
      expect((await fetch(`${kernel.url}/v0/health`)).status).toBe(200);
      await kernel.process.kill("SIGTERM");
      expect(existsSync(join(dir, "k.db"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a refused argument: the start rejects with ChildProcessFailed naming the exit and the message", async () => {
    const error = await startRebunoDev({ args: ["--bogus"], group }).catch((e: unknown) => e);
    expect(ChildProcessFailed.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ exit: { code: 1, signal: null } });
    expect((error as ChildProcessFailed).output.stderr).toContain("--bogus");
  });

  test("spawnRebunoDev runs the command to its end (--version)", async () => {
    const p = spawnRebunoDev(["--version"], { group });
    expect((await p.exited).code).toBe(0);
    expect(p.lines[0]).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("ports and vectors", () => {
  test("freePorts gives distinct ports nobody listens on", async () => {
    const ports = await freePorts(3);
    expect(new Set(ports).size).toBe(3);
    const error = await fetch(`http://127.0.0.1:${await freePort()}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
  });

  test("loadVector reads vectors/ by name, with or without .json", () => {
    const a = loadVector<{ vectors: unknown[] }>("canonical_json_vectors");
    const b = loadVector<{ vectors: unknown[] }>("canonical_json_vectors.json");
    expect(a).toEqual(b);
  });
});

describe("TempDirs", () => {
  test("makes distinct empty directories under the prefix and removes them all, contents included", () => {
    const dirs = new TempDirs("rebuno-kit-temp");
    const a = dirs.make();
    const b = dirs.make();
    expect(a).not.toBe(b);
    expect(a).toMatch(/rebuno-kit-temp-/);
    writeFileSync(join(a, "file"), "x");
    dirs.removeAll();
    expect([existsSync(a), existsSync(b)]).toEqual([false, false]);
    dirs.removeAll(); // nothing left: a second call is a no-op
  });
});
