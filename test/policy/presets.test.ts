/**
 * Presets: `baseline` (Pod Security baseline's rules mandatory), `restricted` (baseline and restricted's), `sandbox`
 * (every rule mandatory), the same in `scan` (`--preset`, `"preset"` in `--config`) and in the CrossGuard pack
 * (`packArgs({ preset })`, and `--policy-pack-config` as `scan --print-pack-config` writes it, read by the Pulumi
 * CLI's own config reader, test/oracles/packconfig).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { readScanConfig } from "../../cli/scan/config";
import { SCAN_RULES } from "../../cli/scan/run";
import { PRESETS, type Preset } from "../../policy/presets";
import { packArgs } from "../../policy/pulumi/pack";
import type { EnforcementLevel } from "../../policy/rules/types";
import { runOracle } from "../helpers/goOracle";
import { scan, scanJson, tempFiles } from "../scan/helpers";
import { copy, safeK8sContainer, safePodSpec } from "./fixtures";
import { validate } from "./harness";

const ALL_IDS = SCAN_RULES.map((r) => r.id);

/** The rules answering a Pod Security baseline check (crosswalk.psa), by id. */
const BASELINE_MANDATORY = [
  "sandbox-disallow-added-capabilities",
  "sandbox-disallow-devices",
  "sandbox-disallow-exposed-ports",
  "sandbox-disallow-host-namespaces",
  "sandbox-disallow-host-path-claims",
  "sandbox-disallow-host-probes",
  "sandbox-disallow-privileged",
  "sandbox-disallow-runtime-socket",
  "sandbox-disallow-sensitive-host-mounts",
  "sandbox-disallow-sysctls",
  "sandbox-disallow-unconfined-lsm",
  "sandbox-disallow-unconfined-seccomp",
  "sandbox-disallow-unmasked-proc",
  "sandbox-disallow-volume-types",
  "sandbox-require-single-job-mount",
];
/** Under every preset: the mission walls and the rules that fail closed on what no other rule reads. */
const ALWAYS_MANDATORY = [
  "sandbox-disallow-linked-credentials",
  "sandbox-disallow-secret-flow",
  "sandbox-disallow-unjudged-fields",
  "sandbox-disallow-unjudged-references",
  "sandbox-disallow-unjudged-workloads",
  "sandbox-require-drop-net-admin",
  "sandbox-require-readable-values",
];
/** Restricted adds the rules answering a restricted check. */
const RESTRICTED_MANDATORY = [
  ...BASELINE_MANDATORY,
  "sandbox-disallow-privilege-escalation",
  "sandbox-require-drop-all",
  "sandbox-require-non-root",
];

function levelsOf(preset: Preset | undefined, raw: unknown = {}): Record<string, EnforcementLevel> {
  return { ...readScanConfig(raw, SCAN_RULES, "test", preset === undefined ? {} : { preset }).levels };
}

function expectedLevels(preset: Preset): Record<string, EnforcementLevel> {
  return Object.fromEntries(
    ALL_IDS.map((id) => {
      if (preset === "sandbox" || preset === "gvisor")
        return [id, id === "sandbox-disallow-secret-env" ? "remediate" : "mandatory"];
      if (id === "sandbox-disallow-secret-env") return [id, "remediate"];
      const mandatory = [
        ...(preset === "baseline" ? BASELINE_MANDATORY : RESTRICTED_MANDATORY),
        ...ALWAYS_MANDATORY,
      ];
      return [id, mandatory.includes(id) ? "mandatory" : "advisory"];
    }),
  );
}

describe("the presets' levels", () => {
  it.each(PRESETS)("%s sets every rule's level from its Pod Security checks", (preset) => {
    expect(levelsOf(preset)).toEqual(expectedLevels(preset));
  });

  it("leaves today's levels when no preset is named", () => {
    expect(levelsOf(undefined)).toEqual(
      Object.fromEntries(SCAN_RULES.map((r) => [r.id, r.enforcementLevel])),
    );
  });

  it("lets the config's own levels win: a rule's entry, then all, then the preset", () => {
    const levels = levelsOf("sandbox", { all: "advisory", "sandbox-require-non-root": "disabled" });
    expect(levels["sandbox-require-non-root"]).toBe("disabled");
    expect(levels["sandbox-disallow-privileged"]).toBe("advisory");
  });

  it.each(PRESETS)("gives the pack (packArgs) the same levels as scan under %s", (preset) => {
    const pack = Object.fromEntries(packArgs({ preset }).policies.map((p) => [p.name, p.enforcementLevel]));
    expect(pack).toEqual(expectedLevels(preset));
  });
});

