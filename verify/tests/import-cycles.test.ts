// No import cycles inside any package's src/: every relative import (type-only ones included, and
// `export … from`) is an edge, and each package's graph must be acyclic. A cycle found here is
// named file by file so it can be broken where it was introduced.
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
});
