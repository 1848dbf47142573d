// Exit codes (0 pass, 1 a mandatory rule fails, 2 bad input), the pack config (levels, settings, `all`), and
// exemptions, which must give a reason that the report prints.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { FIXTURES, ROOT, rulesOf, scan, scanJson, tempFiles } from "./helpers";

const SAFE = `${FIXTURES}/kubernetes/task-job.yaml`;
const LIST = `${FIXTURES}/kubernetes/pods-list.yaml`;

function config(value: unknown): string {
  return join(tempFiles({ "cfg.json": JSON.stringify(value) }), "cfg.json");
}

describe("exit codes", () => {
  it("0 when no mandatory rule fails, advisory findings included", async () => {
    const dir = tempFiles({
      "pod.yaml": [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: p }",
        "spec:",
        "  restartPolicy: Never",
        "  automountServiceAccountToken: false",
        "  containers:",
        "    - name: c",
        "      image: x",
        "      resources: { limits: { cpu: 100m, memory: 64Mi } }",
        "      securityContext:",
        "        runAsNonRoot: true",
        "        runAsUser: 1000",
        "        runAsGroup: 1000",
        "        allowPrivilegeEscalation: false",
        "        seccompProfile: { type: RuntimeDefault }",
        "        capabilities: { drop: [NET_ADMIN] }",
        "",
      ].join("\n"),
    });
    const { code, report } = await scanJson([join(dir, "pod.yaml")]);
    expect(report.summary.mandatory).toBe(0);
    expect(report.summary.advisory).toBeGreaterThan(0);
    expect(code).toBe(0);
  });

  it("1 when a mandatory rule fails, in every format", async () => {
    for (const format of ["text", "json", "sarif"]) {
      expect((await scan(["--format", format, LIST])).code, format).toBe(1);
    }
  });

  it("2 on bad input: a broken file, a bad flag, no input, a bad config", async () => {
    expect((await scan([`${FIXTURES}/broken/bad-indent.yaml`])).code).toBe(2);
    expect((await scan(["--format", "xml", SAFE])).code).toBe(2);
    expect((await scan(["--frobnicate", SAFE])).code).toBe(2);
    expect((await scan([])).code).toBe(2);
    expect((await scan(["--config", "no-such.json", SAFE])).code).toBe(2);
  });

  it("text output ends with the verdict", async () => {
    expect((await scan([SAFE])).out.trimEnd().split("\n").at(-1)).toMatch(/passed: no mandatory rule fails$/);
    expect((await scan([LIST])).out.trimEnd().split("\n").at(-1)).toMatch(/FAILED: a mandatory rule fails$/);
    expect((await scan([`${FIXTURES}/broken`])).out.trimEnd().split("\n").at(-1)).toMatch(/bad input$/);
  });

  it("writes the report to --output and the verdict to standard error", async () => {
    const dir = tempFiles({});
    const r = await scan(["--format", "sarif", "--output", join(dir, "out.sarif"), LIST]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/FAILED: a mandatory rule fails/);
  });

  it("is a verb of the toolkit's CLI that needs no stack", async () => {
    let out = "";
    const code = await main(
      ["scan", "--format", "json", LIST],
      { out: (t) => (out += t), err: () => undefined },
      ROOT,
      { ...process.env, INIT_CWD: ROOT },
    );
    expect(code).toBe(1);
    expect(JSON.parse(out).resources[0].name).toBe("debug");
    let usage = "";
    await main(["help"], { out: (t) => (usage += t), err: () => undefined }, ROOT);
    expect(usage).toMatch(/^ {2}scan /m);
  });
});

