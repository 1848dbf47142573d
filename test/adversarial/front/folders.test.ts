/**
 * Class 10: folders the scan skips by name. `kubectl apply -R -f k8s/` skips none (k8s.io/cli-runtime
 * pkg/resource/visitor.go `ExpandPathsToFileVisitors`: `filepath.Walk` into every sub-folder, keeping `.json`,
 * `.yaml` and `.yml`), so a privileged Pod under `k8s/node_modules/` or `k8s/.git/` is applied. The scan still skips
 * `.git` and `node_modules` (installed packages and an object store are not the project's manifests, and can be
 * huge), but it lists the first such file it finds in them, and with `--fail-on-unjudged` (on with `--ci`) a
 * skipped folder holding one fails the scan (exit 2): what it cannot judge counts. Naming the folder scans all of it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pod } from "../fixtures";
import { scanFiles } from "../harness";

const SEED = { seed: 20_260_313, numRuns: 30 };
const PRIV = pod("evil", { containerSecurity: "privileged: true" });
const OK = pod("ok");

/** Where in a skipped folder a manifest may sit, and how its name is spelled. */
const placement = fc.record({
  folder: fc.constantFrom("node_modules", ".git", "sub/node_modules", "a/b/.git"),
  depth: fc.array(fc.constantFrom("pkg", "x", ".cache", "node_modules"), { maxLength: 3 }),
  ext: fc.constantFrom(".yaml", ".yml", ".json", ".YAML"),
  // Without CI mode spelled out (CI=true in the environment turns it on).
  ci: fc.constantFrom<readonly string[]>(["--ci"], ["--fail-on-unjudged"], ["--no-fail-on-unjudged"]),
});

describe("class 10: .git and node_modules hold files kubectl would apply", () => {
  it("listed with the file without --ci, an error with it, and judged when the folder is named", async () => {
    await fc.assert(
      fc.asyncProperty(placement, async ({ folder, depth, ext, ci }) => {
        const at = ["k8s", folder, ...depth, `evil${ext}`].join("/");
        const text = ext === ".json" ? JSON.stringify({ apiVersion: "v1", kind: "Pod" }) : PRIV;
        const files = { "k8s/ok.yaml": OK, [at]: text, [`k8s/${folder}/README.md`]: "# a package\n" };
        const r = await scanFiles(files, ci, ["k8s"]);
        const top = `k8s/${folder}`;
        if (ci[0] !== "--no-fail-on-unjudged") {
          expect(r.code).toBe(2);
          const e = r.report.errors.find((x) => x.location.file === top);
          expect(e?.message).toContain("`kubectl apply -R` would apply");
          expect(e?.message).toContain("--no-fail-on-unjudged");
        } else {
          expect(r.code).toBe(0);
          const s = r.report.skipped.find((x) => x.location.file === top);
          expect(s?.reason).toContain("k8s/");
          expect(s?.reason).toContain("`kubectl apply -R` would apply");
        }
        // The one file found is named (in this tree it is the only one).
        const said = [
          ...r.report.errors.map((x) => x.message),
          ...r.report.skipped.map((x) => x.reason),
        ].join("\n");
        expect(said).toContain(at);
        if (ext !== ".json") {
          const named = await scanFiles(files, ["--no-fail-on-unjudged"], [top]);
          expect(named.code).toBe(1);
          expect(named.report.findings.some((f) => f.ruleId === "sandbox-disallow-privileged")).toBe(true);
        }
      }),
      SEED,
    );
  }, 120_000);

  it("a skipped folder without such files is only listed, also with --ci (no new failure)", async () => {
    const files = {
      "k8s/ok.yaml": OK,
      "k8s/node_modules/pkg/index.js": "module.exports = 1;\n",
      "k8s/.git/objects/ab/cdef0123": "x",
      "k8s/.git/HEAD": "ref: refs/heads/main\n",
    };
    for (const ci of [[], ["--ci"]]) {
      const r = await scanFiles(files, ci, ["k8s"]);
      expect(r.code).toBe(0);
      expect(r.report.skipped.map((s) => s.reason)).toEqual([
        "a Git object store, not the project's files; not scanned (it holds no .yaml, .yml or .json file)",
        "installed packages, not the project's files; not scanned (it holds no .yaml, .yml or .json file)",
      ]);
    }
    // --no-fail-on-unjudged after --ci lists it again.
    const off = await scanFiles(
      { "k8s/ok.yaml": OK, "k8s/node_modules/evil.yaml": PRIV },
      ["--ci", "--no-fail-on-unjudged"],
      ["k8s"],
    );
    expect(off.code).toBe(0);
  });
});
