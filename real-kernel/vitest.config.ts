import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string) => fileURLToPath(new URL(`../packages/${pkg}/src/index.ts`, import.meta.url));

// The real-kernel suite (`node scripts/real-kernel.mjs test`): separate from `pnpm test`, because it
// needs Go, PostgreSQL and a kernel checkout (REBUNO_KERNEL_SRC). Packages resolve to their sources.
export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  resolve: {
    alias: {
      "@rebuno/protocol": src("protocol"),
      "@rebuno/kernel-transport": src("kernel-transport"),
      "@rebuno/client": src("client"),
      "@rebuno/policy": src("policy"),
      "@rebuno/dev-kernel": src("dev-kernel"),
      "@rebuno/sdk": src("sdk"),
      "@rebuno/testing": src("testing"),
    },
  },
  test: {
    include: ["real-kernel/**/*.test.mjs"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: "forks",
    // Each file starts kernels (and PostgreSQL): one at a time on a small machine.
    fileParallelism: false,
  },
});
