// Every `@example` in a JSDoc comment of packages/*/src is a complete module that is typechecked and
// run here, like the docs snippets (scripts/check-snippets.mjs), so no example can drift from the
// API. Each is written to packages/<pkg>/.tmp/jsdoc-examples/ (git-ignored), where the package's own
// dependencies resolve; @rebuno/* resolve to the sources, as in every test.
//
// The example's first line may say how it runs:
//   (nothing)                          run as a module in this process
//   // example: in an execution        run as the body of an agent's execution on an in-process
//                                      dev kernel (@rebuno/testing's TestEnvironment): step(),
//                                      execution(), tools and subagents need one
//   // example: compile only: <why>    typechecked, not run (it needs something outside this
//                                      repository, e.g. a model provider's API); say why
// A failure names the example by its source file and line.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Agent, type AgentOptions } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import ts from "typescript";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = ".tmp/jsdoc-examples";

type Mode = "run" | "in-execution" | "compile-only";

interface Example {
  /** `packages/<pkg>/src/…:<line>` of the example's first code line. */
  readonly where: string;
  readonly source: string;
  /** Source line (1-based) of the example's first code line. */
  readonly firstLine: number;
  readonly code: string;
  readonly mode: Mode;
  /** Where the module is written. */
  readonly file: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function modeOf(code: string, where: string): Mode {
  const first = code.split("\n", 1)[0]!.trim();
  if (!first.startsWith("// example:")) return "run";
  if (first === "// example: in an execution") return "in-execution";
  if (/^\/\/ example: compile only: \S/.test(first)) return "compile-only";
  throw new Error(`${where}: unknown marker ${JSON.stringify(first)}`);
}

/** The ```ts block after each `@example` tag of every JSDoc comment. */
function extract(): Example[] {
  const examples: Example[] = [];
  for (const pkg of readdirSync(join(ROOT, "packages")).sort()) {
    const src = join(ROOT, "packages", pkg, "src");
    if (!existsSync(src)) continue;
    for (const path of sourceFiles(src)) {
      const lines = readFileSync(path, "utf8").split("\n");
      const source = relative(ROOT, path);
      for (let i = 0; i < lines.length; i++) {
        if (!/^\s*\*\s*@example\b/.test(lines[i]!)) continue;
        const open = lines.findIndex((l, k) => k > i && !/^\s*\*\s*$/.test(l));
        if (open < 0 || !/^\s*\*\s*```ts\s*$/.test(lines[open]!)) {
          throw new Error(`${source}:${i + 1}: @example not followed by a \`\`\`ts block`);
        }
        const close = lines.findIndex((l, k) => k > open && /^\s*\*\s*```\s*$/.test(l));
        if (close < 0) throw new Error(`${source}:${open + 1}: unterminated \`\`\` block`);
        const code = lines
          .slice(open + 1, close)
          .map((l) => l.replace(/^\s*\* ?/, ""))
          .join("\n");
        const where = `${source}:${open + 2}`;
        const name = `${relative(src, path).replace(/[/\\.]/g, "-")}-L${open + 2}.ts`;
        examples.push({
          where,
          source,
          firstLine: open + 2,
          code,
          mode: modeOf(code, where),
          file: join(ROOT, "packages", pkg, OUT, name),
        });
        i = close;
      }
    }
  }
  return examples;
}

const examples = extract();
for (const dir of new Set(examples.map((e) => dirname(e.file)))) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
for (const e of examples) writeFileSync(e.file, `${e.code}\n`);
afterAll(() => {
  for (const dir of new Set(examples.map((e) => dirname(e.file))))
    rmSync(dir, { recursive: true, force: true });
});

/** Typecheck every example as a module with the tests' compiler options (sources via `paths`). */
function typecheck(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.tests.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (config === undefined) throw new Error("tsconfig.tests.json did not parse");
  const program = ts.createProgram({
    rootNames: examples.map((e) => e.file),
    options: { ...config.options, noEmit: true, rootDir: ROOT },
  });
  const byFile = new Map(examples.map((e) => [e.file, e]));
  const problems: string[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const example = d.file === undefined ? undefined : byFile.get(d.file.fileName);
    if (d.file === undefined || d.start === undefined) {
      problems.push(message);
    } else if (example === undefined) {
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      problems.push(`${relative(ROOT, d.file.fileName)}:${line + 1}: ${message}`);
    } else {
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      problems.push(`${example.source}:${example.firstLine + line}: ${message}`);
    }
  }
  // Every example must be a module (its own scope): one without import/export would share globals.
  for (const e of examples) {
    if (!/^\s*(import|export)\s/m.test(e.code)) problems.push(`${e.where}: not a module (no import)`);
  }
  return problems;
}

/** An agent whose execution imports (and so runs) the example module. */
const exampleAgent = (e: Example) => (options: AgentOptions) =>
  new Agent(
    "jsdoc-example",
    async () => {
      await import(pathToFileURL(e.file).href);
      return "ran";
    },
    options,
  );

describe("JSDoc @example blocks", () => {
  test("there are examples, and each says how it runs", () => {
    expect(examples.length).toBeGreaterThan(20);
    const compileOnly = examples.filter((e) => e.mode === "compile-only").map((e) => e.where);
    // Markers stay rare: most examples run.
    expect(compileOnly.length, compileOnly.join("\n")).toBeLessThan(examples.length / 2);
  });

  test("every example typechecks as a module", { timeout: 180_000 }, () => {
    expect(typecheck()).toEqual([]);
  });

  test.each(examples.filter((e) => e.mode === "run").map((e) => [e.where, e] as const))(
    "%s runs",
    { timeout: 60_000 },
    async (where, e) => {
      await import(pathToFileURL(e.file).href).catch((err: unknown) => {
        throw new Error(`${where}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      });
    },
  );

  test.each(examples.filter((e) => e.mode === "in-execution").map((e) => [e.where, e] as const))(
    "%s runs in an execution",
    { timeout: 60_000 },
    async (where, e) => {
      const agent = exampleAgent(e);
      const env = await TestEnvironment.create({ agents: [agent] });
      try {
        const { execution, output } = await env.run(agent, {});
        expect(execution.status, `${where}: ${JSON.stringify(execution)}`).toBe("completed");
        expect(output).toBe("ran");
      } finally {
        await env.teardown();
      }
    },
  );
});
