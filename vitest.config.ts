import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// The README's test command (`pnpm test`): every package's unit tests, the examples' tests and the
// repository checks under verify/tests. Tests import the packages' TypeScript sources (not dist), so
// `vitest run` needs no prior build. The other suites are projects of verify/vitest.config.ts.
export default defineConfig({
  resolve: {
    alias: {
      "@rebuno/protocol": src("protocol"),
      "@rebuno/kernel-transport": src("kernel-transport"),
      "@rebuno/client": src("client"),
      "@rebuno/policy": src("policy"),
      "@rebuno/dev-kernel": src("dev-kernel"),
      "@rebuno/dev": src("dev"),
      "@rebuno/sdk": src("sdk"),
      "@rebuno/testing": src("testing"),
      "@rebuno/cli": src("cli"),
      "@rebuno/console": src("console"),
      "@rebuno/test-kit": fileURLToPath(new URL("./verify/kit/src/index.ts", import.meta.url)),
      // The packages' "imports" conditions, Node side (their package.json maps them to dist/).
      "#crypto": fileURLToPath(new URL("./packages/protocol/src/crypto-node.ts", import.meta.url)),
      "#engine": fileURLToPath(new URL("./packages/kernel-transport/src/engine-node.ts", import.meta.url)),
    },
  },
  test: {
    include: [
      "packages/*/test/**/*.test.ts",
      "examples/*/test/**/*.test.ts",
      "verify/tests/**/*.test.ts",
      "verify/kit/test/**/*.test.ts",
    ],
    // Browser tests need Chromium: `pnpm test:browser` (the browser project of verify/vitest.config.ts) runs them.
    exclude: ["**/node_modules/**", "verify/tests/browser/**", "packages/*/test/**/*.browser.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most files wait on child processes, sockets and timers rather than the CPU, so one worker more
    // than there are cores keeps the CPU busy. Vitest's default (cores − 1) ran one file at a time on a
    // 2-core machine: 273 s → 132 s for the same 2,048 tests.
    maxWorkers: availableParallelism() + 1,
    restoreMocks: true,
  },
});
