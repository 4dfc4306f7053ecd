// Issue 10 #17 (transport part): the package's modules form no import cycle, type-only imports
// included (a cycle through types still couples the files and trips cycle checkers).
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));
const IMPORT = /(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\sfrom\s+)?["'](\.\/[^"']+)\.js["']/g;

function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of readdirSync(SRC).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(SRC + file, "utf8");
    edges.set(
      file.slice(0, -3),
      [...text.matchAll(IMPORT)].map((m) => m[1]!.slice(2)),
    );
  }
  return edges;
}

function cycles(edges: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string): void => {
    state.set(n, "open");
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      if (state.get(m) === "open") found.push([...stack.slice(stack.indexOf(m)), m].join(" → "));
      else if (state.get(m) === undefined) visit(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of edges.keys()) if (state.get(n) === undefined) visit(n);
  return found;
}

test("kernel-transport/src has no import cycle (http-core ↔ request-run was one)", () => {
  const edges = graph();
  expect(edges.get("http-core")).toContain("request-run"); // the scanner sees imports
  expect(cycles(edges)).toEqual([]);
});
