// Pins the package graph: which packages exist, what each depends on at run time, and what each
// exports. A new edge or export entry is a deliberate change made here, in review, not by accident.
//
// "Depends on" is read three ways and all must agree: the pinned GRAPH below, each package.json's
// runtime `dependencies` (+ `optionalDependencies`), and the bare specifiers its src/ imports.
// Type-only imports count as imports: they reach the published .d.ts, where a consumer's type-check
// needs the package installed, so a package used only for its types is still a runtime dependency.
// Optional peer dependencies are the exception (the SDK's framework adapters load them by name from
// the application's install): they are not dependencies, but each must be named in src/.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  importedPackages,
  installedClosure,
  type Manifest,
  ROOT,
  sourceFiles,
  workspacePackages,
} from "./package-graph.js";

/** Each package → the @rebuno packages it imports, in an order where every package follows its dependencies. */
const GRAPH: Record<string, string[]> = {
  "@rebuno/protocol": [],
  "@rebuno/policy": ["@rebuno/protocol"],
  "@rebuno/kernel-transport": ["@rebuno/protocol"],
  "@rebuno/client": ["@rebuno/kernel-transport", "@rebuno/protocol"],
  "@rebuno/sdk": ["@rebuno/client", "@rebuno/kernel-transport", "@rebuno/protocol"],
  // The library: no console, no client, no HTTP client (the kernel answers HTTP, it does not send it
  // except webhooks, through node:http).
  "@rebuno/dev-kernel": ["@rebuno/policy", "@rebuno/protocol"],
  // Its src/ only finds the built page; the client is bundled into that page at build time.
  "@rebuno/console": ["@rebuno/protocol"],
  // The `rebuno-dev` command: the one place the kernel and the web console meet.
  "@rebuno/dev": ["@rebuno/console", "@rebuno/dev-kernel", "@rebuno/policy", "@rebuno/protocol"],
  "@rebuno/testing": ["@rebuno/client", "@rebuno/dev-kernel", "@rebuno/protocol", "@rebuno/sdk"],
  // `rebuno policy test` runs the policy engine, not the kernel.
  "@rebuno/cli": ["@rebuno/client", "@rebuno/policy", "@rebuno/protocol"],
};

/** Packages that send HTTP requests: an install of the dev kernel or the policy engine brings none. */
const HTTP_CLIENTS = ["ky", "undici", "@rebuno/kernel-transport", "@rebuno/client"];

const packages = workspacePackages().filter((p) => !p.json.private);
const byName = new Map(packages.map((p) => [p.json.name, p]));
const runtimeDeps = (json: Manifest) =>
  Object.keys({ ...json.dependencies, ...json.optionalDependencies }).sort();
const ours = (names: Iterable<string>) => [...names].filter((n) => n.startsWith("@rebuno/")).sort();
const srcOf = (dir: string) => join(ROOT, "packages", dir, "src");
const short = (name: string) => name.replace("@rebuno/", "");
const each = packages.map((p) => [p.json.name, p] as const);

/** The README's dependency list, as rendered from GRAPH and the manifests' external dependencies. */
function renderDependencyList(): string {
  return Object.entries(GRAPH)
    .map(([name, deps]) => {
      const json = byName.get(name)!.json;
      const optional = new Set(Object.keys(json.optionalDependencies ?? {}));
      const external = runtimeDeps(json)
        .filter((d) => !d.startsWith("@rebuno/"))
        .map((d) => (optional.has(d) ? `${d} (optional)` : d));
      const targets = [...deps.map((d) => `\`${short(d)}\``), ...external];
      return `- \`${short(name)}\` → ${targets.length === 0 ? "nothing" : targets.join(", ")}`;
    })
    .join("\n");
}