describe("pack config", () => {
  it("changes enforcement levels per rule, by string or object, and `all`", async () => {
    const advisory = await scanJson([
      LIST,
      "--config",
      config({
        all: "advisory",
      }),
    ]);
    expect(advisory.code).toBe(0);
    expect(advisory.report.summary.mandatory).toBe(0);
    const raised = await scanJson([
      SAFE,
      "--config",
      config({
        all: { enforcementLevel: "advisory" },
        "sandbox-require-runtime-class": { enforcementLevel: "mandatory", allowed: ["runsc"] },
      }),
    ]);
    expect(raised.code).toBe(1);
    expect(rulesOf(raised.report, "task-1")).toEqual(["sandbox-require-runtime-class"]);
    expect(raised.report.rules.find((r) => r.id === "sandbox-require-runtime-class")?.enforcementLevel).toBe(
      "mandatory",
    );
  });

  it("disabled rules do not run", async () => {
    const { report } = await scanJson([LIST, "--config", config({ "sandbox-require-non-root": "disabled" })]);
    expect(rulesOf(report, "debug")).not.toContain("sandbox-require-non-root");
    expect(rulesOf(report, "debug")).toContain("sandbox-require-resource-limits");
  });

  it("passes rule settings as the pack's getConfig does", async () => {
    const { report } = await scanJson([
      SAFE,
      "--config",
      config({ "sandbox-require-resource-limits": { maxCpu: 0.25 } }),
    ]);
    expect(rulesOf(report, "task-1")).toEqual(["sandbox-require-resource-limits"]);
  });

  it("refuses what the pack would not take, listing every problem at once", async () => {
    const r = await scan([
      SAFE,
      "--config",
      config({
        "sandbox-no-such-rule": "mandatory",
        "sandbox-disallow-privileged": "strict",
        "sandbox-require-resource-limits": { maxCpu: "lots", colour: 1 },
      }),
    ]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toContain("sandbox-no-such-rule: not a rule of the pack");
    expect(r.err).toContain(
      'sandbox-disallow-privileged = "strict": must be one of advisory, mandatory, remediate, disabled',
    );
    expect(r.err).toContain('sandbox-require-resource-limits.maxCpu = "lots": must be a number');
    expect(r.err).toContain("sandbox-require-resource-limits.colour: not a setting of this rule");
    expect(r.err).toContain("Nothing was scanned.");
  });
});

describe("exemptions", () => {
  const rootExemption = {
    rule: "sandbox-require-non-root",
    resource: `${LIST}:Pod/debug`,
    reason: "the debug pod needs root to install tools; removed by ticket OPS-12",
  };

  it("with a reason: the finding is kept, marked exempted with the reason, and no longer fails the scan", async () => {
    const cfg = config({
      exemptions: [rootExemption],
      "sandbox-require-resource-limits": {
        exemptions: [{ resource: "Pod/*", reason: "limits come from the namespace's LimitRange" }],
      },
      "sandbox-require-drop-net-admin": { exemptions: [{ resource: "*debug", reason: "debug only" }] },
      "sandbox-disallow-privilege-escalation": {
        exemptions: [{ resource: "Pod/debug", reason: "debug only" }],
      },
      "sandbox-disallow-unconfined-seccomp": {
        exemptions: [{ resource: "Pod/debug", reason: "debug only" }],
      },
    });
    const { code, report } = await scanJson([LIST, "--config", cfg]);
    const exempted = report.findings.filter((f) => f.exemption !== undefined);
    expect(exempted.map((f) => `${f.ruleId}: ${f.exemption?.reason}`).sort()).toEqual([
      "sandbox-disallow-privilege-escalation: debug only",
      "sandbox-disallow-unconfined-seccomp: debug only",
      "sandbox-require-drop-net-admin: debug only",
      `sandbox-require-non-root: ${rootExemption.reason}`,
      "sandbox-require-resource-limits: limits come from the namespace's LimitRange",
      "sandbox-require-resource-limits: limits come from the namespace's LimitRange",
    ]);
    expect(report.summary.mandatory).toBe(0);
    expect(report.summary.exempted).toBe(6);
    expect(code).toBe(0);
    const text = (await scan([LIST, "--config", cfg])).out;
    expect(text).toContain(`exempted: ${rootExemption.reason}`);
  });

  it("an exemption for another resource or rule covers nothing", async () => {
    const { code, report } = await scanJson([
      LIST,
      "--config",
      config({
        exemptions: [
          { ...rootExemption, resource: "other.yaml:Pod/debug" },
          { ...rootExemption, rule: "sandbox-disallow-privileged" },
        ],
      }),
    ]);
    expect(report.summary.exempted).toBe(0);
    expect(code).toBe(1);
  });

  it("exempts Pulumi resources by URN", async () => {
    const { report } = await scanJson([
      `${FIXTURES}/pulumi/preview.json`,
      "--config",
      config({
        exemptions: [
          {
            rule: "sandbox-require-non-root",
            resource: "urn:pulumi:dev::sandbox::kubernetes:core/v1:Pod::debug",
            reason: "reviewed",
          },
        ],
      }),
    ]);
    const f = report.findings.find(
      (x) => x.ruleId === "sandbox-require-non-root" && x.resource.name === "debug",
    );
    expect(f?.exemption).toEqual({
      reason: "reviewed",
      resource: "urn:pulumi:dev::sandbox::kubernetes:core/v1:Pod::debug",
    });
  });

  it.each([
    ["no reason", { rule: "sandbox-require-non-root", resource: "Pod/debug" }],
    ["an empty reason", { rule: "sandbox-require-non-root", resource: "Pod/debug", reason: "  " }],
  ])("without a reason (%s) is bad input that names the exemption", async (_, exemption) => {
    const r = await scan([LIST, "--config", config({ exemptions: [exemption] })]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "exemptions[0] (sandbox-require-non-root on Pod/debug): an exemption needs a reason, which the report prints",
    );
  });

  it("a per-rule exemption without a reason is refused too, as is one for an unknown rule", async () => {
    const r = await scan([
      LIST,
      "--config",
      config({
        "sandbox-require-non-root": { exemptions: [{ resource: "Pod/debug" }] },
        exemptions: [{ rule: "sandbox-nope", resource: "x", reason: "y" }],
      }),
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "sandbox-require-non-root.exemptions[0] (sandbox-require-non-root on Pod/debug): an exemption needs a reason",
    );
    expect(r.err).toContain(
      'exemptions[0] (sandbox-nope on x): rule "sandbox-nope" is not a rule of the pack',
    );
  });
});
