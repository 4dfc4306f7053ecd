#!/usr/bin/env node
// Every code block in docs/ that is marked `<!-- snippet: <file>#<region> -->` must equal that region
// of a compiled, tested file (between `// #region <name>` and `// #endregion`). Blocks without a
// marker must be shell/yaml/text, never TypeScript, so no uncompiled TS reaches the docs.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const docs = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith(".md")) docs.push(path);
  }
};
walk(join(root, "docs"));
docs.push(join(root, "README.md"));
// Package READMEs ship inside the tarballs: their snippets follow the same rule.
for (const pkg of readdirSync(join(root, "packages"))) {
  const readme = join(root, "packages", pkg, "README.md");
  if (
    statSync(join(root, "packages", pkg)).isDirectory() &&
    readdirSync(join(root, "packages", pkg)).includes("README.md")
  )
    docs.push(readme);
}

const region = (file, name) => {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  if (start < 0) throw new Error(`region '${name}' not found in ${file}`);
  const end = lines.findIndex((l, i) => i > start && l.trim().startsWith("// #endregion"));
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
  return body
    .map((l) => l.slice(indent))
    .join("\n")
    .trim();
};

// `<!-- snippet: file#region +imports -->`: the block starts with the file's import lines that the
// region uses (only the used names), so a reader sees where every name comes from even when the
// region sits inside a function. Side-effect imports and unused names are left out.
// A test importing its own package's sources (`../src/index.js`) shows the published name instead.
const publicName = (file, from) => {
  const spec = JSON.parse(from);
  if (!spec.startsWith(".")) return from;
  const target = relative(root, join(root, dirname(file), spec));
  const own = /^packages\/([^/]+)\/src\/index\.(?:js|ts)$/.exec(target);
  if (!own) return from;
  return JSON.stringify(
    JSON.parse(readFileSync(join(root, "packages", own[1], "package.json"), "utf8")).name,
  );
};

const importsFor = (file, region) => {
  const source = readFileSync(join(root, file), "utf8");
  // Names only count in code: comments and plain string literals are blanked first.
  const code = region
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""')
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/\/\/.*$/gm, " ");
  const used = (local) => new RegExp(`(^|[^\\w$.])${local.replace(/\$/g, "\\$")}(?![\\w$])`).test(code);
  const lines = [];
  for (const m of source.matchAll(/^import\s+(type\s+)?([\s\S]*?)\s+from\s+("[^"]+");/gm)) {
    const [, typeOnly, clause, from] = m;
    const parts = [];
    let named = [];
    const braces = /\{([\s\S]*)\}/.exec(clause);
    for (const piece of clause
      .replace(/\{[\s\S]*\}/, "")
      .split(",")
      .map((x) => x.trim())) {
      if (!piece) continue;
      const ns = /^\*\s+as\s+(\S+)$/.exec(piece);
      if (ns ? used(ns[1]) : used(piece)) parts.push(piece);
    }
    if (braces) {
      named = braces[1]
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean)
        .filter((spec) =>
          used(
            spec
              .replace(/^type\s+/, "")
              .split(/\s+as\s+/)
              .pop(),
          ),
        );
    }
    if (named.length > 0) parts.push(`{ ${named.join(", ")} }`);
    if (parts.length > 0)
      lines.push(`import ${typeOnly ?? ""}${parts.join(", ")} from ${publicName(file, from)};`);
  }
  return lines.join("\n");
};

const expectedBlock = (file, name, withImports) => {
  const body = region(file, name);
  if (!withImports) return body;
  const imports = importsFor(file, body);
  return imports ? `${imports}\n\n${body}` : body;
};

// `--write` rewrites every marked block from its source instead of reporting differences.
const write = process.argv.includes("--write");
let problems = 0;
let checked = 0;
for (const doc of docs) {
  const text = readFileSync(doc, "utf8");
  const re = /(?:<!-- snippet: (\S+?)#(\S+?)( \+imports)? -->\s*\n)?```(\w*)\n([\s\S]*?)```/g;
  let rewritten = text;
  for (const m of text.matchAll(re)) {
    const [whole, file, name, withImports, lang, code] = m;
    const where = relative(root, doc);
    if (file) {
      checked++;
      let expected;
      try {
        expected = expectedBlock(file, name, withImports !== undefined);
      } catch (e) {
        console.error(`${where}: ${e.message}`);
        problems++;
        continue;
      }
      if (expected !== code.trim()) {
        if (write) {
          rewritten = rewritten.replace(whole, whole.replace(code, `${expected}\n`));
          continue;
        }
        console.error(`${where}: snippet ${file}#${name} differs from the source region`);
        problems++;
      }
    } else if (["ts", "typescript", "js", "javascript", "tsx"].includes(lang)) {
      console.error(`${where}: a ${lang} block has no <!-- snippet: file#region --> marker`);
      problems++;
    }
  }
  if (write && rewritten !== text) writeFileSync(doc, rewritten);
}
console.log(`snippets: ${checked} checked, ${problems} problems`);
process.exit(problems ? 1 : 0);
