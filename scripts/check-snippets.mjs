#!/usr/bin/env node
// Every code block in docs/ that is marked `<!-- snippet: <file>#<region> -->` must equal that region
// of a compiled, tested file (between `// #region <name>` and `// #endregion`). Blocks without a
// marker must be shell/yaml/text, never TypeScript, so no uncompiled TS reaches the docs.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

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

let problems = 0;
let checked = 0;
for (const doc of docs) {
  const text = readFileSync(doc, "utf8");
  const re = /(?:<!-- snippet: (\S+?)#(\S+?) -->\s*\n)?```(\w*)\n([\s\S]*?)```/g;
  for (const m of text.matchAll(re)) {
    const [, file, name, lang, code] = m;
    const where = relative(root, doc);
    if (file) {
      checked++;
      let expected;
      try {
        expected = region(file, name);
      } catch (e) {
        console.error(`${where}: ${e.message}`);
        problems++;
        continue;
      }
      if (expected !== code.trim()) {
        console.error(`${where}: snippet ${file}#${name} differs from the source region`);
        problems++;
      }
    } else if (["ts", "typescript", "js", "javascript", "tsx"].includes(lang)) {
      console.error(`${where}: a ${lang} block has no <!-- snippet: file#region --> marker`);
      problems++;
    }
  }
}
console.log(`snippets: ${checked} checked, ${problems} problems`);
process.exit(problems ? 1 : 0);
