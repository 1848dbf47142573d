import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup-fast-check.ts"],
    // Pulumi's mock monitor is process-wide state: each test file gets its own process.
    pool: "forks",
    isolate: true,
    testTimeout: 120_000,
    reporters: ["default"],
  },
});