/** A Pod that runs as root with a writable root filesystem and no other fault. */
function rootPod(): string {
  const spec = copy(safePodSpec()) as { containers: Record<string, unknown>[]; securityContext?: object };
  const c = safeK8sContainer();
  c.securityContext = {
    ...(c.securityContext as object),
    runAsUser: 0,
    runAsNonRoot: false,
    readOnlyRootFilesystem: false,
  };
  spec.containers = [c];
  spec.securityContext = { ...(spec.securityContext ?? {}), runAsUser: 0, runAsNonRoot: false };
  return stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "root" }, spec });
}

/** A hardened Pod, under gVisor's RuntimeClass or not. */
function gvisorPod(runtimeClassName?: string): string {
  const spec = copy(safePodSpec()) as Record<string, unknown>;
  if (runtimeClassName !== undefined) spec.runtimeClassName = runtimeClassName;
  return stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec });
}

describe("the gvisor preset: every workload under gVisor", () => {
  const RULE = "sandbox-require-runtime-class";
  const dir = tempFiles({
    "plain.yaml": gvisorPod(),
    "gvisor.yaml": gvisorPod("gvisor"),
    "kata.yaml": gvisorPod("kata"),
    "compose.yaml": stringify({ services: { t: { image: "x:1", runtime: "runc" } } }),
    "compose-runsc.yaml": stringify({ services: { t: { image: "x:1", runtime: "runsc" } } }),
  });
  const blockingOf = async (file: string, args: string[]) => {
    const { report } = await scanJson([...args, file], undefined, dir);
    return report.findings.filter((f) => f.ruleId === RULE && f.level === "mandatory").map((f) => f.message);
  };

  it("fails a Pod without gVisor's RuntimeClass and passes one with it, in scan", async () => {
    expect(await blockingOf("plain.yaml", ["--preset", "gvisor"])).toEqual([
      "runtimeClassName is not set; allowed: runsc, gvisor [spec.runtimeClassName]",
    ]);
    expect(await blockingOf("kata.yaml", ["--preset", "gvisor"])).toEqual([
      "runtimeClassName is kata; allowed: runsc, gvisor [spec.runtimeClassName]",
    ]);
    expect(await blockingOf("gvisor.yaml", ["--preset", "gvisor"])).toEqual([]);
    // Without the preset the rule asks for nothing.
    expect(await blockingOf("plain.yaml", ["--preset", "sandbox"])).toEqual([]);
  });

  it("fails a Compose service under runc and passes one under runsc", async () => {
    expect(await blockingOf("compose.yaml", ["--preset", "gvisor"])).toEqual([
      "runtime is runc; allowed: runsc, gvisor [runtime]",
    ]);
    expect(await blockingOf("compose-runsc.yaml", ["--preset", "gvisor"])).toEqual([]);
  });

  it("gives the pack the same verdict, the allowed runtimes as the setting's default, and lets the config's own win", () => {
    const policy = packArgs({ preset: "gvisor" }).policies.find((p) => p.name === RULE);
    expect(policy?.enforcementLevel).toBe("mandatory");
    expect(
      (policy?.configSchema?.properties as Record<string, { default?: unknown }>)?.allowed?.default,
    ).toEqual(["runsc", "gvisor"]);
    const pod = (runtimeClassName?: string) => ({
      metadata: { name: "p" },
      spec: { ...copy(safePodSpec()), ...(runtimeClassName === undefined ? {} : { runtimeClassName }) },
    });
    const rule = (o: ReturnType<typeof validate>) => o.violations.filter((v) => v.policy === RULE);
    expect(
      rule(validate("kubernetes:core/v1:Pod", pod(), { preset: "gvisor" })).map((v) => v.message),
    ).toEqual([expect.stringContaining("runtimeClassName is not set; allowed: runsc, gvisor")]);
    expect(rule(validate("kubernetes:core/v1:Pod", pod("gvisor"), { preset: "gvisor" }))).toEqual([]);
    expect(
      rule(
        validate("kubernetes:core/v1:Pod", pod("kata"), {
          preset: "gvisor",
          config: { [RULE]: { allowed: ["kata"] } },
        }),
      ),
    ).toEqual([]);
  });
});

