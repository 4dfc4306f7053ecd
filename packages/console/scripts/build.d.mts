/** Types of scripts/build.mjs (see there). */
export interface BuildConsoleOptions {
  /** Default packages/console/dist/assets. */
  readonly outdir?: string;
  /** Bundle the packages' src/ instead of dist/ (tests: no prior `tsc -b`). */
  readonly fromSource?: boolean;
}
export function buildConsole(options?: BuildConsoleOptions): Promise<{ outdir: string; bytes: number }>;
