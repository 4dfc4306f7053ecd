/** Types of scripts/build.mjs (see there). */
export interface BuildConsoleOptions {
  /** Default packages/console/dist/assets. */
  readonly outdir?: string;
  /** Bundle the packages' src/ instead of dist/ (tests: no prior `tsc -b`). */
  readonly fromSource?: boolean;
}
export function buildConsole(options?: BuildConsoleOptions): Promise<{
  outdir: string;
  /** console.js. */
  bytes: number;
  /** index.html + console.css + console.js, raw and gzipped (level 9). */
  totalBytes: number;
  gzippedBytes: number;
}>;
/** esbuild plugin mapping packages/<pkg>/dist/<file>.js to packages/<pkg>/src/<file>.ts. */
export const distToSource: import("esbuild").Plugin;
