// scripts/real-kernel.mjs stops with a message saying what to install or set when the kernel
// source, Go or PostgreSQL is missing (and prints the summary line CI reads).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";

const script = path.resolve("scripts/real-kernel.mjs");
const tmp = mkdtempSync(path.join(os.tmpdir(), "rk-setup-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = (args, env) =>
  spawnSync(process.execPath, [script, ...args], { encoding: "utf8", env: { ...process.env, ...env } });

test("no kernel source: names REBUNO_KERNEL_SRC", () => {
  const r = run(["build"], { REBUNO_KERNEL_SRC: path.join(tmp, "nowhere") });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/no Rebuno kernel source at .*nowhere.*REBUNO_KERNEL_SRC/s);
});

test("no Go: says which Go is needed and how to point at one; `test` still prints the summary line", () => {
  const src = path.join(tmp, "src");
  mkdirSync(path.join(src, "cmd", "rebuno"), { recursive: true });
  writeFileSync(path.join(src, "cmd", "rebuno", "main.go"), "package main\nfunc main() {}\n");
  const r = run(["test"], { REBUNO_KERNEL_SRC: src, GO: path.join(tmp, "no-go") });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/Go >= 1\.26 not found .*GO=\/path\/to\/go/s);
  expect(r.stdout.trim().split("\n").at(-1)).toBe("0 passed, 1 failed");
});

test("no PostgreSQL: says what to install or set", async () => {
  const r = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { startPostgres } from ${JSON.stringify(script)}; await startPostgres();`,
    ],
    { encoding: "utf8", env: { ...process.env, PG_BIN: path.join(tmp, "no-pg") } },
  );
  expect(r.status).not.toBe(0);
  expect(r.stderr).toMatch(/PG_BIN=.*no-pg holds no initdb and postgres/);
});
