#!/usr/bin/env node
// The public API of every published package, as api-extractor reports in api/<package>.api.md.
//
//   node scripts/api-report.mjs           # check: fails when an export changed without its report
//   node scripts/api-report.mjs --update  # rewrite the reports (commit them with the change)
//
// Reads each package's dist/index.d.ts, so it needs a prior `tsc -b`. A changed report in a pull
// request is the API change to review. The same run renders the API reference (api-documenter, from
// the doc model api-extractor writes) into docs/api/; in check mode the rendered pages must equal the
// committed ones. The last line is `N passed, M failed`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const update = process.argv.includes("--update");
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
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  if (result.succeeded) {
    passed++;
    console.log(`ok   ${pkg.name}${result.apiReportChanged ? " (report updated)" : ""}`);
  } else {
    failed++;
    console.log(
      `FAIL ${pkg.name}: ${result.apiReportChanged ? "the API changed: run `pnpm api:update` and commit api/" : `${result.errorCount} errors`}`,
    );
  }
}
// The API reference: rendered from the doc models into docs/api (update) or a temp folder (check).
{
  const models = path.join(ROOT, ".tmp/api-model");
  const docsApi = path.join(ROOT, "docs/api");
  const out = update ? docsApi : mkdtempSync(path.join(tmpdir(), "rebuno-api-docs-"));
  if (update) rmSync(docsApi, { recursive: true, force: true });
  const documenter = path.join(ROOT, "node_modules/@microsoft/api-documenter/bin/api-documenter");
  const r = spawnSync(process.execPath, [documenter, "markdown", "-i", models, "-o", out], {
    encoding: "utf8",
  });
  const pages = (dir) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(".md"))
          .sort()
      : [];
  const same =
    r.status === 0 &&
    JSON.stringify(pages(out)) === JSON.stringify(pages(docsApi)) &&
    pages(out).every(
      (f) => readFileSync(path.join(out, f), "utf8") === readFileSync(path.join(docsApi, f), "utf8"),
    );
  if (r.status !== 0) {
    failed++;
    console.log(`FAIL api reference: api-documenter exited ${r.status}: ${r.stderr}`);
  } else if (!same) {
    failed++;
    console.log("FAIL api reference: docs/api is out of date: run `pnpm api:update` and commit docs/api/");
  } else {
    passed++;
    console.log(`ok   api reference (${pages(out).length} pages in docs/api)`);
  }
  if (!update) rmSync(out, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
