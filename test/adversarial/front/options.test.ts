/**
 * Class 11: options that contradict each other are refused (exit 2) naming both, never settled by the last
 * one silently: `--preset sandbox --preset baseline` would let a wrapper's option undo the stricter one, and a
 * `--preset` other than the config's `"preset"` would weaken the repository's config. The same value twice is fine.
 * The usage and the README name every preset, `gvisor` included.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SCAN_USAGE } from "../../../cli/scan";
import { PRESETS } from "../../../policy/presets";
import { ROOT, scan, tempFiles } from "../../scan/helpers";
import { pod } from "../fixtures";

const SEED = { seed: 20_260_313, numRuns: 40 };

/** A pod with a writable root: only the `sandbox` and `gvisor` presets make that mandatory. */
const RW = pod("rw", { securityContext: 'allowPrivilegeEscalation: false\ncapabilities:\n  drop: ["ALL"]' });

/** Each single-valued option with two values it accepts. */
const OPTIONS: readonly [string, string, string][] = [
  ["--preset", "sandbox", "baseline"],
  ["--format", "json", "text"],
  ["--stdin-name", "a.yaml", "b.yaml"],
  ["--category", "a/", "b/"],
  ["--max-file-size", "1M", "2M"],
  ["--max-total-size", "10M", "20M"],
  ["--max-depth", "100", "200"],
  ["--output", "a.out", "b.out"],
];

describe("class 11: contradicting options", () => {
  it("a single-valued option given twice with two values is exit 2, naming both, in either spelling", async () => {
    const dir = tempFiles({ "rw.yaml": RW });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPTIONS),
        fc.boolean(),
        fc.boolean(),
        async ([flag, a, b], eqA, eqB) => {
          const spell = (v: string, eq: boolean) => (eq ? [`${flag}=${v}`] : [flag, v]);
          const r = await scan([...spell(a, eqA), ...spell(b, eqB), "rw.yaml"], undefined, dir);
          expect(r.code, r.err).toBe(2);
          expect(r.err).toContain(
            `${flag} ${JSON.stringify(a)} and ${flag} ${JSON.stringify(b)} contradict each other`,
          );
          // The same value twice is no contradiction.
          const same = await scan(
            [...spell(a, eqA), ...spell(a, eqB), "--format", "json", "rw.yaml"],
            undefined,
            dir,
          );
          expect(same.err).not.toContain("contradict");
        },
      ),
      SEED,
    );
    const both = await scan(["--fail-on-unjudged", "--no-fail-on-unjudged", "rw.yaml"], undefined, dir);
    expect(both.code).toBe(2);
    expect(both.err).toContain("--fail-on-unjudged and --no-fail-on-unjudged contradict each other");
  });

  it("the attacker's report: --preset sandbox --preset baseline no longer passes a writable root", async () => {
    const dir = tempFiles({ "rw.yaml": RW, "base.json": JSON.stringify({ preset: "baseline" }) });
    expect((await scan(["--preset", "sandbox", "rw.yaml"], undefined, dir)).code).toBe(1);
    expect((await scan(["--preset", "baseline", "rw.yaml"], undefined, dir)).code).toBe(0);
    expect(
      (await scan(["--preset", "sandbox", "--preset", "baseline", "rw.yaml"], undefined, dir)).code,
    ).toBe(2);
    for (const p of PRESETS) {
      const r = await scan(["--preset", p, "--config", "base.json", "rw.yaml"], undefined, dir);
      if (p === "baseline") expect(r.code).toBe(0);
      else {
        expect(r.code).toBe(2);
        expect(r.err).toContain(`preset = "baseline" contradicts --preset ${p}`);
      }
    }
  });

  it("the usage and the README name every preset", () => {
    const readme = readFileSync(join(ROOT, "cli", "scan", "README.md"), "utf8");
    for (const p of PRESETS) {
      expect(SCAN_USAGE).toContain(p);
      expect(readme).toContain(`| \`${p}\``);
    }
    expect(readme).toContain(`--preset ${PRESETS.join("|")}`);
    expect(SCAN_USAGE).not.toContain("sandbox (strictest)");
  });
});
