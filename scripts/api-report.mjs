#!/usr/bin/env node
// The public API of every published package, as api-extractor reports in api/<package>.api.md.
//
//   node scripts/api-report.mjs           # check: fails when an export changed without its report
//   node scripts/api-report.mjs --update  # rewrite the reports (commit them with the change)
//
// Reads each package's dist/index.d.ts, so it needs a prior `tsc -b`. A changed report in a pull
// request is the API change to review; the last line is `N passed, M failed`.
import { existsSync, readdirSync, readFileSync } from "node:fs";
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
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
