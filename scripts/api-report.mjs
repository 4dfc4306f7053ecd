#!/usr/bin/env node
// The public API of every published package, as api-extractor reports in api/<package>.api.md.
//
//   node scripts/api-report.mjs           # check: fails when an export changed without its report
//   node scripts/api-report.mjs --update  # rewrite the reports (commit them with the change)
//   node scripts/api-report.mjs --docs    # build the API reference into docs/api/ (not committed)
//
// Reads each package's dist/index.d.ts, so it needs a prior `tsc -b`. A changed report in a pull
// request is the API change to review: api/*.api.md is the reviewed surface. The reference pages are
// generated (api-documenter, from the doc model api-extractor writes), ignored by git, and rebuilt by
// `pnpm docs:api`; that mode fails when the reference does not build. The last line is
// `N passed, M failed`.
//
// TypeScript orders the members of a union by internal type ids, which depend on the order it checked
// files in: a fresh `tsc -b` and an incremental one can print `z.enum(["a", "b"])` as `{ a: "a"; b: "b" }`
// or `{ b: "b"; a: "a" }`. Both sides are therefore compared (and written) in a canonical form that
// sorts each run of such enum-member lines; no other line is touched.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

/** Sorts each run of consecutive `name: "name";` lines that share one indentation. */
function canonicalEnumMembers(text) {
  const lines = text.split("\n");
  const member = /^(\s*)([A-Za-z_$][\w$]*): "\2";\r?$/;
  for (let start = 0; start < lines.length; ) {
    const indent = member.exec(lines[start])?.[1];
    let end = start + 1;
    if (indent !== undefined) {
      while (end < lines.length && member.exec(lines[end])?.[1] === indent) end++;
      const run = lines.slice(start, end).sort();
      lines.splice(start, run.length, ...run);
    }
    start = end;
  }
  return lines.join("\n");
}
const readCanonical = (file) => canonicalEnumMembers(readFileSync(file, "utf8"));

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const update = process.argv.includes("--update");
const docs = process.argv.includes("--docs");
const check = !docs || process.argv.includes("--check");
let passed = 0;
let failed = 0;

for (const dir of readdirSync(path.join(ROOT, "packages")).sort()) {
  const folder = path.join(ROOT, "packages", dir);
  const pkgFile = path.join(folder, "package.json");
  if (!existsSync(pkgFile)) continue;
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
  if (pkg.private) continue;
  const config = ExtractorConfig.prepare({
    configObject: {
      ...ExtractorConfig.loadFile(path.join(ROOT, "api-extractor.base.json")),
      projectFolder: folder,
    },
    configObjectFullPath: path.join(folder, "api-extractor.json"),
    packageJsonFullPath: pkgFile,
  });
  // api-extractor's own report comparison is order-sensitive (see the top), so it only writes the
  // fresh report into reportTempFolder and this script compares canonical forms itself.
  const result = Extractor.invoke(config, {
    localBuild: false,
    showVerboseMessages: false,
    messageCallback: (message) => {
      if (message.messageId === "console-api-report-not-copied") message.logLevel = "none";
    },
  });
  const [{ fileName }] = config.reportConfigs;
  const fresh = path.join(config.reportTempFolder, fileName);
  const committed = path.join(config.reportFolder, fileName);
  const changed = !existsSync(committed) || readCanonical(fresh) !== readCanonical(committed);
  if (result.errorCount > 0) {
    failed++;
    console.log(`FAIL ${pkg.name}: ${result.errorCount} errors`);
  } else if (!check) {
    // Building the reference only needs the doc model; the report is `pnpm api:check`'s business.
    passed++;
    console.log(`ok   ${pkg.name} (doc model)`);
  } else if (changed && update) {
    writeFileSync(committed, readCanonical(fresh));
    passed++;
    console.log(`ok   ${pkg.name} (report updated)`);
  } else if (changed) {
    failed++;
    console.log(`FAIL ${pkg.name}: the API changed: run \`pnpm api:update\` and commit api/`);
  } else {
    passed++;
    console.log(`ok   ${pkg.name}`);
  }
}
// The API reference: rendered from the doc models into docs/api (generated, ignored by git).
if (docs) {
  const models = path.join(ROOT, ".tmp/api-model");
  const out = path.join(ROOT, "docs/api");
  rmSync(out, { recursive: true, force: true });
  const documenter = path.join(ROOT, "node_modules/@microsoft/api-documenter/bin/api-documenter");
  const r = spawnSync(process.execPath, [documenter, "markdown", "-i", models, "-o", out], {
    encoding: "utf8",
  });
  const pages = existsSync(out) ? readdirSync(out).filter((f) => f.endsWith(".md")) : [];
  if (r.status !== 0) {
    failed++;
    console.log(`FAIL api reference: api-documenter exited ${r.status}: ${r.stderr}`);
  } else if (!pages.includes("index.md")) {
    failed++;
    console.log(`FAIL api reference: no docs/api/index.md among ${pages.length} pages`);
  } else {
    passed++;
    console.log(`ok   api reference (${pages.length} pages in docs/api; open docs/api/index.md)`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