describe("package topology", () => {
  test("the published set is exactly the pinned one", () => {
    expect(packages.map((p) => p.json.name).sort()).toEqual(Object.keys(GRAPH).sort());
  });

  test("dependencies point one way: each package comes after everything it depends on", () => {
    const seen = new Set<string>();
    for (const [name, deps] of Object.entries(GRAPH)) {
      for (const dep of deps) expect(seen, `${name} -> ${dep}`).toContain(dep);
      seen.add(name);
    }
  });

  test.each(each)("%s: its @rebuno runtime dependencies are the pinned ones", (name, { json }) => {
    expect(ours(runtimeDeps(json))).toEqual([...GRAPH[name]!].sort());
    expect(ours(Object.keys(json.peerDependencies ?? {}))).toEqual([]);
  });

  test.each(each)("%s: runtime dependencies are exactly what src/ imports", (_name, { dir, json }) => {
    const peers = new Set(Object.keys(json.peerDependencies ?? {}));
    const imported = [...importedPackages(srcOf(dir))].filter((p) => !peers.has(p) && p !== json.name);
    expect(runtimeDeps(json)).toEqual(imported.sort());
    // A peer is loaded by name at run time (or read from the application, like reflect-metadata's
    // `Reflect.getMetadata`): the source must say where.
    const text = sourceFiles(srcOf(dir))
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    for (const peer of peers) expect(text, `${json.name} names its peer ${peer}`).toContain(peer);
  });

  test("the OpenTelemetry API is an optional peer, never a dependency, of what writes spans", () => {
    // Browsers, Deno and Bun run the client without it: a missing API means no spans, not an error.
    for (const name of ["@rebuno/client", "@rebuno/sdk", "@rebuno/dev-kernel"]) {
      const json = byName.get(name)!.json;
      expect(json.peerDependencies?.["@opentelemetry/api"], name).toBeDefined();
      expect(json.peerDependenciesMeta?.["@opentelemetry/api"]?.optional, name).toBe(true);
      expect(runtimeDeps(json), name).not.toContain("@opentelemetry/api");
    }
  });

  test.each(each)("%s: tsconfig references are its @rebuno dependencies", (name, { dir }) => {
    const tsconfig = JSON.parse(readFileSync(join(ROOT, "packages", dir, "tsconfig.json"), "utf8"));
    const nameOfDir = new Map(packages.map((p) => [p.dir, p.json.name]));
    const referenced = (tsconfig.references ?? []).map(
      (r: { path: string }) => nameOfDir.get(r.path.replace(/^\.\.\//, "")) ?? r.path,
    );
    expect(referenced.sort()).toEqual([...GRAPH[name]!].sort());
  });

  test("the dev-kernel library imports neither the console nor any client", () => {
    const imported = importedPackages(srcOf("dev-kernel"));
    for (const forbidden of ["@rebuno/console", "@rebuno/dev", "@rebuno/cli", ...HTTP_CLIENTS]) {
      expect(imported, forbidden).not.toContain(forbidden);
    }
  });

  test("the CLI does not depend on the dev kernel, directly or through anything it installs", () => {
    const cli = byName.get("@rebuno/cli")!;
    expect(runtimeDeps(cli.json)).not.toContain("@rebuno/dev-kernel");
    expect([...installedClosure(join(ROOT, "packages", cli.dir)).keys()]).not.toContain("@rebuno/dev-kernel");
  });

  test("the policy engine is one package, used by the dev kernel and by the CLI", () => {
    for (const user of ["@rebuno/dev-kernel", "@rebuno/cli"]) {
      expect(importedPackages(srcOf(byName.get(user)!.dir)), user).toContain("@rebuno/policy");
    }
    // No second engine: the entry points are defined in packages/policy only.
    const definers = packages.flatMap(({ dir }) =>
      sourceFiles(srcOf(dir)).filter((f) =>
        /export function (compilePolicyBundle|evaluatePolicyStep)\b/.test(readFileSync(f, "utf8")),
      ),
    );
    expect(definers.map((f) => f.slice(ROOT.length)).sort()).toEqual([
      "packages/policy/src/compile.ts",
      "packages/policy/src/step.ts",
    ]);
  });

  // `npm install @rebuno/dev-kernel` (or @rebuno/policy) installs no HTTP client: walked in the
  // installed tree, optional better-sqlite3 included. (better-sqlite3's own installer,
  // prebuild-install, downloads the native addon with simple-get at install time; no code of ours
  // or of the kernel sends a request with it.)
  test.each(["@rebuno/dev-kernel", "@rebuno/policy"])("installing %s brings no HTTP client", (name) => {
    const closure = [...installedClosure(join(ROOT, "packages", byName.get(name)!.dir)).keys()];
    expect(closure).toContain("@rebuno/protocol");
    for (const client of HTTP_CLIENTS) expect(closure, client).not.toContain(client);
  });

  test("the README's dependency list is the pinned graph", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const start = readme.indexOf("Dependencies point one way");
    expect(start).toBeGreaterThan(0);
    const lines = readme.slice(start).split("\n");
    const first = lines.findIndex((line) => line.startsWith("- `"));
    const end = lines.findIndex((line, i) => i > first && !line.startsWith("- `"));
    const list = lines.slice(first, end).join("\n");
    expect(list).toEqual(renderDependencyList());
  });

  test("the README's packages table lists every package, in the graph's order, with its folder", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const rows = [...readme.matchAll(/^\| \[`(@rebuno\/[a-z-]+)`\]\(packages\/([a-z-]+)\) \|/gm)];
    expect(rows.map((r) => r[1])).toEqual(Object.keys(GRAPH));
    for (const [, name, dir] of rows) expect(dir, name).toBe(byName.get(name!)!.dir);
  });

  test.each(each)("%s is ESM-only with a single entry", (_name, { json }) => {
    expect(json.type).toBe("module");
    expect(Object.keys(json.exports)).toEqual([".", "./package.json"]);
    expect(json.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    expect(json.engines.node).toBe(">=20.19");
  });

  // Runtime-specific code sits behind package.json "imports" conditions, one per package that needs
  // it: Node (and for hashing Deno and Bun, which have node:crypto) get the native side; browsers
  // and workers the portable one. Deno and Bun take the fetch engine before the `node` condition.
  test.each(each)("%s selects runtime code only through the pinned import conditions", (name, { json }) => {
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
  });

  test("no source file uses `export *`", () => {
    for (const { dir } of packages) {
      for (const file of sourceFiles(srcOf(dir))) {
        expect(readFileSync(file, "utf8"), file).not.toMatch(/^export \* from/m);
      }
    }
  });
});