describe("scan --preset", () => {
  const dir = tempFiles({ "pod.yaml": rootPod(), "sandbox.json": JSON.stringify({ preset: "sandbox" }) });

  it("fails the same manifest only under the presets that make its faults mandatory", async () => {
    const verdict = async (args: string[]) => {
      const { code, report } = await scanJson([...args, "pod.yaml"], undefined, dir);
      const blocking = report.findings
        .filter((f) => f.level !== "advisory" && !f.unchecked)
        .map((f) => f.ruleId);
      return { code, blocking: [...new Set(blocking)].sort() };
    };
    expect(await verdict(["--preset", "baseline"])).toEqual({ code: 0, blocking: [] });
    expect(await verdict(["--preset", "restricted"])).toEqual({
      code: 1,
      blocking: ["sandbox-require-non-root"],
    });
    expect(await verdict(["--preset", "sandbox"])).toEqual({
      code: 1,
      blocking: ["sandbox-require-non-root", "sandbox-require-readonly-rootfs"],
    });
    expect(await verdict(["--config", "sandbox.json"])).toEqual(await verdict(["--preset", "sandbox"]));
    // A --preset other than the config's is refused: it would weaken the config silently.
    const both = await scan(["--config", "sandbox.json", "--preset", "baseline", "pod.yaml"], undefined, dir);
    expect(both.code).toBe(2);
    expect(both.err).toContain('preset = "sandbox" contradicts --preset baseline');
    expect(await verdict(["--config", "sandbox.json", "--preset", "sandbox"])).toEqual(
      await verdict(["--preset", "sandbox"]),
    );
  });

  it("refuses an unknown preset, as an option or in the config (exit 2)", async () => {
    const opt = await scan(["--preset", "strict", "pod.yaml"], undefined, dir);
    expect(opt.code).toBe(2);
    expect(opt.err).toContain('--preset must be one of baseline, restricted, sandbox, gvisor, not "strict"');
    const file = tempFiles({ "c.json": JSON.stringify({ preset: "strict" }), "pod.yaml": rootPod() });
    const cfg = await scan(["--config", "c.json", "pod.yaml"], undefined, file);
    expect(cfg.code).toBe(2);
    expect(cfg.err).toContain('preset = "strict": must be one of baseline, restricted, sandbox, gvisor');
  });
});

/** What the Pulumi CLI makes of a `--policy-pack-config` file for this pack: the reconciled levels, or its error. */
function engineReads(
  configs: readonly string[],
): { error?: string; validationErrors?: string[]; levels?: Record<string, string> }[] {
  const policies = packArgs().policies.map((p) => ({
    name: p.name,
    enforcementLevel: p.enforcementLevel,
    configSchema: p.configSchema,
  }));
  const answers = JSON.parse(
    runOracle("packconfig", JSON.stringify(configs.map((config) => ({ policies, config })))),
  ) as {
    error?: string;
    validationErrors?: string[];
    config?: Record<string, { enforcementLevel: string }>;
  }[];
  return answers.map((a) =>
    a.config === undefined
      ? a
      : {
          levels: Object.fromEntries(
            Object.entries(a.config)
              .filter(([k]) => ALL_IDS.includes(k))
              .map(([k, v]) => [k, v.enforcementLevel]),
          ),
        },
  );
}

const level = fc.constantFrom<EnforcementLevel>("advisory", "mandatory", "remediate", "disabled");

describe("the preset in the pack, through the Pulumi CLI's config reader", () => {
  it("is refused in scan's shorthand ({ preset }), which is why scan prints the expanded config", () => {
    expect(engineReads([JSON.stringify({ preset: "sandbox" })])).toEqual([
      { error: 'parsing enforcement level for "preset": "sandbox" is not a valid enforcement level' },
    ]);
  });

  it("gives the engine the levels scan uses, for any preset, all and per-rule levels", async () => {
    const cases = fc.sample(
      fc.record({
        preset: fc.option(fc.constantFrom(...PRESETS), { nil: undefined }),
        all: fc.option(level, { nil: undefined }),
        rules: fc.dictionary(fc.constantFrom(...ALL_IDS), level, { maxKeys: 4 }),
      }),
      { numRuns: 25, seed: 11 },
    );
    const printed: string[] = [];
    const expected: Record<string, EnforcementLevel>[] = [];
    for (const c of cases) {
      const raw = {
        ...(c.preset === undefined ? {} : { preset: c.preset }),
        ...(c.all === undefined ? {} : { all: c.all }),
        ...c.rules,
      };
      const file = tempFiles({ "c.json": JSON.stringify(raw) });
      const r = await scan(["--config", "c.json", "--print-pack-config"], undefined, file);
      expect(r.code).toBe(0);
      printed.push(r.out);
      expected.push(levelsOf(undefined, raw));
    }
    expect(engineReads(printed)).toEqual(expected.map((levels) => ({ levels })));
  }, 120_000);
});
