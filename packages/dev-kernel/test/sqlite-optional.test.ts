// better-sqlite3 is an optional dependency: the memory store never loads it, and a SQLite store
// without it (or without its native addon) fails with one typed error that says how to fix it.
// The real "not installed" case (a project without better-sqlite3) runs in verify/pack/smoke.mjs.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RebunoError } from "@rebuno/protocol";
import { afterAll, describe, expect, test } from "vitest";
import { startDevKernel } from "../src/kernel.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { openSqliteDatabase } from "../src/store/sqlite-driver.js";
import { SqliteUnavailableError } from "../src/store/sqlite-errors.js";
import { STORE_EXIT_CODES, StoreError, storeExitCode } from "../src/store/store-errors.js";

const dir = mkdtempSync(join(tmpdir(), "rebuno-sqlite-optional-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DRIVER = fileURLToPath(new URL("../src/store/sqlite-driver.ts", import.meta.url));

/** Run node with `args`; its stdout (bounded: the child exits on its own or is killed). */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

const loadedModules = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes("better-sqlite3"));

describe("better-sqlite3 is optional", () => {
  test("the memory store runs without loading it", async () => {
    expect(loadedModules()).toEqual([]); // a fresh worker per test file (vitest isolation)
    const kernel = await startDevKernel({ store: "memory" });
    await kernel.close();
    expect(loadedModules()).toEqual([]);
  });

  test("not resolvable: SqliteUnavailableError 'not_installed' with install instructions", async () => {
    // Resolution from a directory with no node_modules is what a project without it sees. In a
    // child process without NODE_PATH: `pnpm exec` sets one that reaches the workspace's store.
    const script = `
      import { loadSqliteDriver } from ${JSON.stringify(DRIVER)};
      try { loadSqliteDriver(process.argv[1], process.argv[2]); console.log(JSON.stringify({ loaded: true })); }
      catch (e) { console.log(JSON.stringify({ name: e.name, reason: e.reason, code: e.code, path: e.path,
        message: e.message, causeCode: e.cause?.code, exit: e.constructor.name })); }`;
    const env = { ...process.env };
    delete env.NODE_PATH;
    const out = await run(
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        script,
        join(dir, "kernel.db"),
        join(dir, "consumer.js"),
      ],
      env,
    );
    const error = JSON.parse(out);
    expect(error.name).toBe("SqliteUnavailableError");
    expect(error.reason).toBe("not_installed");
    expect(error.code).toBe("sqlite_unavailable");
    expect(error.path).toBe(join(dir, "kernel.db"));
    expect(error.message).toContain("npm install better-sqlite3");
    expect(error.message).toContain("pnpm approve-builds");
    expect(error.message).toContain("onlyBuiltDependencies");
    expect(error.message).not.toContain("\n");
    expect(error.causeCode).toBe("MODULE_NOT_FOUND");
  });

  test("the error is a StoreError (rebuno-dev exits with the store's code)", () => {
    const error = new SqliteUnavailableError(join(dir, "x.db"), "not_installed", new Error("x"));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toBeInstanceOf(RebunoError);
    expect(storeExitCode(error)).toBe(STORE_EXIT_CODES.store_error);
  });

  test("addon missing: SqliteUnavailableError 'native_addon', one line, how to rebuild", () => {
    const path = join(dir, "missing-addon.db");
    let caught: unknown;
    try {
      new SqliteStore(path, { nativeBinding: join(dir, "nowhere", "better_sqlite3.node") }).close();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SqliteUnavailableError);
    const error = caught as SqliteUnavailableError;
    expect(error.reason).toBe("native_addon");
    expect(error.message).toContain("npm rebuild better-sqlite3");
    expect(error.message).toContain("pnpm approve-builds");
    expect(error.message).not.toContain("\n");
  });

  test("installed but never built (pnpm 10 without approval): 'native_addon', no list of paths", () => {
    // A real copy of better-sqlite3 and its loader dependencies, without its build/ folder.
    const project = join(dir, "unbuilt");
    const here = createRequire(import.meta.url);
    const bs3 = dirname(here.resolve("better-sqlite3/package.json"));
    const fromBs3 = createRequire(join(bs3, "package.json"));
    const bindings = dirname(fromBs3.resolve("bindings/package.json"));
    const uriToPath = dirname(
      createRequire(join(bindings, "package.json")).resolve("file-uri-to-path/package.json"),
    );
    for (const [name, from] of [
      ["better-sqlite3", bs3],
      ["bindings", bindings],
      ["file-uri-to-path", uriToPath],
    ] as const) {
      cpSync(from, join(project, "node_modules", name), { recursive: true, dereference: true });
    }
    rmSync(join(project, "node_modules", "better-sqlite3", "build"), { recursive: true, force: true });
    let caught: unknown;
    try {
      openSqliteDatabase(join(project, "k.db"), join(project, "k.db"), undefined, join(project, "main.js"));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SqliteUnavailableError);
    const error = caught as SqliteUnavailableError;
    expect(error.reason).toBe("native_addon");
    expect(error.message).toContain("no better_sqlite3.node was built");
    expect(error.message).toContain("onlyBuiltDependencies");
    expect(error.message).not.toContain("Tried");
    expect(error.message).not.toContain("\n");
  });

  test("addon not loadable (not a shared object): 'native_addon'", () => {
    const addon = join(dir, "broken.node");
    writeFileSync(addon, "not an ELF file");
    let caught: unknown;
    try {
      new SqliteStore(join(dir, "broken-addon.db"), { nativeBinding: addon }).close();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SqliteUnavailableError);
    expect((caught as SqliteUnavailableError).reason).toBe("native_addon");
  });

  test("with it installed, the SQLite store opens and loads it only then", () => {
    const store = new SqliteStore(join(dir, "ok.db"));
    store.close();
    expect(loadedModules().length).toBeGreaterThan(0);
  });
});
