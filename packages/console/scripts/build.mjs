// Bundles the console page (app/) into dist/assets/: index.html, console.css and console.js (preact
// and @rebuno/client's browser side, minified, no CDN). Run after `tsc -b` (the default bundles the
// packages' dist/, as npm ships them), or with `--from-source` to bundle packages/*/src directly.
//
//   node packages/console/scripts/build.mjs [--from-source]
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const pkg = fileURLToPath(new URL("../", import.meta.url));

/**
 * esbuild plugin: maps a resolved packages/<pkg>/dist/<file>.js to packages/<pkg>/src/<file>.ts, so
 * tests bundle the sources without a prior `tsc -b` (also used by verify/runtimes/bundle.mjs).
 */
export const distToSource = {
  name: "rebuno-dist-to-source",
  setup(b) {
    b.onResolve({ filter: /^(@rebuno\/|#)/ }, async (args) => {
      if (args.pluginData === "inner") return undefined;
      const r = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "inner",
      });
      if (r.errors.length > 0) return { errors: r.errors };
      const m = /^(.*\/packages\/[^/]+\/)dist\/(.+)\.js$/.exec(r.path);
      return { ...r, path: m === null ? r.path : `${m[1]}src/${m[2]}.ts` };
    });
  },
};

/** The files the page loads. */
const ASSETS = ["index.html", "console.css", "console.js"];

/**
 * Build the assets into `outdir` (default packages/console/dist/assets). Returns console.js's size
 * (`bytes`) and, for everything the page loads, the raw and gzipped totals (the budget is 60 kB
 * gzipped, docs/console.md).
 */
export async function buildConsole({ outdir = `${pkg}dist/assets`, fromSource = false } = {}) {
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [`${pkg}app/main.ts`],
    outfile: `${outdir}/console.js`,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    metafile: true,
    logLevel: "warning",
    plugins: fromSource ? [distToSource] : [],
    // The client loads the optional OpenTelemetry API at run time; the page records no spans, so
    // the API is never bundled (docs/observability.md §1.4).
    external: ["@opentelemetry/api"],
  });
  copyFileSync(`${pkg}app/index.html`, `${outdir}/index.html`);
  copyFileSync(`${pkg}app/console.css`, `${outdir}/console.css`);
  const files = ASSETS.map((name) => readFileSync(`${outdir}/${name}`));
  return {
    outdir,
    bytes: Object.values(result.metafile.outputs)[0].bytes,
    totalBytes: files.reduce((n, f) => n + f.length, 0),
    gzippedBytes: files.reduce((n, f) => n + gzipSync(f, { level: 9 }).length, 0),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { outdir, bytes, totalBytes, gzippedBytes } = await buildConsole({
    fromSource: process.argv.includes("--from-source"),
  });
  process.stdout.write(
    `console assets in ${outdir} (console.js ${bytes} bytes; all assets ${totalBytes} bytes, ${gzippedBytes} gzipped)\n`,
  );
}
