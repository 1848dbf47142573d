/**
 * `scan` over custom resources in their projects' documented style: each dangerous setting is caught with the
 * resource's own path; hostPath PersistentVolumes are judged with the claims that mount them; an object that may
 * create workloads the rules cannot read is listed, and fails the scan with --fail-on-unjudged (default in CI).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runScan } from "../../cli/scan";
import type { ScanReport } from "../../policy/report/model";
import { FIXTURES, ROOT } from "./helpers";

const DIR = join(FIXTURES, "carriers");

async function scanWith(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; report: ScanReport }> {
  let out = "";
  const code = await runScan(
    ["--format", "json", ...args],
    {
      out: (t) => {
        out += t;
      },
      err: () => {},
    },
    { cwd: ROOT, env },
  );
  return { code, report: JSON.parse(out) as ScanReport };
}

/** `rule path` of each violation (not notes), sorted. */
function violations(r: ScanReport, resource?: string): string[] {
  return r.findings
    .filter((f) => !f.unchecked && (resource === undefined || f.resource.name === resource))
    .map((f) => `${f.ruleId} ${f.path ?? ""}`.trim())
    .sort();
}

describe("scan judges pods wherever custom resources keep them", () => {
  it("Tekton: the step template's privileged flag and the socket volume are the task pod's", async () => {
    const { code, report } = await scanWith([join(DIR, "tekton-task.yaml")]);
    expect(code).toBe(1);
    const v = violations(report);
    expect(v).toContain("sandbox-disallow-privileged spec.steps[0]");
    expect(v).toContain("sandbox-disallow-runtime-socket spec.volumes[0]");
  });

  it("KubeVirt: a host disk under /etc and a passed-through GPU", async () => {
    const { report } = await scanWith([join(DIR, "kubevirt-vm.yaml")]);
    const v = violations(report);
    expect(v).toContain("sandbox-disallow-sensitive-host-mounts spec.template.spec.volumes[0]");
    expect(v).toContain("sandbox-disallow-devices");
    expect(report.findings.find((f) => f.ruleId === "sandbox-disallow-devices")?.message).toContain(
      "GPU nvidia.com/TU104GL_Tesla_T4",
    );
  });

  it("Knative: a public Service is an entry point and a pod; a cluster-local one is only a pod", async () => {
    const { report } = await scanWith([join(DIR, "knative-service.yaml")]);
    expect(violations(report, "helloworld-go")).toContain("sandbox-disallow-exposed-ports");
    expect(violations(report, "helloworld-go")).toContain(
      "sandbox-require-non-root spec.template.spec.containers[0]",
    );
    expect(violations(report, "backend").filter((v) => v === "sandbox-disallow-exposed-ports")).toEqual([]);
  });

  it("Spark: the driver pod on the host network, named after its role; the executors' pod is judged too", async () => {
    const { report } = await scanWith([join(DIR, "spark-pi.yaml")]);
    expect(violations(report, "spark-pi/spec.driver")).toContain(
      "sandbox-disallow-host-namespaces spec.driver.hostNetwork",
    );
    expect(violations(report, "spark-pi/spec.executor").some((v) => v.includes("hostNetwork"))).toBe(false);
    // Spark always sets a memory limit; the CPU limit is only there with coreLimit.
    const limits = report.findings
      .filter((f) => f.ruleId === "sandbox-require-resource-limits")
      .map((f) => f.message);
    expect(limits.some((m) => m.includes("memory"))).toBe(false);
    expect(limits.some((m) => m.includes("CPU"))).toBe(true);
  });

  it("a claim bound to a hostPath PersistentVolume mounts that host path; the volume itself is judged", async () => {
    const { code, report } = await scanWith([join(DIR, "host-pv.yaml")]);
    expect(code).toBe(1);
    const claims = report.findings.filter((f) => f.ruleId === "sandbox-disallow-host-path-claims");
    expect([...new Set(claims.map((f) => `${f.resource.kind} ${f.path}`))].sort()).toEqual([
      "Deployment spec.template.spec.containers[0].volumeMounts[0]",
      "PersistentVolume spec.hostPath.path",
    ]);
    const messages = claims.map((f) => f.message).join("\n");
    expect(messages).toContain("sandbox-disallow-runtime-socket: ");
    expect(messages).toContain('claim "runtime-claim" is bound to PersistentVolume "runtime"');
    expect(report.skipped.map((s) => s.kind)).toEqual(["PersistentVolumeClaim"]);
  });
});

describe("unjudged objects", () => {
  it("are listed with their kind and reason, and fail the scan in every mode", async () => {
    const { code, report } = await scanWith([join(DIR, "unjudged.yaml")]);
    expect(code).toBe(1);
    const f = report.findings.filter((x) => x.ruleId === "sandbox-disallow-unjudged-workloads");
    expect(f.map((x) => [x.level, x.resource.kind])).toEqual([["mandatory", "Runner"]]);
    expect(f[0]?.message).toContain("it names a container image at spec.runner");
    expect(report.skipped.map((s) => [s.kind, s.name])).toEqual([["ConfigMap", "settings"]]);
  });

  it("are accepted by kind with --allow-unjudged, each reported as exempted with the option as its reason", async () => {
    const { code, report } = await scanWith(["--allow-unjudged", "Runner", join(DIR, "unjudged.yaml")]);
    expect(code).toBe(0);
    const f = report.findings.filter((x) => x.ruleId === "sandbox-disallow-unjudged-workloads");
    expect(f.map((x) => x.exemption?.reason)).toEqual([
      "accepted on the command line: --allow-unjudged Runner",
    ]);
    const other = await scanWith(["--allow-unjudged", "HelmRelease", join(DIR, "unjudged.yaml")]);
    expect(other.code).toBe(1);
  });

  it("refuse an --allow-unjudged that names no kind, naming the option and the value", async () => {
    let err = "";
    const code = await runScan(["--allow-unjudged", "a/b", join(DIR, "unjudged.yaml")], {
      out: () => {},
      err: (t) => {
        err += t;
      },
    });
    expect(code).toBe(2);
    expect(err).toContain('--allow-unjudged needs a kind (letters and digits, e.g. HelmRelease), not "a/b"');
  });

  it.each([
    [[], {}, 1],
    [["--fail-on-unjudged"], {}, 1],
    [["--ci"], {}, 1],
    [[], { CI: "true" }, 1],
    [["--no-fail-on-unjudged"], { CI: "true" }, 0],
    [["--ci", "--no-fail-on-unjudged"], {}, 0],
  ] as const)("fail the scan with %j and env %j: exit %i", async (flags, env, exit) => {
    const { code } = await scanWith([...flags, join(DIR, "unjudged.yaml")], { ...env });
    expect(code).toBe(exit);
  });
});
