// What the suites share lives in one place, the test kit (verify/kit, `@rebuno/test-kit`): no file
// elsewhere defines its own free-port helper or names where the `rebuno-dev` command lives, and no
// test reaches into another package's src/ or test/ by relative path (it imports the package by
// name; vitest.config.ts and tsconfig.tests.json map every `@rebuno/*` to its sources).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", ".tmp", ".venv", ".out", "results"]);

/** Repository-relative paths of every code file, outside dependencies and build output. */
function codeFiles(dir = ""): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : codeFiles(path);
    return CODE.test(entry.name) ? [path] : [];
  });
}

/** A definition of a free-port helper (`function freePort`, `const freePorts = async (…`). */
const FREE_PORT_DEFINITION = /\bfunction\s+freePorts?\b|\b(?:const|let|var)\s+freePorts?\s*=/;
/** A path to the `rebuno-dev` command: its TypeScript source or its bin. */
const REBUNO_DEV_LOCATION = /\/src\/cli\.[jt]s\b|\brebuno-dev\.js\b|["']src["'],\s*["']cli\.[jt]s["']/;

/** Relative module specifiers and `new URL(…, import.meta.url)` targets in `text`. */
function relativeTargets(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g,
    /\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']/g,
    /\bimport\s+["'](\.{1,2}\/[^"']+)["']/g,
    /\bnew URL\(\s*["'`](\.{1,2}\/[^"'`]+)["'`]\s*,\s*import\.meta\.url/g,
  ];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.push(m[1]!);
  return found;
}

/** The package folder (`packages/<name>`) a repository-relative path is in, if any. */
const packageOf = (path: string) => /^packages\/([^/]+)\//.exec(path)?.[1];

/**
 * The relative references in `file` (repository-relative) that land in another package's src/ or
 * test/ folder. A package's own tests may use its own sources; everything else goes by name.
 */
function crossPackageReferences(file: string, text: string): string[] {
  const own = packageOf(file);
  return relativeTargets(text).filter((target) => {
    const landed = normalize(join(dirname(file), target))
      .split("\\")
      .join("/");
    const m = /^packages\/([^/]+)\/(src|test)\//.exec(landed);
    return m !== null && m[1] !== own;
  });
}

const SELF = "verify/tests/kit-ownership.test.ts"; // its own examples below are strings, not uses

/** Code that is not the kit, nor a package's own sources or bin (the command itself lives there). */
const outsideKit = (file: string) =>
  file !== SELF && !file.startsWith("verify/kit/") && !/^packages\/[^/]+\/(src|bin|scripts)\//.test(file);

/** The vitest configurations map `@rebuno/*` to the sources: the one sanctioned way in. */
const isConfig = (file: string) => /(^|\/)vitest\.config\.ts$/.test(file);

// verify/pack/smoke.mjs runs `rebuno-dev` from the packed tarballs installed in a scratch project
// (node_modules/@rebuno/…/bin), which is the layout under test there, not the repository's.
const INSTALLED_LAYOUT = new Set(["verify/pack/smoke.mjs"]);

describe("the test kit owns the shared scaffolding", () => {
  const files = codeFiles().filter(outsideKit);
  const read = (file: string) => readFileSync(join(root, file), "utf8");

  test("the scan sees the suites (a wrong root would pass vacuously)", () => {
    expect(files).toContain("verify/faults/delivery.test.ts");
    expect(files).toContain("packages/sdk/test/integration/kernel-outage.test.ts");
    expect(files).toContain("bench/peers/servers.mjs");
  });

  test("no free-port helper is defined outside the kit", () => {
    expect(files.filter((f) => FREE_PORT_DEFINITION.test(read(f)))).toEqual([]);
  });

  test("no file outside the kit names where the rebuno-dev command lives", () => {
    const naming = files.filter((f) => !INSTALLED_LAYOUT.has(f) && REBUNO_DEV_LOCATION.test(read(f)));
    expect(naming).toEqual([]);
  });

  test("no file reaches into another package's src/ or test/ by relative path", () => {
    const crossings = files
      .filter((f) => !isConfig(f))
      .flatMap((f) => crossPackageReferences(f, read(f)).map((t) => `${f} → ${t}`));
    expect(crossings).toEqual([]);
  });

  test("the checks catch what they are meant to catch", () => {
    expect(FREE_PORT_DEFINITION.test("async function freePort(): Promise<number> {")).toBe(true);
    expect(FREE_PORT_DEFINITION.test("const freePorts = async (n) => [];")).toBe(true);
    expect(FREE_PORT_DEFINITION.test('import { freePort } from "@rebuno/test-kit";')).toBe(false);
    expect(REBUNO_DEV_LOCATION.test('new URL("../src/cli.ts", import.meta.url)')).toBe(true);
    expect(REBUNO_DEV_LOCATION.test('here("../../../packages/dev/bin/rebuno-dev.js")')).toBe(true);
    expect(REBUNO_DEV_LOCATION.test('join(COMMAND, "src", "cli.ts")')).toBe(true);
    expect(
      crossPackageReferences(
        "packages/sdk/test/integration/x.test.ts",
        'const CLI = fileURLToPath(new URL("../../../dev-kernel/src/cli.ts", import.meta.url));',
      ),
    ).toEqual(["../../../dev-kernel/src/cli.ts"]);
    expect(
      crossPackageReferences(
        "packages/kernel-transport/test/x.test.ts",
        'import { loadVector } from "../../protocol/test/vectors.js";',
      ),
    ).toEqual(["../../protocol/test/vectors.js"]);
    expect(
      crossPackageReferences(
        "verify/faults/x.test.ts",
        'import { K } from "../../packages/dev-kernel/src/k.js";',
      ),
    ).toEqual(["../../packages/dev-kernel/src/k.js"]);
    // A package's own sources, and anything outside src/ and test/, are fine.
    expect(
      crossPackageReferences("packages/sdk/test/x.test.ts", 'import { A } from "../src/index.js";'),
    ).toEqual([]);
  });
});
