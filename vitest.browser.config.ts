import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The browser suite (`pnpm test:browser`): tests that drive a real headless Chromium (Debian's
// `chromium`, at /usr/bin/chromium or REBUNO_CHROMIUM). Kept out of `pnpm test`, which must pass on
// a fresh machine with nothing but Node installed; `.ci/run` installs Chromium and runs both.
export default defineConfig({
  resolve: base.resolve ?? {},
  test: {
    include: ["tests/browser/**/*.test.ts", "packages/*/test/**/*.browser.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    restoreMocks: true,
    fileParallelism: false,
  },
});
