// `rebuno-dev --sqlite-quick-check on|off` (env REBUNO_SQLITE_QUICK_CHECK): whether the SQLite store
// runs SQLite's quick_check over the whole file at start. Off, a file with a broken page that
// quick_check refuses (sqlite-damage.test.ts) is served: the flag really reaches the store.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SqliteStore, STORE_EXIT_CODES } from "@rebuno/dev-kernel";
import { ConfigurationError } from "@rebuno/protocol";
import { ProcessGroup, rebunoDevCommand, startRebunoDev, TempDirs } from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";
import { parseCliArgs, USAGE } from "../src/cli-options.js";

const dirs = new TempDirs("rebuno-cli-quick");
const children = new ProcessGroup();
afterEach(async () => {
  await children.killAll();
  dirs.removeAll();
});
const tempDir = () => dirs.make();

describe("parsing", () => {
  test("on and off (any case, or true/false, 1/0) reach the SQLite store options", () => {
    const store = (args: string[], env: Record<string, string> = {}) =>
      parseCliArgs(["--store", "sqlite:/tmp/k.db", ...args], env).kernel.store;
    expect(store(["--sqlite-quick-check", "off"])).toEqual({ sqlite: "/tmp/k.db", quickCheck: false });
    expect(store(["--sqlite-quick-check=ON"])).toEqual({ sqlite: "/tmp/k.db", quickCheck: true });
    expect(store([], { REBUNO_SQLITE_QUICK_CHECK: "false" })).toEqual({
      sqlite: "/tmp/k.db",
      quickCheck: false,
    });
    expect(store(["--sqlite-quick-check", "1"], { REBUNO_SQLITE_QUICK_CHECK: "off" })).toEqual({
      sqlite: "/tmp/k.db",
      quickCheck: true,
    });
    expect(store(["--sqlite-synchronous", "full", "--sqlite-quick-check", "off"])).toEqual({
      sqlite: "/tmp/k.db",
      synchronous: "FULL",
      quickCheck: false,
    });
  });

  test("without the flag the store keeps its default (on)", () => {
    expect(parseCliArgs(["--store", "sqlite:/tmp/k.db"], {}).kernel.store).toEqual({ sqlite: "/tmp/k.db" });
  });

  test("another value, or the flag with the memory store, is refused", () => {
    const bad = () => parseCliArgs(["--store", "sqlite:/tmp/k.db", "--sqlite-quick-check", "maybe"], {});
    expect(bad).toThrow(ConfigurationError);
    expect(bad).toThrow('--sqlite-quick-check must be on or off, got "maybe"');
    expect(() => parseCliArgs(["--store", "memory"], { REBUNO_SQLITE_QUICK_CHECK: "off" })).toThrow(
      /REBUNO_SQLITE_QUICK_CHECK applies only to --store sqlite:PATH/,
    );
    expect(USAGE).toMatch(/--sqlite-quick-check\s+SQLite's quick_check/);
  });
});

describe("the real CLI", () => {
  /** A store with enough agents for several pages, page 3's type byte then broken. */
  async function brokenStore(): Promise<string> {
    const path = join(tempDir(), "k.db");
    const store = new SqliteStore(path);
    for (let i = 0; i < 3000; i++)
      store.putAgent({ id: `a${i}`, webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
    await store.whenDurable();
    store.close();
    const bytes = readFileSync(path);
    bytes[bytes.readUInt16BE(16) * 2] = 0x07; // not a b-tree page type
    writeFileSync(path, bytes);
    return path;
  }

  test("on (default): the broken page is refused with the corrupt-store code", async () => {
    const path = await brokenStore();
    const command = rebunoDevCommand(["--listen", "127.0.0.1:0", "--store", `sqlite:${path}`]);
    const r = spawnSync(command.command, command.args, {
      encoding: "utf8",
      env: { ...process.env, ...command.env },
      timeout: 60_000,
    });
    expect(r.status).toBe(STORE_EXIT_CODES.store_corrupt);
    expect(r.stderr).toContain(`rebuno-dev: ${path} is damaged: SQLite's quick_check reports`);
  }, 90_000);

  test("off: the same file is served, and the store line says the check is off", async () => {
    const path = await brokenStore();
    const kernel = await startRebunoDev({
      args: ["--quiet", "--no-console", "--store", `sqlite:${path}`, "--sqlite-quick-check", "off"],
      group: children,
    });
    await kernel.process.waitForOutput(/rebuno-dev store sqlite:\S+ .*\n/);
    expect(kernel.process.stdout()).toContain(
      `rebuno-dev store sqlite:${path} synchronous=NORMAL (survives a killed process) quick_check=off`,
    );
    const health = await fetch(`${kernel.url}/v0/health`);
    expect(health.status).toBe(200);
    await health.text();
  }, 90_000);
});
