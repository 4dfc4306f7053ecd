// Every citation resolves inside the repository (issue 17). A `§N` citation names a markdown file
// and resolves to a numbered heading of it; benchmark ids cited with docs/benchmarks.md are
// headings there; nothing names a document a clone does not contain. Scans tracked text files
// (source, tests, docs, bench, scripts, examples) and the generated API reference when it is on
// disk. Failures are listed as `file:line: problem`.
//
// The forms:
//   `docs/protocol.md §4.8`          a section of a named file (path from the repository root,
//                                    or relative to the citing file; the name may be in backticks);
//   `docs/protocol.md §3.1, §3.2`    a run after a named file belongs to that file (also across a
//                                    wrapped comment line);
//   `§9.3` alone                     in markdown: a section of the same file; in code: an error.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const THIS_FILE = fileURLToPath(import.meta.url);

/** The repository root: the nearest folder above this file holding pnpm-workspace.yaml. */
function findRoot(start: string): string {
  let dir = dirname(start);
  while (!existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no pnpm-workspace.yaml above ${start}`);
    dir = up;
  }
  return dir;
}

const ROOT = findRoot(THIS_FILE);
const SELF = relative(ROOT, THIS_FILE).split("\\").join("/");

/** Documents outside the repository that citations used to name. `../shared/rebuno-kernel` is a build input, not a document. */
const OUTSIDE =
  /reliability-perf|sdk-surface|ecosystem\.md|aesthetics\.md|shared\/reference|\.\.\/shared\/(?!rebuno-kernel)/;
const MARKDOWN = /\.mdx?$/;
const BINARY = /\.(png|jpe?g|gif|ico|woff2?|db|sqlite|wasm|gz|tgz|zip)$/;
const SECTION = /§(\d+(?:\.\d+)*)/g;
const NAMED_FILE = /((?:\.{1,2}\/)?[\w./-]+\.mdx?)`? *$/;
const CHAIN = /^\s*(?:,|\/|;|–|-|and|or|to)?\s*$/;
const COMMENT_LEAD = /^\s*(?:\/\/+|\*|#|<!--)?\s*$/;

/** Section numbers of a markdown text's headings (`## 9. Policy` → 9, `### 9.1 …` → 9.1), outside code fences. */
function headingNumbers(text: string): Set<string> {
  const numbers = new Set<string>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(\d+(?:\.\d+)*)\.?(?:\s|$)/.exec(line);
    if (m?.[1] !== undefined) numbers.add(m[1]);
  }
  return numbers;
}

/** Benchmark ids defined in docs/benchmarks.md: the first id of a heading (`### B7: …`). */
function benchmarkIds(text: string): Set<string> {
  const ids = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^#{2,4}\s+B(\d+)\b/.exec(line);
    if (m?.[1] !== undefined) ids.add(`B${m[1]}`);
  }
  return ids;
}

/** One `§` citation and the file it names (`undefined`: it names none). */
interface Citation {
  readonly line: number;
  readonly section: string;
  readonly file: string | undefined;
}

/** Every `§N` citation of a text, with the file each one names (see the module comment). */
function citationsOf(text: string): Citation[] {
  const lines = text.split("\n");
  const out: Citation[] = [];
  lines.forEach((line, index) => {
    let previous: { end: number; file: string | undefined } | undefined;
    for (const m of line.matchAll(SECTION)) {
      const at = m.index ?? 0;
      const before = line.slice(0, at);
      let file: string | undefined;
      if (previous !== undefined && CHAIN.test(line.slice(previous.end, at))) file = previous.file;
      else if (NAMED_FILE.test(before)) file = NAMED_FILE.exec(before)?.[1];
      else if (COMMENT_LEAD.test(before) && index > 0) file = NAMED_FILE.exec(lines[index - 1] ?? "")?.[1];
      out.push({ line: index + 1, section: m[1] ?? "", file });
      previous = { end: at + m[0].length, file };
    }
  });
  return out;
}

/** The files to scan: tracked text files plus, when built, the API reference in docs/api. */
function filesToScan(): string[] {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && f !== SELF && !BINARY.test(f) && !f.endsWith("pnpm-lock.yaml"));
  const generated: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = posix.join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (MARKDOWN.test(name)) generated.push(path);
    }
  };
  if (existsSync(join(ROOT, "docs/api"))) walk("docs/api");
  return [...new Set([...tracked, ...generated])].filter((f) => existsSync(join(ROOT, f)));
}

function read(file: string): string | undefined {
  const text = readFileSync(join(ROOT, file), "utf8");
  return text.includes("\0") ? undefined : text;
}

