/** Types of verify/runtimes/bundle.mjs (see there). */
export interface BrowserBundle {
  readonly code: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Every input file esbuild used. */
  readonly inputs: readonly string[];
}
export interface BundleOptions {
  readonly fromSource?: boolean;
  readonly minify?: boolean;
}
export function bundleForBrowser(contents: string, options?: BundleOptions): Promise<BrowserBundle>;
export function bundleClient(options?: BundleOptions): Promise<BrowserBundle>;
