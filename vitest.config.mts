import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { TIERS, type Tier, tierOf } from "./test/tiers.mjs";

// Every test file, sorted into the tiers of test/tiers.mts: `npm test` runs the unit tier (on every core: the
// default leaves one free, which on two cores means one file at a time), `vitest run` (./sandbox test) all three.
const testDir = fileURLToPath(new URL("./test/", import.meta.url));
const files = readdirSync(testDir, { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split("\\").join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();
const filesOf = (tier: Tier) => files.filter((f) => tierOf(f) === tier);

/**
 * The unit tier's files share one module graph per worker (its import cost was 43% of the tier, paid again by every
 * file): they are pure, and what a file could leave behind for the next is undone after each test (spies, stubbed
 * environment and globals). A module mock (`vi.mock`) would outlive its file, so no unit file may use one
 * (test/cli/tiers.test.ts); Pulumi's mock monitor is set again by each file that uses it (test/helpers/pulumiMocks.ts).
 * The other tiers keep a process per file.
 */
const SHARED_MODULES = { isolate: false, restoreMocks: true, unstubEnvs: true, unstubGlobals: true } as const;

export default defineConfig({
  test: {
    setupFiles: ["test/setup-fast-check.ts", "test/setup-temp.ts"],
    // At the end of a run: job-folder disks a test left mounted are unmounted (test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    isolate: true,
    testTimeout: 120_000,
    reporters: ["default"],
    projects: TIERS.map((name) => ({
      extends: true,
      test: { name, include: filesOf(name), ...(name === "unit" ? SHARED_MODULES : {}) },
    })),
  },
});