const headingCache = new Map<string, Set<string>>();
function headingsOf(file: string): Set<string> {
  let numbers = headingCache.get(file);
  if (numbers === undefined) {
    numbers = new Set<string>();
    if (existsSync(join(ROOT, file))) {
      for (const n of headingNumbers(readFileSync(join(ROOT, file), "utf8"))) numbers.add(n);
    }
    headingCache.set(file, numbers);
  }
  return numbers;
}

/** A cited path: from the repository root, else relative to the citing file; `undefined` if neither exists. */
function resolveCited(cited: string, from: string): string | undefined {
  const candidates = cited.startsWith(".")
    ? [posix.join(posix.dirname(from), cited)]
    : [posix.normalize(cited), posix.join(posix.dirname(from), cited)];
  return candidates.find((c) => !c.startsWith("..") && existsSync(join(ROOT, c)));
}

/** Every problem in one file, as `file:line: message`, in line order. */
function problemsOf(file: string, text: string, benchmarks: Set<string>): string[] {
  const problems: string[] = [];
  const lineOf = (problem: string) => Number(problem.slice(file.length + 1).split(":")[0]);
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const outside = OUTSIDE.exec(line);
    if (outside !== null)
      problems.push(`${file}:${i + 1}: names ${outside[0]}, a document outside the repository`);
    if (/benchmarks\.md/.test(line) && !/^#/.test(line)) {
      for (const range of line.matchAll(/\bB(\d+)(?:–B(\d+))?\b/g)) {
        const from = Number(range[1]);
        const to = range[2] === undefined ? from : Number(range[2]);
        for (let n = from; n <= to; n++) {
          if (!benchmarks.has(`B${n}`))
            problems.push(`${file}:${i + 1}: benchmark B${n} has no heading in docs/benchmarks.md`);
        }
      }
    }
  });
  for (const c of citationsOf(text)) {
    const where = `${file}:${c.line}: §${c.section}`;
    let target: string | undefined;
    if (c.file === undefined) {
      if (!MARKDOWN.test(file)) {
        problems.push(
          `${where} names no file (write it as docs/protocol.md §${c.section} or <file>.md §${c.section})`,
        );
        continue;
      }
      target = file;
    } else {
      target = resolveCited(c.file, file);
      if (target === undefined) {
        problems.push(`${where} cites ${c.file}, which is not in the repository`);
        continue;
      }
    }
    if (!headingsOf(target).has(c.section)) problems.push(`${where} has no numbered heading in ${target}`);
  }
  return problems.sort((a, b) => lineOf(a) - lineOf(b));
}

describe("citations resolve inside the repository", () => {
  test("the scanner reads the citation forms", () => {
    const text = [
      "// docs/protocol.md §3.1, §3.2 and (§4.6); `docs/interop.md` §3",
      "// A/B in docs/design/transport.md",
      "// §2), as measured.",
    ].join("\n");
    expect(citationsOf(text)).toEqual([
      { line: 1, section: "3.1", file: "docs/protocol.md" },
      { line: 1, section: "3.2", file: "docs/protocol.md" },
      { line: 1, section: "4.6", file: undefined },
      { line: 1, section: "3", file: "docs/interop.md" },
      { line: 3, section: "2", file: "docs/design/transport.md" },
    ]);
    expect([...headingNumbers("## 9. Policy\n### 9.1 Bundles\n```\n## 99. not a heading\n```\n")]).toEqual([
      "9",
      "9.1",
    ]);
    expect([...benchmarkIds("### B7: steps\n### B1 / B2 / B3 (figures)\n## B\n")]).toEqual(["B7", "B1"]);
  });

  test("the checker rejects what does not resolve", () => {
    const benchmarks = new Set(["B1"]);
    expect(problemsOf("src/x.ts", "// protocol §4.8\n// docs/benchmarks.md §999.1\n", benchmarks)).toEqual([
      "src/x.ts:1: §4.8 names no file (write it as docs/protocol.md §4.8 or <file>.md §4.8)",
      "src/x.ts:2: §999.1 has no numbered heading in docs/benchmarks.md",
    ]);
    expect(
      problemsOf("src/x.ts", "// docs/missing.md §1\n// B2 of docs/benchmarks.md\n", benchmarks),
    ).toEqual([
      "src/x.ts:1: §1 cites docs/missing.md, which is not in the repository",
      "src/x.ts:2: benchmark B2 has no heading in docs/benchmarks.md",
    ]);
    expect(problemsOf("docs/x.md", "see reliability-perf B3\n", benchmarks)).toEqual([
      "docs/x.md:1: names reliability-perf, a document outside the repository",
    ]);
  });

  test("every citation in the repository resolves", () => {
    const benchmarks = benchmarkIds(readFileSync(join(ROOT, "docs/benchmarks.md"), "utf8"));
    const problems: string[] = [];
    for (const file of filesToScan()) {
      const text = read(file);
      if (text !== undefined) problems.push(...problemsOf(file, text, benchmarks));
    }
    expect(problems).toEqual([]);
  });
});
