import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import unit from "../vitest.config.js";

// The suites that are not one package's unit tests, one project each, run by their own scripts:
//   faults       `pnpm test:faults` (scripts/test-faults.mjs): verify/faults/ plus the fault tests
//                that live beside the code they prove, so the suite is the one place that runs every row
//   real-kernel  `pnpm test:real-kernel` (scripts/real-kernel.mjs): needs Go, PostgreSQL and a kernel checkout
//   browser      `pnpm test:browser`: headless Chromium (Debian's `chromium`, or REBUNO_CHROMIUM)
// None of them is in `pnpm test`, which must pass on a fresh machine with nothing but Node. Each
// starts kernels and child processes: one file at a time keeps their timings (leases, outages)
// honest on a small machine. Packages resolve to their sources, as in the unit suite.
const root = fileURLToPath(new URL("..", import.meta.url));
const shared = { pool: "forks", restoreMocks: true, fileParallelism: false } as const;

export default defineConfig({
  root,
  resolve: unit.resolve ?? {},
  test: {
    projects: [
      {
        extends: true,
        test: {
          ...shared,
          name: "faults",
          include: [
            "verify/faults/**/*.test.ts",
            "packages/sdk/test/crash-redelivery.test.ts",
            "packages/sdk/test/delivery.test.ts",
            "packages/dev-kernel/test/restart.test.ts",
            "packages/dev-kernel/test/sqlite-failures.test.ts",
            "packages/dev-kernel/test/bad-input.test.ts",
            "packages/dev-kernel/test/sqlite-damage.test.ts",
            "packages/dev-kernel/test/http-rejections.test.ts",
            "packages/policy/test/regex.test.ts",
            "packages/sdk/test/integration/kernel-outage.test.ts",
            "packages/sdk/test/webhook-fuzz.test.ts",
          ],
          testTimeout: 180_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: "real-kernel",
          include: ["verify/real-kernel/**/*.test.mjs"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: "browser",
          include: ["verify/tests/browser/**/*.test.ts", "packages/*/test/**/*.browser.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
