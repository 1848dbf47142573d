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

export default defineConfig({
  test: {
    setupFiles: ["test/setup-fast-check.ts"],
    // At the end of a run: job-folder disks a test left mounted are unmounted (test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    // Pulumi's mock monitor is process-wide state: each test file gets its own process.
    pool: "forks",
    isolate: true,
    testTimeout: 120_000,
    reporters: ["default"],
    projects: TIERS.map((name) => ({ extends: true, test: { name, include: filesOf(name) } })),
  },
});
