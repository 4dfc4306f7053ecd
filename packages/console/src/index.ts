/**
 * The Rebuno web console, as static files: `rebuno-dev` serves them at `/` of the dev kernel
 * (`startDevKernel({ staticAssets: consoleAssetsDir() })`), and any static server can serve them
 * against another kernel with `?kernel=URL` (that kernel then needs CORS for the page's origin).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ConfigurationError } from "@rebuno/protocol";

/**
 * The directory holding the built console (`index.html`, `console.js`, `console.css`). Throws a
 * `ConfigurationError` naming the build command when the bundle was not built.
 */
export function consoleAssetsDir(): string {
  // Same path from src/ (tests) and dist/ (published): both sit next to dist/.
  const dir = fileURLToPath(new URL("../dist/assets/", import.meta.url));
  if (!existsSync(`${dir}index.html`)) {
    throw new ConfigurationError(
      `the console is not built (no ${dir}index.html): run node packages/console/scripts/build.mjs`,
    );
  }
  return dir;
}

/** {@link consoleAssetsDir}, or `undefined` when the console was not built. */
export function builtConsoleAssetsDir(): string | undefined {
  try {
    return consoleAssetsDir();
  } catch (err) {
    if (ConfigurationError.isInstance(err)) return undefined;
    throw err;
  }
}
