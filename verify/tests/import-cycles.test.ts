// No import cycles inside any package's src/: every relative import (type-only ones included, and
// `export … from`) is an edge, and each package's graph must be acyclic. A cycle found here is
// named file by file so it can be broken where it was introduced.
//
// No loops between folders either: with every file of a folder under src/ taken as one node, the
// folders must form a DAG too (runtime/ may import tools/ or the reverse, never both). A file
// directly in src/ is a node of its own: the root holds the package's entry and composition files
// (index.ts, kernel.ts, program.ts) beside shared leaves (errors.ts, tool-types.ts), so taking the
// root as one node would make every folder "loop" through the barrel that re-exports it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE = /\.(ts|tsx|mts)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The file a relative specifier names (`./x.js` is written for `./x.ts`), or undefined. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|jsx)$/, "");
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, join(base, "index.ts")];
  return candidates.find((c) => SOURCE.test(c) && existsSync(c) && statSync(c).isFile());
}

/** file → the files it imports relatively (TypeScript's own import scanner, no regexes). */
function importGraph(srcDir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(srcDir)) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = info.importedFiles
      .map((f) => f.fileName)
      .filter((name) => name.startsWith("./") || name.startsWith("../"))
      .map((name) => resolveSpecifier(file, name))
      .filter((t): t is string => t !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every strongly connected component with more than one file (or a self-import): the cycles. */
function findCycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowlink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  // Tarjan's algorithm; the graphs are a few hundred files, so recursion depth is no concern.
  const visit = (node: string): void => {
    indices.set(node, index);
    lowlink.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowlink.set(node, Math.min(lowlink.get(node)!, lowlink.get(next)!));
      } else if (onStack.has(next)) {
        lowlink.set(node, Math.min(lowlink.get(node)!, indices.get(next)!));
      }
    }
    if (lowlink.get(node) === indices.get(node)) {
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === node) break;
      }
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

/** The node a file belongs to: its folder under src/ (`runtime/`), or the file itself at the root. */
function folderOf(srcDir: string, file: string): string {
  const folder = relative(srcDir, dirname(file));
  return folder === "" ? relative(srcDir, file) : `${folder}/`;
}

/** The file graph collapsed to folders; each edge remembers one file-level import that makes it. */
function folderGraph(srcDir: string, files: Map<string, string[]>): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = folderOf(srcDir, file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const target of targets) {
      const to = folderOf(srcDir, target);
      if (to !== from) edges.add(to);
    }
  }
  return new Map([...graph].map(([node, edges]) => [node, [...edges].sort()]));
}

/** For a folder loop: the imports that make it, `from → to` per file, so it can be broken. */
function loopImports(srcDir: string, files: Map<string, string[]>, loop: readonly string[]): string[] {
  const members = new Set(loop);
  return [...files].flatMap(([file, targets]) =>
    targets
      .filter((t) => folderOf(srcDir, t) !== folderOf(srcDir, file))
      .filter((t) => members.has(folderOf(srcDir, file)) && members.has(folderOf(srcDir, t)))
      .map((t) => `${relative(srcDir, file)} → ${relative(srcDir, t)}`),
  );
}

const packages = readdirSync(join(root, "packages")).filter((dir) =>
  existsSync(join(root, "packages", dir, "src")),
);

describe("import cycles", () => {
  test("the detector finds a planted cycle and accepts a tree", () => {
    const a = "/x/a.ts";
    const b = "/x/b.ts";
    const c = "/x/c.ts";
    expect(
      findCycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual([[a, b, c]]);
    expect(
      findCycles(
        new Map([
          [a, [b, c]],
          [b, [c]],
          [c, []],
        ]),
      ),
    ).toEqual([]);
    expect(findCycles(new Map([[a, [a]]]))).toEqual([[a]]);
  });

  test.each(packages)("packages/%s/src has no import cycle", (pkg) => {
    const graph = importGraph(join(root, "packages", pkg, "src"));
    expect(graph.size).toBeGreaterThan(0);
    const cycles = findCycles(graph).map((cycle) => cycle.map((file) => relative(root, file)));
    expect(cycles).toEqual([]);
  });

  test("the folder graph collapses files into folders and finds a planted folder loop", () => {
    const files = new Map([
      ["/p/src/index.ts", ["/p/src/runtime/call.ts", "/p/src/tools/callable.ts"]],
      ["/p/src/runtime/call.ts", ["/p/src/tools/spec.ts", "/p/src/types.ts"]],
      ["/p/src/tools/callable.ts", ["/p/src/runtime/call.ts"]],
      ["/p/src/tools/spec.ts", ["/p/src/types.ts"]],
      ["/p/src/types.ts", []],
    ]);
    const graph = folderGraph("/p/src", files);
    expect(graph.get("index.ts")).toEqual(["runtime/", "tools/"]);
    // No file cycle, yet runtime/ and tools/ import each other.
    expect(findCycles(files)).toEqual([]);
    const loops = findCycles(graph);
    expect(loops).toEqual([["runtime/", "tools/"]]);
    expect(loopImports("/p/src", files, loops[0]!)).toEqual([
      "runtime/call.ts → tools/spec.ts",
      "tools/callable.ts → runtime/call.ts",
    ]);
    // Moving the shared spec below both folders breaks the loop.
    files.set("/p/src/runtime/call.ts", ["/p/src/spec.ts", "/p/src/types.ts"]);
    expect(findCycles(folderGraph("/p/src", files))).toEqual([]);
  });

  test.each(packages)("packages/%s/src has no loop between folders", (pkg) => {
    const srcDir = join(root, "packages", pkg, "src");
    const files = importGraph(srcDir);
    // The rule that root files are nodes of their own rests on this: the entry re-exports, nothing
    // inside the package imports it back.
    const entry = join(srcDir, "index.ts");
    const importersOfEntry = [...files].filter(([, targets]) => targets.includes(entry)).map(([f]) => f);
    expect(importersOfEntry).toEqual([]);
    const loops = findCycles(folderGraph(srcDir, files)).map((loop) => ({
      loop,
      imports: loopImports(srcDir, files, loop),
    }));
    expect(loops).toEqual([]);
  });
});
