// Pins the package graph: which packages exist, what each may depend on, and what each exports.
// A new edge or export entry is a deliberate change made here, in review, not by accident.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";

const root = new URL("../", import.meta.url);
const read = (path: string) => JSON.parse(readFileSync(new URL(path, root), "utf8"));

const ALLOWED: Record<string, string[]> = {
  "@rebuno/protocol": [],
  "@rebuno/kernel-transport": ["@rebuno/protocol"],
  "@rebuno/client": ["@rebuno/protocol", "@rebuno/kernel-transport"],
  "@rebuno/dev-kernel": ["@rebuno/protocol"],
  // The `rebuno-dev` command: the one place the kernel and the web console meet.
  "@rebuno/dev": ["@rebuno/protocol", "@rebuno/dev-kernel", "@rebuno/console"],
  "@rebuno/sdk": ["@rebuno/protocol", "@rebuno/kernel-transport", "@rebuno/client"],
  "@rebuno/testing": [
    "@rebuno/protocol",
    "@rebuno/kernel-transport",
    "@rebuno/client",
    "@rebuno/dev-kernel",
    "@rebuno/sdk",
  ],
  // Tools on top: the CLI evaluates policy with the dev kernel's own engine (`rebuno policy test`).
  "@rebuno/cli": ["@rebuno/protocol", "@rebuno/kernel-transport", "@rebuno/client", "@rebuno/dev-kernel"],
  "@rebuno/console": ["@rebuno/protocol", "@rebuno/kernel-transport", "@rebuno/client"],
};

/** Packages allowed to depend on the dev kernel (a heavy, kernel-side package) at run time. */
const MAY_DEPEND_ON_DEV_KERNEL = new Set(["@rebuno/testing", "@rebuno/cli", "@rebuno/dev"]);

const packages = readdirSync(new URL("packages/", root)).map((dir) => ({
  dir,
  json: read(`packages/${dir}/package.json`),
}));

describe("package topology", () => {
  test("the published set is exactly the pinned one", () => {
    expect(packages.map((p) => p.json.name).sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  test.each(packages.map((p) => [p.json.name, p.json] as const))(
    "%s depends only on allowed packages",
    (name, json) => {
      const ours = Object.keys({ ...json.dependencies, ...json.peerDependencies }).filter((d) =>
        d.startsWith("@rebuno/"),
      );
      for (const dep of ours) expect(ALLOWED[name], `${name} -> ${dep}`).toContain(dep);
      const runtime = Object.keys(json.dependencies ?? {});
      if (!MAY_DEPEND_ON_DEV_KERNEL.has(name)) expect(runtime).not.toContain("@rebuno/dev-kernel");
      if (name !== "@rebuno/testing") expect(runtime).not.toContain("@rebuno/testing");
    },
  );

  test.each(packages.map((p) => [p.json.name, p.json] as const))(
    "%s is ESM-only with a single entry",
    (_name, json) => {
      expect(json.type).toBe("module");
      expect(Object.keys(json.exports)).toEqual([".", "./package.json"]);
      expect(json.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
      expect(json.engines.node).toBe(">=20.19");
    },
  );

  // Runtime-specific code sits behind package.json "imports" conditions, one per package that needs
  // it: Node (and for hashing Deno and Bun, which have node:crypto) get the native side; browsers
  // and workers the portable one. Deno and Bun take the fetch engine before the `node` condition.
  test.each(packages.map((p) => [p.json.name, p.json] as const))(
    "%s selects runtime code only through the pinned import conditions",
    (name, json) => {
      const pinned: Record<string, unknown> = {
        "@rebuno/protocol": {
          "#crypto": { node: "./dist/crypto-node.js", default: "./dist/crypto-web.js" },
        },
        "@rebuno/kernel-transport": {
          "#engine": {
            bun: "./dist/engine-web.js",
            deno: "./dist/engine-web.js",
            node: "./dist/engine-node.js",
            default: "./dist/engine-web.js",
          },
        },
      };
      expect(json.imports).toEqual(pinned[name]);
      if (json.imports !== undefined) {
        for (const conditions of Object.values(json.imports as Record<string, Record<string, string>>)) {
          expect(Object.keys(conditions).at(-1), "default comes last").toBe("default");
        }
      }
    },
  );

  test("the dev-kernel library imports neither the console nor the client", () => {
    const dir = new URL("packages/dev-kernel/src/", root);
    const importers = readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .filter((f) =>
        /@rebuno\/(console|client|kernel-transport)\b/.test(readFileSync(new URL(f, dir), "utf8")),
      );
    expect(importers).toEqual([]);
  });

  test("no source file uses `export *`", () => {
    for (const { dir } of packages) {
      const walk = (rel: string): string[] =>
        readdirSync(new URL(rel, root), { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(`${rel}${e.name}/`) : e.name.endsWith(".ts") ? [`${rel}${e.name}`] : [],
        );
      for (const file of walk(`packages/${dir}/src/`)) {
        expect(readFileSync(new URL(file, root), "utf8"), file).not.toMatch(/^export \* from/m);
      }
    }
  });
});
