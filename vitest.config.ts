import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// Tests import the packages' TypeScript sources (not dist), so `vitest run` needs no prior build.
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
      // The packages' "imports" conditions, Node side (their package.json maps them to dist/).
      "#crypto": fileURLToPath(new URL("./packages/protocol/src/crypto-node.ts", import.meta.url)),
      "#engine": fileURLToPath(new URL("./packages/kernel-transport/src/engine-node.ts", import.meta.url)),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "tests/**/*.test.ts"],
    // Browser tests need Chromium: `pnpm test:browser` (vitest.browser.config.ts) runs them.
    exclude: ["**/node_modules/**", "tests/browser/**", "packages/*/test/**/*.browser.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    restoreMocks: true,
  },
});
