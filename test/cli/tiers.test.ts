// The test tiers (test/tiers.mts): each file is in one tier, a unit test reaches no engine helper, and each file
// named as an exception needs what its tier says.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.mjs";
import {
  DOCKER_TESTS,
  ENGINE_TESTS,
  ORACLE_TESTS,
  STACK_TESTS,
  TIERS,
  tierOf,
  UNIT_FOLDERS,
} from "../tiers.mjs";

const repo = join(__dirname, "../..");
const testFiles = readdirSync(join(repo, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split("\\").join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();

/** What a test module can reach that needs more than Node, by the local module that provides it. */
const NEEDS: readonly [RegExp, string][] = [
  [/^test\/helpers\/goOracle\.ts$/, "go"],
  [/^test\/helpers\/(docker|dockerEngine)\.ts$/, "engine"],
  [/^test\/(engine|stacks-engine)\//, "engine"],
  [/^test\/(engine|stacks-engine)\//, "toolchain"],
  [/^test\/engine\//, "kube"],
];

/** What in a test module's text says it needs a part of Kubernetes the toolchain builds. */
const KUBE_TEXT: readonly RegExp[] = [
  /kube-apiserver|kubelet|\bkwok\b|requireEngineToolchain|KubeLauncher/,
  /sandbox:backend: kubernetes|backend: "kubernetes"|kubernetes-plugin/,
  /\bgoOracle\b|"go",\s*\[/,
];

/**
 * What in a test module's text says it needs a part the toolchain builds: gVisor's runtime, the Kubernetes control
 * plane or node, PostgreSQL, the toolchain's own scripts (they build what is missing), Go.
 */
const TOOLCHAIN_TEXT: readonly RegExp[] = [
  /\brunsc\b/,
  /kube-apiserver|kubelet|\bkwok\b/,
  /postgres/i,
  /toolchain\/(setup|runsc|postgres)(\.sh|\/)/,
  /\bgoOracle\b|"go",\s*\[/,
];

/** The test modules a file imports, directly or through other test modules (production modules are not followed). */
function testModulesReached(file: string): Set<string> {
  const seen = new Set<string>();
  const pending = [file];
  for (let f = pending.pop(); f !== undefined; f = pending.pop()) {
    if (seen.has(f)) continue;
    seen.add(f);
    const text = readFileSync(join(repo, f), "utf8");
    for (const m of text.matchAll(/(?:^import(?! type)[^;]*?from|\bimport\(|\brequire\() *"(\.[^"]+)"/gm)) {
      const base = join(dirname(f), m[1] ?? "");
      const found = [base, `${base}.ts`, base.replace(/\.mjs$/, ".mts"), join(base, "index.ts")].find(
        (c) => /\.m?ts$/.test(c) && existsSync(join(repo, c)),
      );
      if (found?.startsWith("test/")) pending.push(found);
    }
  }
  return seen;
}

/** Whether a test file or a test module it reaches says one of `texts`. */
function says(file: string, texts: readonly RegExp[]): boolean {
  return [...testModulesReached(file)].some((m) => {
    const text = readFileSync(join(repo, m), "utf8");
    return texts.some((re) => re.test(text));
  });
}

/** Whether a test file or a test module it reaches names a part the toolchain builds. */
const namesToolchain = (file: string) => says(file, TOOLCHAIN_TEXT);

/** What a test file needs besides Node, judged by the test modules it reaches and what they call. */
function needs(file: string): Set<string> {
  const out = new Set<string>();
  for (const m of testModulesReached(file)) {
    for (const [re, need] of NEEDS) if (re.test(m)) out.add(need);
    const text = readFileSync(join(repo, m), "utf8");
    if (/^import (?!type)[^;]*from "@pulumi\/pulumi\/automation"/m.test(text)) {
      out.add("engine");
      out.add("toolchain");
    }
  }
  return out;
}

describe("the test tiers", () => {
  it("find test files to sort", () => {
    expect(testFiles.length).toBeGreaterThan(50);
  });

  it.each(testFiles.filter((f) => tierOf(f) === "unit"))(
    "unit test %s reaches no engine and no Go",
    (file) => {
      expect([...needs(file)]).toEqual([]);
    },
  );

  it.each(ORACLE_TESTS)("%s, named an oracle test, exists and builds a Go oracle", (file) => {
    expect(testFiles).toContain(file);
    expect(needs(file)).toContain("go");
  });

  it.each(ENGINE_TESTS)("%s, named an engine test, exists and reaches an engine", (file) => {
    expect(testFiles).toContain(file);
    expect(needs(file)).toContain("engine");
  });

  it.each(DOCKER_TESTS)(
    "%s, named a Docker test, exists and reaches nothing the toolchain builds",
    (file) => {
      expect(testFiles).toContain(file);
      expect(tierOf(file)).toBe("docker");
      expect(needs(file)).not.toContain("toolchain");
      expect(needs(file)).not.toContain("go");
      expect(namesToolchain(file)).toBe(false);
    },
  );

  it.each(STACK_TESTS)("%s, named a stack test, exists and reaches nothing of Kubernetes", (file) => {
    expect(testFiles).toContain(file);
    expect(tierOf(file)).toBe("stack");
    expect(needs(file)).not.toContain("kube");
    expect(needs(file)).not.toContain("go");
    expect(says(file, KUBE_TEXT)).toBe(false);
  });

  it("tells a test that needs Kubernetes from one that needs the first builds only", () => {
    // Negative controls: the control plane's tests, a benchmark that asks for the whole engine toolchain, the scale
    // test's simulated nodes.
    for (const file of [
      "test/engine/engine.test.ts",
      "test/runtime/bench-preview.test.ts",
      "test/scale/many-launchers.test.ts",
    ])
      expect(needs(file).has("kube") || says(file, KUBE_TEXT)).toBe(true);
  });

  it("tells a test that needs what the toolchain builds from one that needs only Docker", () => {
    // Negative controls: files that need gVisor, the Pulumi engine, PostgreSQL or a Go oracle.
    for (const file of [
      "test/runtime/gvisor.test.ts",
      "test/stacks-engine/front.test.ts",
      "test/postgres/stores.test.ts",
      "test/policy/engine-json.test.ts",
    ])
      expect(namesToolchain(file) || needs(file).has("toolchain") || needs(file).has("go")).toBe(true);
  });

  it("names as exceptions only files of the unit folders, where the folder would say unit", () => {
    for (const file of [...ORACLE_TESTS, ...ENGINE_TESTS]) expect(UNIT_FOLDERS).toContain(file.split("/")[1]);
  });

  it("sorts the node folders' files into the node tier", () => {
    expect(tierOf("test/kube-node/kube-node.test.ts")).toBe("node");
  });

  it("sorts a file of a folder it does not know into the engine tier", () => {
    expect(tierOf("test/new-folder/x.test.ts")).toBe("engine");
    expect(tierOf("test/x.test.ts")).toBe("engine");
    expect(tierOf("test/model/x.test.ts")).toBe("unit");
  });

  it("gives vitest one project per tier that together hold every test file once", () => {
    const projects = (config.test?.projects ?? []) as { test: { name: string; include: string[] } }[];
    expect(projects.map((p) => p.test.name)).toEqual([...TIERS]);
    expect(projects.flatMap((p) => p.test.include).sort()).toEqual(testFiles);
  });

  it("lets the unit tier's files share modules, which none of them mocks, and undoes spies and stubs after each test", () => {
    const projects = (config.test?.projects ?? []) as { test: { name: string; isolate?: boolean } }[];
    const unit = projects.find((p) => p.test.name === "unit")?.test;
    expect(unit).toMatchObject({ isolate: false, restoreMocks: true, unstubEnvs: true, unstubGlobals: true });
    expect(projects.filter((p) => p.test.isolate === false).map((p) => p.test.name)).toEqual(["unit"]);
    const mocking = testFiles
      .filter((f) => tierOf(f) === "unit")
      .filter((f) => /\bvi\.(?:mock|doMock|unmock|doUnmock)\(/.test(readFileSync(join(repo, f), "utf8")));
    expect(mocking).toEqual([]);
  });

  it("npm test runs the unit tier, and ./sandbox test (toolchain/test.sh) every tier", () => {
    const scripts = (
      JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.test).toMatch(/^vitest run --project unit( |$)/);
    const testSh = readFileSync(join(repo, "toolchain", "test.sh"), "utf8");
    const vitest = testSh
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^(?:nice -n 5 )?vitest /.test(line));
    // With arguments, one run of what they name; without, every tier exactly once, each as soon as what it needs is
    // built: the docker tier from the start; the stack, engine and node tiers each after its stage of the builds; the
    // unit and oracle tiers beside the node tier. Only the tiers that mostly wait (on the engine, on the node) have
    // others beside them, and those run below the priority of the tests they yield to, never at the lowest
    // (`beside`), where a starved test passes its timeout.
    expect(vitest).toHaveLength(6);
    expect(vitest[0]).toMatch(/^vitest run /);
    expect(vitest[0]).not.toContain("--project");
    const projectsOf = (line: string) => [...line.matchAll(/--project (\S+)/g)].map((m) => m[1]).sort();
    const runs = vitest.slice(1).map(projectsOf);
    expect(runs.flat().sort()).toEqual([...TIERS].sort());
    expect(runs).toEqual([["docker"], ["stack"], ["engine"], ["oracle", "unit"], ["node"]]);
    expect(vitest.slice(1).map((line) => line.startsWith("nice -n 5 "))).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(testSh).not.toMatch(/^\s*(?:\S+=\S+ )*beside (?:vitest|tsc|biome)/m);
    // Each tier after what it needs: the stack tier after the docker tier and the first stage, the engine tier after
    // the second, the node tier (and the CPU tiers beside it) after the third; with arguments, after all three.
    const lines = testSh.split("\n").map((line) => line.trim());
    const at = (line: string) => lines.findIndex((l) => l.includes(line) && !l.startsWith("#"));
    const stage = (n: number) => lines.lastIndexOf(`wait_stage ${n}`);
    expect(lines.indexOf("wait_stage 3")).toBeLessThan(at('"$@" || status=1'));
    expect(at("--project docker")).toBeLessThan(stage(1));
    expect(at('wait "$docker_tier_pid"')).toBeLessThan(at("--project stack"));
    expect(stage(1)).toBeLessThan(at("--project stack"));
    expect(at("--project stack")).toBeLessThan(stage(2));
    expect(stage(2)).toBeLessThan(at("--project engine"));
    expect(at("--project engine")).toBeLessThan(stage(3));
    expect(stage(3)).toBeLessThan(at("--project unit"));
    expect(at("--project unit")).toBeLessThan(at("--project node"));
    expect(at("--project node")).toBeLessThan(at('wait "$cpu_tiers_pid"'));
    expect(testSh).toContain('beside() { nice -n 19 "$@"; }');
  });
});
