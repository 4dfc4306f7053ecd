// The store's modules form no import cycle (type-only imports included: a cycle of types still
// ties the files together) and stay small enough to read in one sitting.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const STORE = fileURLToPath(new URL("../src/store/", import.meta.url));
const MAX_LINES = 400;

function sources(): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(STORE))
    if (name.endsWith(".ts")) out.set(name, readFileSync(STORE + name, "utf8"));
  return out;
}

/** Relative imports of one file, as file names in the same folder (`./x.js` → `x.ts`). */
function localImports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\bfrom\s+"\.\/([\w.-]+)\.js"/g)) out.push(`${m[1]}.ts`);
  return out;
}

/** Every import cycle, each as the file path that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): void => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe("store modules", () => {
  test("no import cycle", () => {
    const graph = new Map([...sources()].map(([name, text]) => [name, localImports(text)]));
    expect(graph.get("memory.ts")).toContain("memory-executions.ts"); // the scan sees imports at all
    expect(cycles(graph)).toEqual([]);
    // The detector itself reports a cycle (the check above cannot pass vacuously).
    expect(
      cycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", ["a.ts"]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "a.ts"]]);
  });

  test(`no file over ${MAX_LINES} lines`, () => {
    const long = [...sources()]
      .map(([name, text]) => [name, text.split("\n").length] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
