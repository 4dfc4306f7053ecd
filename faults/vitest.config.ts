import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import base from "../vitest.config.js";

// The fault suite (`pnpm test:faults`): its own tests under faults/, plus the fault tests that live
// beside the code they prove (listed here so the suite is the one place that runs every fault row).
const root = fileURLToPath(new URL("..", import.meta.url));
// Not mergeConfig: it would concatenate the include lists and run the whole unit suite too.
export default defineConfig({
  root,
  resolve: base.resolve ?? {},
  test: {
    pool: "forks",
    restoreMocks: true,
    include: [
      "faults/**/*.test.ts",
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
    // Fault tests start kernels, agents and child processes: one file at a time keeps the
    // timings they depend on (leases, outages) honest on a 2-core machine.
    fileParallelism: false,
  },
});
