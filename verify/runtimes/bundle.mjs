// Browser bundles of the packages, built with esbuild exactly as a web app's bundler would: the
// packages' own package.json "exports"/"imports" conditions pick the browser side (`#engine` →
// engine-web.js, `#crypto` → crypto-web.js). Used by verify/runtimes/run.mjs and verify/tests/runtimes/.
//
//   node verify/runtimes/bundle.mjs            prints the gzipped size of @rebuno/client for browsers
//
// `fromSource: true` bundles packages/*/src (the same files the conditions pick, as TypeScript),
// so tests need no prior `tsc -b`; the default bundles dist/, what npm would ship.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { distToSource } from "../../packages/console/scripts/build.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Bundle `contents` (an ES module importing the packages) for `platform: "browser"`. Fails on any
 * input outside the allowed browser graph: `node:*` builtins and undici cannot even resolve on
 * this platform, and the check below names the offending file if a package starts pulling one in.
 */
export async function bundleForBrowser(contents, { fromSource = false, minify = true } = {}) {
  const result = await build({
    // Resolved from inside packages/client, whose dependencies are the published graph.
    stdin: { contents, resolveDir: `${root}packages/client`, sourcefile: "entry.mjs", loader: "js" },
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify,
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: fromSource ? [distToSource] : [],
  });
  const inputs = Object.keys(result.metafile.inputs);
  const forbidden = inputs.filter((p) => /(^|\/)node:|\/undici\/|\/node_modules\/.*\/(zod)\//.test(p));
  if (forbidden.length > 0) throw new Error(`browser bundle pulls in ${forbidden.join(", ")}`);
  const code = result.outputFiles[0].contents;
  return {
    code: new TextDecoder().decode(code),
    bytes: code.length,
    gzipBytes: gzipSync(code).length,
    inputs,
  };
}

/** The browser bundle of `@rebuno/client` (its whole public API). */
export function bundleClient(options) {
  return bundleForBrowser('export * from "@rebuno/client";', options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { version } = JSON.parse(readFileSync(`${root}packages/client/package.json`, "utf8"));
  const { bytes, gzipBytes } = await bundleClient({ fromSource: process.argv.includes("--source") });
  console.log(
    `@rebuno/client ${version} browser bundle: ${(bytes / 1024).toFixed(1)} kB minified, ` +
      `${(gzipBytes / 1024).toFixed(1)} kB gzipped`,
  );
}
